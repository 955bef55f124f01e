"""Atomic writes: all or nothing, deterministic bytes, ordinary permissions."""

from __future__ import annotations

import os
import stat

import pytest

from contrastgen.errors import InputError
from contrastgen.files.atomic import atomic_dir
from contrastgen.jsonio import dumps, read_json, read_jsonl, write_json


def test_dumps_is_deterministic():
    assert dumps({"b": 1, "a": [1, 2]}) == dumps({"a": [1, 2], "b": 1}) == b'{"a":[1,2],"b":1}\n'


def test_atomic_file_has_ordinary_permissions(tmp_path):
    write_json(tmp_path / "x.json", {"a": 1})
    with atomic_dir(tmp_path / "d") as d:
        write_json(d / "y.json", {})
    old = os.umask(0o022)
    os.umask(old)
    if old & 0o044:  # a private umask rightly gives private files
        pytest.skip("this process runs with a umask that hides files from others")
    assert stat.S_IMODE((tmp_path / "x.json").stat().st_mode) & 0o044 == 0o044
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) & 0o055 == 0o055


def test_failed_write_leaves_nothing(tmp_path):
    class Boom(Exception):
        pass

    with pytest.raises(Boom), atomic_dir(tmp_path / "out") as d:
        write_json(d / "a.json", {})
        raise Boom
    assert list(tmp_path.iterdir()) == []


def test_atomic_dir_replaces_only_on_success(tmp_path):
    with atomic_dir(tmp_path / "out") as d:
        write_json(d / "v.json", 1)
    with pytest.raises(RuntimeError), atomic_dir(tmp_path / "out") as d:
        write_json(d / "v.json", 2)
        raise RuntimeError
    assert read_json(tmp_path / "out" / "v.json") == 1
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


@pytest.mark.parametrize("content,needle", [(b"", "empty"), (b"{", "malformed"), (b"  \n", "empty")])
def test_read_json_errors_name_the_file(tmp_path, content, needle):
    p = tmp_path / "bad.json"
    p.write_bytes(content)
    with pytest.raises(InputError, match=needle) as e:
        read_json(p)
    assert "bad.json" in str(e.value)


def test_read_jsonl_names_the_line(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n\n{oops\n')
    with pytest.raises(InputError, match="line 3"):
        list(read_jsonl(p))
