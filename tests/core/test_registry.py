"""The one plug-in mechanism: names given once, in order, and an unknown name is the caller's
input error naming the choices."""

from __future__ import annotations

import pytest

from contrastgen.errors import InputError
from contrastgen.registry import Registry


def test_items_keep_their_order_and_a_name_is_given_once():
    reg: Registry[int] = Registry("thing")
    reg.add("b", 2)

    @reg.register("a")
    def one() -> int:
        return 1

    assert reg.names() == ("b", "a") and reg["a"] is one and "b" in reg and len(reg) == 2
    with pytest.raises(ValueError, match="two things are named 'b'"):
        reg.add("b", 3)
    assert reg.remove("b") == 2 and reg.names() == ("a",)


def test_an_unknown_name_is_an_input_error_naming_the_choices():
    reg: Registry[int] = Registry("export format")
    reg.add("parquet", 1)
    reg.add("jsonl", 2)
    with pytest.raises(InputError, match=r"unknown export format 'csv' \(one of parquet, jsonl\)"):
        reg["csv"]
