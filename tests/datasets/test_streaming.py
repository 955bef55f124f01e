"""The piecewise orjson reader gives exactly what ijson gives: the same records, in the same order,
duplicates included, and the same error on a broken file, whatever the formatting and content."""

from __future__ import annotations

import json
from pathlib import Path

import ijson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contrastgen.datasets import streaming
from contrastgen.datasets.streaming import stream_records, top_level_keys
from contrastgen.errors import InputError
from contrastgen.files import limits as limits_module
from contrastgen.files.limits import JsonLimits, scan_file
from contrastgen.jsonio import read_json

SAMPLE = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "gqa" / "val_balanced_questions_sample.json"


def _ijson(path: Path) -> list:
    with path.open("rb") as fh:
        return [(str(k), v) for k, v in ijson.kvitems(fh, "", use_float=True)]


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of a few records, so a small file is cut many times."""
    monkeypatch.setattr(streaming, "PIECE_BYTES", 48)
    monkeypatch.setattr(streaming, "_BLOCK_BYTES", 100)


# strings full of what could fool a cut or a count: braces, colons, quotes, escapes, non-ASCII
_tricky = st.text(alphabet=st.sampled_from(list('ab {}[]:,"\\/\n\té€𝄞')), max_size=12)
_leaf = st.none() | st.booleans() | st.integers(-2**63 + 1, 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False) | _tricky
_value = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_tricky, inner, max_size=4),
                      max_leaves=12)
_records = st.lists(st.tuples(_tricky, st.dictionaries(_tricky, _value, max_size=4) | _value), max_size=25)


# json's layouts: compact, its default separators (how GQA's own files are written), indented
_LAYOUTS = {"compact": {"separators": (",", ":")}, "default": {}, "indented": {"indent": 4}}


def _write(path: Path, pairs: list, layout: str, ensure_ascii: bool) -> None:
    """A top-level object written in one of json's layouts, duplicate keys kept as given."""
    options = {**_LAYOUTS[layout], "ensure_ascii": ensure_ascii}
    colon, comma = (":", ",") if layout == "compact" else (": ", ",\n  " if layout == "indented" else ", ")
    members = [json.dumps(k, **options) + colon + json.dumps(v, **options) for k, v in pairs]
    path.write_text("\n {" + comma.join(members) + "}\n", encoding="utf-8")


@settings(max_examples=150, deadline=None)
@given(pairs=_records, layout=st.sampled_from(sorted(_LAYOUTS)), ensure_ascii=st.booleans())
def test_records_equal_ijsons_for_any_content_and_formatting(tmp_path_factory, pairs, layout, ensure_ascii):
    path = tmp_path_factory.mktemp("s") / "records.json"
    _write(path, pairs, layout, ensure_ascii)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(streaming, "PIECE_BYTES", 40)
        mp.setattr(streaming, "_BLOCK_BYTES", 64)
        got = list(stream_records(path, "question"))
    assert got == _ijson(path)
    # a float that equals an int compares equal, so types are checked too
    assert [type(v) for _, v in got] == [type(v) for _, v in _ijson(path)]


def test_a_key_given_twice_in_one_piece_is_given_twice(tmp_path):
    path = tmp_path / "q.json"
    _write(path, [("q1", {"imageId": "1"}), ("q2", {"imageId": "2"}), ("q1", {"imageId": "3"})], "compact", True)
    assert path.stat().st_size < streaming.PIECE_BYTES  # one piece: orjson alone would merge them
    assert [k for k, _ in stream_records(path, "question")] == ["q1", "q2", "q1"]


def _read_without_ijson(path: Path, monkeypatch) -> tuple[list, int]:
    """The file's records, failing if any is read by ijson, and how many pieces orjson parsed."""
    parsed = []
    real_parse = streaming._parse
    monkeypatch.setattr(streaming, "_parse", lambda doc, members, inner_ids: parsed.append(
        real_parse(doc, members, inner_ids)) or parsed[-1])
    monkeypatch.setattr(streaming, "_ijson_records", lambda *a, **k: pytest.fail("fell back to ijson"))
    return list(stream_records(path, "question")), sum(records is not None for records in parsed)


