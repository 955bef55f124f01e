"""Fixtures for the verifier's tests: the hand-built scene, fixed rules, fresh valid cases."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from verify_cases import SUFFIX, TEMPLATE, VALID, as_record, make_graph

from contrastgen.verify_rules import VerifyRules


@pytest.fixture
def graph() -> dict[str, Any]:
    return make_graph()


@pytest.fixture
def rules() -> VerifyRules:
    """Rules fixed here, so the tests do not depend on files other engineers are editing."""
    return VerifyRules(
        opposites={"to the left of": "to the right of", "to the right of": "to the left of",
                   "above": "below", "below": "above"},
        symmetric=frozenset({"near", "next to"}),
        colors=frozenset({"red", "white", "brown", "black", "blue"}),
        unannotated_prone=frozenset({"sky", "shirt", "hand"}),
        unannotated_prone_source="test",
        template_suffixes={TEMPLATE: SUFFIX, "is_the_x_rel_the_y__object": "o"},
    )


@pytest.fixture
def valid() -> dict[str, tuple[str, dict]]:
    """A fresh deep copy per test, so tampering never leaks between tests."""
    return copy.deepcopy(VALID)


@pytest.fixture
def record():
    return as_record
