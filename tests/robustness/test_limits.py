"""The input limits: nesting, string, value and record sizes, held by a scan of the raw bytes
before any parser runs, in bounded memory, with the place of the first excess named."""

from __future__ import annotations

import json
import tracemalloc
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contrastgen.datasets.streaming import first_record, stream_records
from contrastgen.errors import InputError
from contrastgen.files.limits import DEPTH_ENV, RECORD_ENV, JsonLimits, StructureScan
from contrastgen.jsonio import read_json, read_jsonl


def reference(data: bytes, bounds: JsonLimits, *, lines: bool, record_depth: int | None) -> tuple[bool, Counter]:
    """A byte-at-a-time reading of the same rules: (whether a limit is passed, keys by depth).
    Nesting past the depth limit; a string, a stretch outside strings between two structural
    bytes (or a string's end), a record or a line longer than the size limit."""
    limit = bounds.max_record_bytes
    depth = 0
    in_string = escape = False
    string_start = line_start = last_mark = 0
    record_start = None
    keys: Counter = Counter()
    over = False
    for i, c in enumerate(data):
        ch = chr(c)
        if lines and ch == "\n":
            over |= i - line_start > limit or i - last_mark > limit
            depth, in_string, escape, line_start, last_mark = 0, False, False, i + 1, i
            continue
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
                over |= i - string_start - 1 > limit
                last_mark = i  # a stretch outside strings starts at a closing quote
            continue
        if ch == "\\":
            escape = True
            in_string = True  # a backslash outside a string does not occur in valid JSON
            continue
        if ch in '"{}[]:,\n':
            over |= i - last_mark > limit
            last_mark = i
        if ch == '"':
            in_string, string_start = True, i
        elif ch in "{[":
            depth += 1
            over |= depth > bounds.max_depth
            if record_depth is not None and depth == record_depth + 1:
                record_start = i
        elif ch in "}]":
            depth -= 1
            if record_depth is not None and depth == record_depth and record_start is not None:
                over |= i - record_start + 1 > limit
                record_start = None
        elif ch == ":":
            keys[depth] += 1
    if lines:
        over |= len(data) - line_start > limit
    return over, keys


_text = st.text(alphabet=st.sampled_from(list('ab"\\{}[]:,é\t') + ["\u2028", "x"]), max_size=12)
_values = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | _text,
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
                       max_leaves=25)


def _scan(data: bytes, bounds: JsonLimits, cuts: list[int], **kinds) -> tuple[bool, Counter]:
    scan = StructureScan("x.json", bounds=bounds, **kinds)
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    try:
        for a, b in zip(points, points[1:], strict=False):
            scan.feed(data[a:b])
    except InputError:
        return True, Counter()
    return False, Counter({d: int(n) for d, n in enumerate(scan.keys_at_depth) if n})


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(value=st.dictionaries(_text, _values, max_size=5) | st.lists(_values, max_size=5),
       indent=st.sampled_from([None, 1, 2]), depth=st.integers(1, 6), size=st.integers(1, 60),
       cuts=st.lists(st.integers(0, 10_000), max_size=6))
def test_the_scan_agrees_with_a_byte_at_a_time_reading_however_the_blocks_fall(value, indent, depth, size, cuts):
    data = json.dumps(value, indent=indent, ensure_ascii=False).encode()
    bounds = JsonLimits(max_depth=depth, max_record_bytes=size)
    over, keys = reference(data, bounds, lines=False, record_depth=1)
    got_over, got_keys = _scan(data, bounds, cuts, record_depth=1)
    assert got_over == over
    if not over:
        assert got_keys == keys


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.lists(_values, min_size=1, max_size=5), depth=st.integers(1, 6), size=st.integers(1, 80),
       cuts=st.lists(st.integers(0, 10_000), max_size=6))
def test_the_scan_of_json_lines_agrees_too(rows, depth, size, cuts):
    data = b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in rows)
    bounds = JsonLimits(max_depth=depth, max_record_bytes=size)
    over, _ = reference(data, bounds, lines=True, record_depth=None)
    assert _scan(data, bounds, cuts, lines=True)[0] == over


def _deep_question_file(path, levels: int) -> None:
    path.write_bytes(b'{"q1": {"question": "Is it red?", "imageId": "1", "x": ' + b"[" * levels + b"]" * levels
                     + b'}, "q2": {"question": "Is it blue?", "imageId": "1"}}')


@pytest.mark.parametrize("levels", [65, 1_100, 100_000])
def test_deep_nesting_is_refused_by_every_reader_in_bounded_memory(tmp_path, levels):
    path = tmp_path / "questions.json"
    _deep_question_file(path, levels)
    tracemalloc.start()
    try:
        for read in (read_json, lambda p: list(stream_records(p, "question"))):
            with pytest.raises(InputError, match=r"questions\.json: JSON nested deeper than 64 levels at line 1, "
                                                 r"column 118 \(the limit is set by CONTRASTGEN_JSON_MAX_DEPTH\)"):
                read(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20  # a 200 KB file: never the gigabytes a parser would build
    assert first_record(path) is None or levels == 65  # the format sniffer does not recurse into it


def test_a_line_without_an_end_is_refused_at_the_record_limit(tmp_path):
    path = tmp_path / "sets.jsonl"
    with path.open("wb") as fh:
        fh.write(b'{"question_id": "a"}\n{"question": "')
        fh.write(b"x" * (20 << 20))
    with pytest.raises(InputError, match=r"sets\.jsonl: record line 2: a record longer than 16 MiB at column 1"):
        list(read_jsonl(path))


def test_a_device_that_never_ends_is_refused_not_read_to_the_end(tmp_path):
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    with pytest.raises(InputError, match="a value longer than 16 MiB at line 1, column 1"):
        read_json(tmp_path / "zero.json")


def test_the_limits_come_from_the_environment_and_bad_values_are_named():
    assert JsonLimits.from_env({DEPTH_ENV: "8", RECORD_ENV: "2"}) == JsonLimits(8, 2 << 20)
    assert JsonLimits.from_env({}) == JsonLimits()
    for env, needle in (({DEPTH_ENV: "deep"}, "expected a whole number"), ({RECORD_ENV: "0"}, "at least 1"),
                        ({DEPTH_ENV: "500"}, "at most 200")):
        with pytest.raises(InputError, match=needle):
            JsonLimits.from_env(env)


def test_a_tighter_depth_set_in_the_environment_holds_for_the_command_line(tmp_path, sample):
    import subprocess
    import sys
    questions, _ = sample
    done = subprocess.run([sys.executable, "-m", "contrastgen", "match", str(questions)], capture_output=True,
                          text=True, env={**__import__("os").environ, DEPTH_ENV: "3"})
    assert done.returncode == 2
    assert "nested deeper than 3 levels" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("reader", ["whole", "streamed"])
def test_an_object_id_given_twice_inside_a_scene_graph_is_refused(tmp_path, reader):
    path = tmp_path / "graphs.json"
    obj = '{"name": "cat", "x": 1, "y": 1, "w": 2, "h": 2, "attributes": [], "relations": []}'
    path.write_text('{"1": {"width": 10, "height": 10, "objects": {"7": ' + obj + ', "7": ' + obj + "}}}")
    with pytest.raises(InputError, match=r"graphs\.json.*key '7' is given twice in 1\.objects \(its keys number "
                                         r"1 and 2\)"):
        read_json(path) if reader == "whole" else list(stream_records(path, "image"))