def test_many_pieces_are_cut_and_each_is_parsed_by_orjson(tmp_path, small_pieces, monkeypatch):
    pairs = [(f"q{i}", {"imageId": str(i), "text": "{ not a brace } : ,", "n": [i, {"d": i / 2}]})
             for i in range(300)]
    path = tmp_path / "q.json"
    _write(path, pairs, "compact", True)
    records, pieces = _read_without_ijson(path, monkeypatch)
    assert records == pairs and pieces > 50


def test_a_brace_inside_a_string_at_a_cut_is_recut_exactly(tmp_path, small_pieces, monkeypatch):
    # after "}" the raw count of braces is one short, so it takes the end of "inner", inside the
    # record, for the top level: that piece does not parse, and the exact count cuts it again
    pairs = [(f"q{i}", {"text": "}" if i % 3 == 0 else "x", "inner": {"a": i}, "z": 1}) for i in range(60)]
    path = tmp_path / "q.json"
    _write(path, pairs, "compact", True)
    records, pieces = _read_without_ijson(path, monkeypatch)
    assert records == pairs and pieces > 20


def test_an_opening_brace_inside_a_string_does_not_stop_the_cuts(tmp_path, small_pieces, monkeypatch):
    # after "{" the raw count never comes back to the top level; past a few pieces' worth the
    # exact count cuts instead, rather than buffering the rest of the file
    # (escaped quotes around it too: taken for ends of strings, they would leave the brace outside)
    texts = ["{", 'say "{" now', "x", "x", "x", "x", "x", "x", "x", "x"]
    pairs = [(f"q{i}", {"text": texts[i % 10], "inner": {"a": i}}) for i in range(200)]
    path = tmp_path / "q.json"
    _write(path, pairs, "compact", True)
    exact = []
    real_cut = streaming._exact_cut
    monkeypatch.setattr(streaming, "_exact_cut", lambda buffer, start: exact.append(real_cut(buffer, start)) or exact[-1])
    records, _ = _read_without_ijson(path, monkeypatch)
    assert records == pairs and sum(cut is not None for cut in exact) > 10


def test_what_orjson_refuses_falls_back_to_ijson_with_nothing_lost_or_repeated(tmp_path, small_pieces):
    # a lone high surrogate: orjson refuses it, ijson would read it; the careful path refuses it
    # where it is, after every record before it, each given once
    path = tmp_path / "q.json"
    lone = "\\ud800"
    path.write_text("{" + ",".join(f'"q{i}": {{"t": "{lone if i == 40 else i}"}}' for i in range(80)) + "}")
    got = []
    with pytest.raises(InputError, match=r"q\.json: malformed JSON in question q40: a string holds a lone surrogate"):
        for record in stream_records(path, "question"):
            got.append(record)
    assert got == _ijson(path)[:40] and [k for k, _ in got] == [f"q{i}" for i in range(40)]


@pytest.mark.parametrize("where", ['"t": "a\\ud800b"', '"\\udbff": 1', '"t": ["ok", {"u": "\\ud83d"}]'])
def test_a_lone_high_surrogate_is_refused_as_the_whole_file_reader_refuses_it(tmp_path, where):
    path = tmp_path / "g.json"
    path.write_text('{"1": {"width": 10}, "2": {' + where + '}}')
    with pytest.raises(InputError, match=r"g\.json: malformed JSON in image 2: a string holds a lone surrogate"):
        list(stream_records(path, "image"))
    with pytest.raises(InputError, match=r"g\.json"):
        read_json(path)


def test_a_surrogate_pair_is_text(tmp_path):
    path = tmp_path / "q.json"
    path.write_text('{"a": {"t": "\\ud83d\\ude00"}, "b": {"t": "\u00e9"}}', encoding="utf-8")
    assert list(stream_records(path, "question")) == [("a", {"t": "\U0001F600"}), ("b", {"t": "\u00e9"})]


@pytest.mark.parametrize("lone", ["\\udc00", "\\udfff"])
def test_a_lone_low_surrogate_that_ijson_cannot_decode_is_a_located_input_error(tmp_path, small_pieces, lone):
    # ijson's C backend turns a lone low surrogate into bytes it then fails to decode as UTF-8
    path = tmp_path / "g.json"
    path.write_text('{"1": {"width": 10, "location": "ok"}, "2": {"location": "a' + lone + '"}}')
    with pytest.raises(InputError, match=r"g\.json: malformed JSON in image 2: a string holds a lone surrogate"):
        list(stream_records(path, "image"))


def test_integers_of_64_bits_and_more_are_read_where_ijson_refused_the_file(tmp_path):
    path = tmp_path / "q.json"
    path.write_text('{"a": {"n": 9223372036854775808}, "b": {"n": -9223372036854775808}}')
    with pytest.raises(ijson.JSONError, match="integer overflow"):
        _ijson(path)
    assert list(stream_records(path, "question")) == [("a", {"n": 2**63}), ("b", {"n": -2**63})]


def test_a_record_larger_than_the_limit_is_refused_where_it_starts(tmp_path, monkeypatch):
    tight = JsonLimits(max_record_bytes=1 << 20)
    monkeypatch.setattr(streaming, "limits", lambda: tight)
    monkeypatch.setattr(limits_module, "limits", lambda: tight)
    pairs = [("a", {"x": 1}), ("big", {"list": [{"v": i} for i in range(150_000)]}), ("b", {"x": 2})]
    path = tmp_path / "q.json"
    _write(path, pairs, "compact", True)
    with pytest.raises(InputError, match=r"q\.json: a record longer than 1 MiB at line 2, column 21 "):
        list(stream_records(path, "question"))


@pytest.mark.parametrize("tail", [',"q9": {"imageId": ', ',"q9" {"x": 1}}', ',"q9": {"x": 1}} trailing', '}}'])
def test_a_broken_file_raises_what_ijson_alone_raises(tmp_path, small_pieces, tail):
    pairs = [(f"q{i}", {"imageId": str(i), "text": "x" * 20}) for i in range(30)]
    path = tmp_path / "q.json"
    path.write_text("{" + ",".join(f'"{k}": {json.dumps(v)}' for k, v in pairs) + tail)
    try:
        expected = list(streaming._ijson_records(path.open("rb"), path, "question", skip=0,
                                                 scan=scan_file(path.open("rb"), str(path))))
    except InputError as exc:
        expected = exc
    if isinstance(expected, InputError):
        with pytest.raises(InputError) as err:
            list(stream_records(path, "question"))
        assert str(err.value) == str(expected) and "malformed JSON after question q" in str(err.value)
    else:
        assert list(stream_records(path, "question")) == expected


@pytest.mark.parametrize(("members", "count"), [
    ('', 0),
    ('"a": 1', 1),
    ('"a": {"b": 1, "c": [1, {"d": 2}]}, "e": null', 2),
    ('"a": 1, "a": 2', 2),
    ('"a:{": "}:\\"", "b": ["x:", "\\\\"], "c": {}', 3),
    ('"k" : { "x" : "\\u007b" } , "l" : [ ] ', 2),
])
def test_top_level_keys_counts_keys_outside_strings_at_depth_zero(members, count):
    assert top_level_keys(members.encode()) == count


@pytest.mark.skipif(not SAMPLE.exists(), reason="the shared GQA sample is not on this machine")
def test_real_gqa_questions_read_as_ijson_reads_them(small_pieces, monkeypatch):
    monkeypatch.setattr(streaming, "PIECE_BYTES", 4096)
    monkeypatch.setattr(streaming, "_BLOCK_BYTES", 10000)
    records, pieces = _read_without_ijson(SAMPLE, monkeypatch)
    assert records == _ijson(SAMPLE) and pieces > 100
