"""The hostile-input matrix: every command that reads files, given malformed, deeply nested,
huge, duplicated and mistyped inputs and out-of-range option values, each run as its own process
with its memory capped.

Every variant says what it makes: an input malformed by its format's own rules (JSON, JSON
lines, CSV/TSV, the GQA, CLEVR, contrast-set, caption, manifest and crowd schemas as docs/ define
them, the input limits of docs/robustness.md; a file that cannot be read at all; an option value
outside what the option's --help allows, or not finite), which a command must refuse; or an input
that is still valid (an optional field deleted, a free-text answer that looks like JSON, a header
with no rows). Each run is then judged:

- clean: a malformed input refused with exit 2, no traceback, and a one-line error that names the
  file (or the option) it is about (for `verify`, also exit 1 with its report of failed checks);
- refused-valid: the same for a valid input (a valid file the command has nothing to do with,
  such as a predictions file with no rows, or a --sample larger than the set);
- unlocated: exit 2 and no traceback, but the error names neither the file nor the option;
- accepted-valid: exit 0 on a valid input;
- wrongly-accepted: exit 0 on a malformed input;
- crashed: a traceback, or any other exit (1, killed by the memory cap, a signal);
- hung: still running at the timeout;
- partial: the run failed and the output path no longer holds exactly the old result placed
  there before the run, or something is left beside it or in the run's private TMPDIR.

The HTTP service is run once (capped the same way) and given hostile requests: a 4xx with a JSON
body is clean, a 5xx, a dropped connection or a traceback in its log is a crash, no answer within
the timeout is a hang, a 2xx wrongly-accepted.

    python benchmarks/fuzz_inputs.py                  # the whole matrix
    python benchmarks/fuzz_inputs.py --only generate,view --jobs 2 --report out/fuzz.json
    python benchmarks/fuzz_inputs.py --variants surrogate,1e400,-- --list     # count what would run
    python benchmarks/fuzz_inputs.py --table out/a.json out/b.json            # one table of several runs

Prints tried / clean / refused-valid / unlocated / accepted-valid / wrongly-accepted / crashed /
hung / partial, overall and per command.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import ctypes
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "contrastgen" / "data" / "sample"
CLEVR_SAMPLE = REPO / "contrastgen" / "data" / "sample_clevr"
VQAVS = REPO.parent / "shared" / "data" / "vqa-vs"
CONTRASTGEN = [sys.executable, "-m", "contrastgen"]
OLD = b"old result\n"
_PR_CAPBSET_DROP, _CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 24, 1, 2

# --- hostile variants of one file ------------------------------------------------------------

Mutation = Callable[[Path, Path], Path]  # (valid input, where to write) -> the path to pass


@dataclass(frozen=True)
class Variant:
    """One hostile variant and the judgement of what it makes: `malformed` when the file breaks
    its format's own rules (JSON, JSON lines, CSV/TSV, the schemas docs/ define, the input limits
    of docs/robustness.md) or cannot be read at all, so a command must refuse it; otherwise the
    input is still valid and a command may read it (exit 0 is then right)."""

    make: Mutation
    malformed: bool = True


def _dump(obj) -> bytes:
    return json.dumps(obj).encode()


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def _first(data):
    """(container, key) of the first record of a parsed input: an object's first value, a list's
    first item, or the first item of the one list a wrapper object holds (CLEVR, VQA files)."""
    if isinstance(data, dict):
        lists = [k for k, v in data.items() if isinstance(v, list) and v and isinstance(v[0], dict)]
        if len(lists) == 1 and len(data) <= 3:
            return data[lists[0]], 0
        return data, next(iter(data))
    return data, 0


def _load(src: Path):
    if src.suffix == ".jsonl":
        return [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    return json.loads(src.read_bytes())


def _save(dest: Path, data, jsonl: bool) -> Path:
    if jsonl:
        dest.write_bytes(b"".join(_dump(r) + b"\n" for r in data))
    else:
        dest.write_bytes(_dump(data))
    return dest


def _record_edit(edit: Callable[[dict], bool | None]) -> Mutation:
    """A variant that changes the first record (a dict) with `edit`."""
    def make(src: Path, dest: Path) -> Path:
        data = _load(src)
        one_scene = isinstance(data, dict) and "image_filename" in data and isinstance(data.get("objects"), list)
        container, key = ([data], 0) if one_scene else _first(data)  # a CLEVR scene file is its one record
        record = container[key]
        if isinstance(record, dict):
            applied = edit(record)
        else:
            container[key] = {"x": record}
            applied = edit(container[key])
        if applied is False:
            raise ValueError("the record has no such field")
        _save(dest, data, src.suffix == ".jsonl")
        dest.write_bytes(dest.read_bytes().replace(_dump(_TOO_LARGE), b"1e400"))
        return dest
    return make


def _raw(text: bytes) -> Mutation:
    def make(src: Path, dest: Path) -> Path:
        dest.write_bytes(text)
        return dest
    return make


def _splice_first_record(fragment: bytes) -> Mutation:
    """Insert `"x": <fragment>,` as the first member of the first record, or of the top-level
    object when its records are not objects (a predictions file), textually (for what
    `json.dumps` cannot write: NaN, lone surrogates, invalid UTF-8, duplicate keys)."""
    def make(src: Path, dest: Path) -> Path:
        data = src.read_bytes()
        if src.suffix == ".jsonl" or data.lstrip()[:1] == b"[":
            opener = data.find(b"{")
        else:
            top = data.find(b"{")
            inner = data.find(b"{", top + 1)
            opener = inner if inner >= 0 else top
        if opener < 0:
            raise ValueError("no object to put a member in")
        dest.write_bytes(data[:opener + 1] + b'"x": ' + fragment + b", " + data[opener + 1:])
        return dest
    return make


def _truncated(src: Path, dest: Path) -> Path:
    data = src.read_bytes()
    dest.write_bytes(data[: len(data) // 2])
    return dest


def _wrong_top(src: Path, dest: Path) -> Path:
    data = _load(src)
    if src.suffix == ".jsonl":
        dest.write_bytes(_dump(data))  # one JSON list where lines were expected
        return dest
    flipped = list(data.values()) if isinstance(data, dict) else {str(i): v for i, v in enumerate(data)}
    dest.write_bytes(_dump(flipped))
    return dest


def _duplicate_record(src: Path, dest: Path) -> Path:
    """The first record given twice (a repeated key, or a repeated list item / line)."""
    data = src.read_bytes()
    if src.suffix == ".jsonl":
        first = data.splitlines(keepends=True)[0]
        dest.write_bytes(data + first)
        return dest
    parsed = json.loads(data)
    container, key = _first(parsed)
    if isinstance(container, list):
        container.append(container[0])
        dest.write_bytes(_dump(parsed))
        return dest
    text = data.rstrip()
    member = _dump({key: container[key]})[1:-1]
    dest.write_bytes(text[:-1] + b", " + member + b"}")
    return dest


def _record_is(value) -> Mutation:
    def make(src: Path, dest: Path) -> Path:
        data = _load(src)
        container, key = _first(data)
        container[key] = value
        return _save(dest, data, src.suffix == ".jsonl")
    return make


def _directory(src: Path, dest: Path) -> Path:
    dest.mkdir()
    return dest


def _missing(src: Path, dest: Path) -> Path:
    return dest


def _symlink_loop(src: Path, dest: Path) -> Path:
    dest.symlink_to(dest)
    return dest


def _dev_zero(src: Path, dest: Path) -> Path:
    dest.symlink_to("/dev/zero")
    return dest


def _unreadable(src: Path, dest: Path) -> Path:
    shutil.copyfile(src, dest)
    dest.chmod(0)
    return dest


GENERIC: dict[str, Variant] = {
    "empty": Variant(_raw(b"")),
    "garbage": Variant(_raw(bytes(range(256)) * 4)),
    "truncated": Variant(_truncated),
    "top_scalar": Variant(_raw(b"42")),
    "wrong_top": Variant(_wrong_top),
    "deep_top_100k": Variant(_raw(_deep(100_000).encode())),
    "deep_record_1100": Variant(_splice_first_record(_deep(1_100).encode())),
    "deep_record_100k": Variant(_splice_first_record(_deep(100_000).encode())),
    "huge_string_24m": Variant(_splice_first_record(b'"' + b"a" * (24 << 20) + b'"')),
    "lone_surrogate": Variant(_splice_first_record(b'"\\ud800"')),
    "lone_low_surrogate": Variant(_splice_first_record(b'"a\\udc00"')),
    "invalid_utf8": Variant(_splice_first_record(b'"\xff\xfe\xc3"')),
    "nan": Variant(_splice_first_record(b"NaN")),
    "duplicate_record": Variant(_duplicate_record),
    "record_is_string": Variant(_record_is("x")),
    "directory": Variant(_directory),
    "missing": Variant(_missing),
    "symlink_loop": Variant(_symlink_loop),
    "dev_zero": Variant(_dev_zero),
    "unreadable": Variant(_unreadable),
}


def _set(path: tuple, value) -> Callable[[dict], bool]:
    """An edit of the field at `path` in a record (a list on the way stands for its first item,
    "*" for an object's first value, an int for that item of a list); False when the record has
    no such place, so the variant is skipped rather than run unchanged."""
    def first(target):
        while isinstance(target, list) and target:
            target = target[0]
        return target

    def edit(record: dict) -> bool:
        target = record
        for key in path[:-1]:
            if isinstance(key, int):
                target = target[key] if isinstance(target, list) and len(target) > key else None
                continue
            target = first(target)
            if not isinstance(target, dict):
                return False
            target = target.get(key) if key != "*" else next(iter(target.values()), None)
        last = path[-1]
        if isinstance(last, int):
            if not (isinstance(target, list) and len(target) > last):
                return False
            if value is _DELETE:
                del target[last]
            else:
                target[last] = value
            return True
        target = first(target)
        if not isinstance(target, dict) or last not in target:
            return False  # a field the record does not give: setting it would add an unread one
        if value is _DELETE:
            target.pop(last)
        else:
            target[last] = value
        return True
    return edit


_DELETE = object()
# a number json.dumps cannot write: the placeholder string is replaced by the bare numeral
_TOO_LARGE = "__contrastgen_fuzz_1e400__"


@dataclass(frozen=True)
class Field:
    """A field a command reads, as its format defines it: the type JSON must give, whether the
    record must have it, whether null stands for "not given", and a number's documented bounds."""

    path: tuple
    type: str  # "str", "int", "num", "list", "dict", "str|int"
    required: bool = True
    nullable: bool = False
    lo: float | None = None
    hi: float | None = None
    empty_ok: bool = True  # for an object: may it be {} (an image without objects may)


def _field_variants(fields: list[Field]) -> dict[str, Variant]:
    """For each field: deleted, an object, null, the wrong scalar; for a number also a numeral as
    a string, 1e308, a negative, 1e400 (past any double), 2**70 (past any 64-bit integer) and
    -1e9; each judged malformed or valid from the field's definition."""
    out: dict[str, Variant] = {}
    for f in fields:
        name = ".".join(map(str, f.path)).replace("*", "first")
        numeric = f.type in ("int", "num")
        values: list[tuple[str, object, bool]] = [
            ("missing", _DELETE, f.required),
            ("object", {}, f.type != "dict" or not f.empty_ok),
            ("null", None, not f.nullable),
        ]
        if f.type == "str":
            values.append(("integer", 12345, True))
        if f.type in ("list", "dict"):
            values.append(("string", "x", True))
        if numeric:
            values += [
                ("string", "12", True),
                ("1e308", 1e308, f.type == "int" or (f.hi is not None and f.hi < 1e308)),
                ("negative", -5, f.lo is not None and f.lo > -5),
                ("1e400", _TOO_LARGE, True),
                ("2**70", 2**70, f.hi is None or f.hi < 2**70),
                ("-1e9", -1e9, f.type == "int" or (f.lo is not None and f.lo > -1e9)),
            ]
        for label, value, malformed in values:
            out[f"{name}={label}"] = Variant(_record_edit(_set(f.path, value)), malformed)
    return out


_ID = "str"
# Fields each kind of file is read for, as docs/ and the formats define them: variants of each.
KIND_FIELDS: dict[str, list[Field]] = {
    "gqa_questions": [Field(("question",), "str"), Field(("imageId",), "str|int"),
                      Field(("answer",), "str", required=False),
                      Field(("semantic",), "list", required=False, nullable=True)],
    "gqa_graphs": [Field(("objects",), "dict"), Field(("width",), "num", lo=1e-9, hi=1e6),
                   Field(("objects", "*", "name"), "str"),
                   Field(("objects", "*", "x"), "num", lo=-1e6, hi=1e6),
                   Field(("objects", "*", "w"), "num", lo=0, hi=1e6),
                   Field(("objects", "*", "relations"), "list", required=False),
                   Field(("objects", "*", "relations", "object"), _ID),
                   Field(("objects", "*", "attributes"), "list", required=False)],
    # the top-level ids may be integers (read as their numerals); a perturbation's id may not
    "contrast": [Field(("question_id",), "str|int"), Field(("image_id",), "str|int"), Field(("question",), "str"),
                 Field(("answer",), "str"), Field(("perturbations",), "list"),
                 Field(("perturbations", "question"), "str"), Field(("perturbations", "answer"), "str"),
                 Field(("perturbations", "question_id"), _ID),
                 Field(("perturbations", "evidence"), "dict", empty_ok=False),
                 Field(("perturbations", "evidence", "facts"), "list"),
                 Field(("perturbations", "evidence", "facts", "id"), _ID)],
    "captions": [Field(("id",), _ID), Field(("image_id",), "str|int"), Field(("caption",), "str"),
                 Field(("evidence",), "dict", empty_ok=False), Field(("evidence", "facts"), "list"),
                 Field(("evidence", "facts", "id"), _ID), Field(("negatives",), "list"),
                 Field(("negatives", "caption"), "str"), Field(("negatives", "id"), _ID),
                 Field(("negatives", "evidence"), "dict", empty_ok=False)],
    "predictions": [],
    "clevr_questions": [Field(("question",), "str"), Field(("program",), "list"),
                        # `image` names the scene; `image_filename` is only checked to be text when given
                        Field(("image_filename",), "str", required=False), Field(("answer",), "str|int", required=False),
                        Field(("question_family_index",), "int", required=False, lo=0, hi=10_000),
                        Field(("image_index",), "int", required=False, lo=0, hi=2**63 - 1)],
    # a scene is named by its image_filename: image_index is checked when given and read nowhere;
    # pixel_coords only place a box for drawing (a scene without renders has none)
    "clevr_scene": [Field(("objects",), "list"), Field(("objects", "shape"), "str"),
                    Field(("objects", "pixel_coords"), "list", required=False), Field(("relationships",), "dict", empty_ok=False),
                    Field(("image_index",), "int", required=False, lo=0, hi=2**63 - 1)],
    "clevr_pool": [Field(("objects",), "list"), Field(("objects", "shape"), "str"),
                   Field(("objects", "color"), "str"), Field(("objects", "parts"), "dict", required=False),
                   Field(("relationships",), "dict", empty_ok=False), Field(("image_index",), "int", required=False, lo=0, hi=2**63 - 1)],
    "vqa_questions": [Field(("question",), "str"), Field(("question_id",), "int", lo=0, hi=2**63 - 1),
                      Field(("image_id",), "int", lo=0, hi=2**63 - 1)],
    # multiple_choice_answer is VQA's most common of the ten answers: read when given, and
    # otherwise taken from `answers` by that rule (datasets/samples.py), so it may be left out
    "vqa_annotations": [Field(("answers",), "list"), Field(("question_id",), "int", lo=0, hi=2**63 - 1),
                        Field(("multiple_choice_answer",), "str", required=False)],
    "objects": [],
    "manifest": [Field(("items",), "dict", empty_ok=False), Field(("hits",), "list"), Field(("answer_fields",), "list"),
                 Field(("answer_fields", 0), "str"), Field(("hits", "hit_token"), "str"),
                 Field(("hits", "items", 0), "str"), Field(("items", "*", "role"), "str")],
    "gold": [Field(("question",), "str"), Field(("answer",), "str"), Field(("image_id",), "str|int")],
    "review": [Field(("question_id",), "str|int"), Field(("question",), "str", required=False)],
}


def _pool_variants() -> dict[str, Variant]:
    """What the Super-CLEVR scene checks refuse: a scene given twice with one colour changed,
    `parts` given as a list, relationships without one list per object."""
    def edit_pool(edit: Callable[[dict], None]) -> Mutation:
        def make(src: Path, dest: Path) -> Path:
            data = _load(src)
            edit(data)
            return _save(dest, data, False)
        return make

    def scenes(data) -> list:
        return data["scenes"] if isinstance(data, dict) and "scenes" in data else [data]

    def twice(data: dict) -> None:
        if not (isinstance(data, dict) and "scenes" in data):
            raise ValueError("one scene to a file")
        copy = json.loads(_dump(scenes(data)[0]))
        copy["objects"][0]["color"] = "red" if copy["objects"][0].get("color") != "red" else "blue"
        data["scenes"].append(copy)

    def parts_list(data: dict) -> None:
        obj = next(o for s in scenes(data) for o in s["objects"] if o.get("parts"))
        obj["parts"] = [{"name": k, **v} for k, v in obj["parts"].items()]

    def short_relationships(data: dict) -> None:
        rel = scenes(data)[0]["relationships"]
        key = next(iter(rel))
        rel[key] = rel[key][:-1]

    def unknown_object(data: dict) -> None:
        rel = scenes(data)[0]["relationships"]
        rel[next(iter(rel))][0] = [*rel[next(iter(rel))][0], 10_000]

    found = {"scene_twice_recoloured": Variant(edit_pool(twice)),
             "parts_as_list": Variant(edit_pool(parts_list)),
             "short_relationships": Variant(edit_pool(short_relationships)),
             "relationship_to_unknown_object": Variant(edit_pool(unknown_object))}
    return found


def _in_first_row(inserted: bytes, newline: bytes = b"\r\n") -> Mutation:
    """`inserted` at the start of the first data row's first cell."""
    def make(src: Path, dest: Path) -> Path:
        header, rows = src.read_bytes().split(newline, 1)
        quote = b'"' if rows.startswith(b'"') else b""
        dest.write_bytes(header + newline + quote + inserted + rows[len(quote):])
        return dest
    return make


def _table_edit(edit: Callable[[list[list[str]]], None], delimiter: str = ",") -> Mutation:
    def make(src: Path, dest: Path) -> Path:
        import csv
        import io
        table = list(csv.reader(io.StringIO(src.read_text(encoding="utf-8"), newline=""), delimiter=delimiter))
        edit(table)
        buf = io.StringIO()
        csv.writer(buf, delimiter=delimiter, lineterminator="\r\n").writerows(table)
        dest.write_text(buf.getvalue(), encoding="utf-8", newline="")
        return dest
    return make


def _set_cell(column: str, value: str, row: int = 1) -> Callable[[list[list[str]]], None]:
    """`value` in the first column whose name starts with `column` (the first column when none)."""
    def edit(table: list[list[str]]) -> None:
        index = next((i for i, h in enumerate(table[0]) if h.startswith(column)), 0)
        table[row][index] = value
    return edit


def _drop_column(prefix: str) -> Callable[[list[list[str]]], None]:
    def edit(table: list[list[str]]) -> None:
        keep = [i for i, h in enumerate(table[0]) if not h.startswith(prefix)]
        table[:] = [[row[i] for i in keep if i < len(row)] for row in table]
    return edit


def _header_only(src: Path, dest: Path) -> Path:
    dest.write_bytes(src.read_bytes().splitlines(True)[0])
    return dest


def _unterminated(src: Path, dest: Path) -> Path:
    dest.write_bytes(src.read_bytes() + b'"unterminated,\r\n')
    return dest


def _cut_inside_row(src: Path, dest: Path) -> Path:
    """The file cut in half, inside the first cell of a row, so the last row is short. (A cut
    inside a row's last cell leaves a well-formed table with a shorter last answer: nothing in the
    format tells it from a file written so.)"""
    data = src.read_bytes()
    start = data.rfind(b"\n", 0, len(data) // 2) + 1
    dest.write_bytes(data[:start + 1])
    return dest


def _text_common(delimiter: str = ",") -> dict[str, Variant]:
    """What any CSV/TSV input is given: each malformed by CSV's rules or the documented limits
    (a cell of at most 128 KiB), except a file of its header alone (no rows is a valid table)."""
    return {
        "csv_empty": Variant(_raw(b"")),
        "csv_header_only": Variant(_header_only, malformed=False),
        "csv_huge_cell": Variant(_table_edit(lambda t: t[1].__setitem__(0, "x" * 200_000), delimiter)),
        "csv_invalid_utf8": Variant(_in_first_row(b"\xff\xfe")),
        "csv_nul": Variant(_in_first_row(b"\x00")),
        "csv_duplicate_row": Variant(_table_edit(lambda t: t.append(list(t[1])), delimiter)),
        "csv_ragged": Variant(_table_edit(lambda t: t[1].__delitem__(slice(1, None)), delimiter)),
        "csv_unterminated_quote": Variant(_unterminated),
        "csv_cut_in_half": Variant(_cut_inside_row),
        "csv_binary": Variant(_raw(bytes(range(256)) * 64)),
        "csv_directory": Variant(_directory),
        "csv_missing": Variant(_missing),
        "csv_unreadable": Variant(_unreadable),
    }


def _csv_variants() -> dict[str, Variant]:
    """The crowd's results CSV (MTurk's batch results)."""
    found = _text_common()
    found.update({
        "csv_huge_cell": Variant(_table_edit(_set_cell("Answer.", "x" * (200 << 10)))),
        "csv_no_answers": Variant(_table_edit(_drop_column("Answer."))),
        "csv_no_assignment": Variant(_table_edit(_drop_column("AssignmentId"))),
        "csv_no_worker": Variant(_table_edit(_drop_column("WorkerId"))),
        "csv_ragged": Variant(_table_edit(lambda t: t[1].__delitem__(slice(3, None)))),
        # a worker's free-text answer may be anything; exported back it is neutralised
        "csv_formula": Variant(_table_edit(_set_cell("Answer.", '=HYPERLINK("http://example.org","x")')),
                               malformed=False),
        # an answer is the worker's free text, whatever it looks like
        "csv_answer_like_json": Variant(_table_edit(_set_cell("Answer.", '{"no such token": "yes"}')),
                                        malformed=False),
        "csv_unknown_hit_token": Variant(_table_edit(_set_cell("Input.hit_token", "000000000000"))),
        "csv_answer_json_deep": Variant(_table_edit(_set_cell("Answer.", _deep(100_000)))),
        # MTurk's results carry columns nobody reads; empty-named ones are still a table
        "csv_many_columns": Variant(_table_edit(lambda t: [row.extend([""] * 20_000) for row in t]),
                                    malformed=False),
    })
    return found


def _scores_variants() -> dict[str, Variant]:
    """A caption similarity file: `image_id,caption_id,score`, one row per scored caption."""
    found = _text_common()
    found.update({
        "csv_huge_cell": Variant(_table_edit(_set_cell("caption_id", "x" * 200_000))),
        "scores_no_score": Variant(_table_edit(_drop_column("score"))),
        "scores_no_caption_id": Variant(_table_edit(_drop_column("caption_id"))),
        "score_nan": Variant(_table_edit(_set_cell("score", "nan"))),
        "score_inf": Variant(_table_edit(_set_cell("score", "inf"))),
        "score_1e400": Variant(_table_edit(_set_cell("score", "1e400"))),
        "score_text": Variant(_table_edit(_set_cell("score", "high"))),
        "score_empty": Variant(_table_edit(_set_cell("score", ""))),
        "score_twice_differently": Variant(_table_edit(
            lambda t: t.append([*t[1][:-1], str(float(t[1][-1]) + 1.0)]))),
        "scores_extra_column": Variant(_table_edit(lambda t: [row.append("z") for row in t]), malformed=False),
        "score_negative": Variant(_table_edit(_set_cell("score", "-3.5")), malformed=False),
    })
    return found


def _vlm_variants() -> dict[str, Variant]:
    """VLMEvalKit's prediction TSV: `question_key` ("q:" and the id) and `prediction` columns."""
    found = _text_common("\t")
    found.update({
        "csv_huge_cell": Variant(_table_edit(_set_cell("prediction", "x" * 200_000), "\t")),
        "csv_duplicate_row": Variant(_table_edit(lambda t: t.append(list(t[1])), "\t"), malformed=False),
        "csv_ragged": Variant(_table_edit(lambda t: t[1].__delitem__(slice(1, None)), "\t")),
        "csv_invalid_utf8": Variant(_in_first_row(b"\xff\xfe", b"\n")),
        "csv_nul": Variant(_in_first_row(b"\x00", b"\n")),
        "tsv_no_prediction": Variant(_table_edit(_drop_column("prediction"), "\t")),
        "tsv_key_without_prefix": Variant(_table_edit(_set_cell("question_key", "240000102"), "\t")),
        "tsv_answered_twice_differently": Variant(_table_edit(
            lambda t: t.append([*t[1][:-1], t[1][-1] + " not"]), "\t")),
    })
    return found


def variants(kind: str) -> dict[str, Variant]:
    if kind == "results_csv":
        return _csv_variants()
    if kind == "scores_csv":
        return _scores_variants()
    if kind == "vlm_tsv":
        return _vlm_variants()
    found = dict(GENERIC)
    if kind == "predictions":  # {question id: answer}: an answer "x" is an answer
        found["record_is_string"] = Variant(_record_is("x"), malformed=False)
    found.update(_field_variants(KIND_FIELDS.get(kind, [])))
    if kind == "clevr_scene":  # one scene to a file: the file is the record (top_scalar covers it)
        del found["record_is_string"]
    if kind in ("clevr_pool", "clevr_scene"):
        found.update(_pool_variants())
    if kind == "review":
        # the viewer reads a review list as the set of question ids the crowd disagreed with: an
        # empty list (no disagreement) and an id listed twice both mean what they say
        found["empty"] = Variant(_raw(b""), malformed=False)
        found["duplicate_record"] = Variant(_duplicate_record, malformed=False)
    return found


# --- commands and the files they read ---------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """One input of one command: which valid file it takes, and the command line around it."""

    command: str  # as printed: "generate", "ood vqavs", ...
    kind: str  # the valid file's kind (see KIND_FIELDS)
    base: str  # the valid file, relative to the workspace
    argv: Callable[[dict[str, Path], Path, Path], list[str]]  # (workspace files, hostile path, out) -> args
    out: str  # the output's name: a directory, or files (comma-separated)
    wrap: str = ""  # "dir:NAME": the hostile file goes into a copy of this folder as NAME
    # variant -> malformed, where this command's reading of the variant differs from its kind's
    judged: dict[str, bool] = field(default_factory=dict)


def _slots() -> list[Slot]:
    g = "generate"
    return [
        Slot(g, "gqa_questions", "questions.json",
             lambda b, h, o: ["generate", "--questions", h, "--scene-graphs", b["scene_graphs.json"], "--out", o,
                              "--no-progress", "--workers", "2"], "out"),
        Slot(g, "gqa_graphs", "scene_graphs.json",
             lambda b, h, o: ["generate", "--questions", b["questions.json"], "--scene-graphs", h, "--out", o,
                              "--no-progress", "--workers", "1"], "out"),
        Slot(g, "clevr_questions", "clevr_questions.json",
             lambda b, h, o: ["generate", "--format", "clevr", "--questions", h, "--scene-graphs",
                              b["clevr_scenes"], "--out", o], "out"),
        # one scene file fewer in a folder of scenes is a smaller folder: its questions go unperturbed
        Slot(g, "clevr_scene", "clevr_scenes", lambda b, h, o: [
            "generate", "--format", "clevr", "--questions", b["clevr_questions.json"], "--scene-graphs", h,
            "--out", o], "out", wrap="dir:superCLEVR_new_000000.json", judged={"missing": False}),
        Slot("augment", "gqa_questions", "questions.json",
             lambda b, h, o: ["augment", "--questions", h, "--scene-graphs", b["scene_graphs.json"],
                              "--out", o / "aug.json"], "aug.json,aug.lxmert.json"),
        Slot("augment", "gqa_graphs", "scene_graphs.json",
             lambda b, h, o: ["augment", "--questions", b["questions.json"], "--scene-graphs", h,
                              "--out", o / "aug.json"], "aug.json,aug.lxmert.json"),
        Slot("match", "gqa_questions", "questions.json", lambda b, h, o: ["match", h], ""),
        Slot("verify", "contrast", "gen", lambda b, h, o: ["verify", h, "--scene-graphs", b["scene_graphs.json"]],
             "", wrap="dir:contrast_sets.jsonl"),
        Slot("verify", "gqa_graphs", "scene_graphs.json",
             lambda b, h, o: ["verify", b["gen"], "--scene-graphs", h], ""),
        Slot("evaluate", "contrast", "gen", lambda b, h, o: [
            "evaluate", "--contrast", h, "-p", f"m={b['predictions.json']}", "--n-boot", "20", "--out", o],
             "out", wrap="dir:contrast_sets.jsonl"),
        Slot("evaluate", "predictions", "predictions.json", lambda b, h, o: [
            "evaluate", "--contrast", b["gen"], "-p", f"m={h}", "--n-boot", "20", "--out", o], "out"),
        Slot("evaluate", "gqa_questions", "gen/original.json", lambda b, h, o: [
            "evaluate", "--questions", h, "-p", f"m={b['predictions.json']}", "--n-boot", "20", "--out", o], "out"),
        Slot("export", "contrast", "gen", lambda b, h, o: ["export", h, "--format", "jsonl", "--out", o],
             "out", wrap="dir:contrast_sets.jsonl"),
        Slot("export", "contrast", "gen", lambda b, h, o: ["export", h, "--format", "parquet", "--out", o],
             "out", wrap="dir:contrast_sets.jsonl"),
        Slot("view", "contrast", "gen", lambda b, h, o: ["view", h, "--static", o], "out",
             wrap="dir:contrast_sets.jsonl"),
        Slot("view", "gqa_graphs", "scene_graphs.json",
             lambda b, h, o: ["view", b["gen"], "--scene-graphs", h, "--static", o], "out"),
        Slot("view", "predictions", "predictions.json",
             lambda b, h, o: ["view", b["gen"], "--predictions", f"m={h}", "--static", o], "out"),
        Slot("view", "review", "review.jsonl", lambda b, h, o: ["view", b["gen"], "--review", h, "--static", o],
             "out"),
        Slot("ood gqa", "gqa_questions", "questions.json", lambda b, h, o: ["ood", "gqa", "--questions", h, "--out", o],
             "out"),
        Slot("ood vqavs", "gqa_questions", "questions.json", lambda b, h, o: [
            "ood", "vqavs", "--questions", h, "--objects", b["scene_graphs.json"], "--out", o, "--workers", "2"], "out"),
        Slot("ood vqavs", "gqa_graphs", "scene_graphs.json", lambda b, h, o: [
            "ood", "vqavs", "--questions", b["questions.json"], "--objects", h, "--out", o, "--workers", "1"], "out"),
        Slot("ood vqavs", "vqa_questions", "vqa_questions.json", lambda b, h, o: [
            "ood", "vqavs", "--questions", h, "--annotations", b["vqa_annotations.json"], "--out", o], "out"),
        Slot("ood vqavs", "vqa_annotations", "vqa_annotations.json", lambda b, h, o: [
            "ood", "vqavs", "--questions", b["vqa_questions.json"], "--annotations", h, "--out", o], "out"),
        # the smaller folder is still a valid one, but the splits need the scene every question names,
        # so it is refused naming the folder: refused-valid
        Slot("ood superclevr", "clevr_scene", "clevr_scenes", lambda b, h, o: [
            "ood", "superclevr", "--scenes", h, "--questions", b["clevr_questions.json"], "--out", o], "out",
             wrap="dir:superCLEVR_new_000000.json", judged={"missing": False}),
        Slot("ood superclevr", "clevr_questions", "clevr_questions.json", lambda b, h, o: [
            "ood", "superclevr", "--scenes", b["clevr_scenes"], "--questions", h, "--out", o], "out"),
        Slot("mturk export", "contrast", "gen", lambda b, h, o: [
            "mturk", "export", "--contrast", h, "--images-base-url", "https://example.org/i", "--sample", "10",
            "--out", o], "out", wrap="dir:contrast_sets.jsonl"),
        Slot("mturk export", "gold", "gold.json", lambda b, h, o: [
            "mturk", "export", "--contrast", b["gen"], "--images-base-url", "https://example.org/i", "--sample",
            "10", "--gold", h, "--out", o], "out"),
        Slot("mturk ingest", "manifest", "hits/manifest.json", lambda b, h, o: [
            "mturk", "ingest", "--manifest", h, "--results", b["results.csv"], "--out", o], "out"),
        Slot("mturk ingest", "results_csv", "results.csv", lambda b, h, o: [
            "mturk", "ingest", "--manifest", b["hits/manifest.json"], "--results", h, "--out", o], "out"),
        Slot("mturk simulate", "manifest", "hits", lambda b, h, o: [
            "mturk", "simulate", h, "--out", o / "results.csv"], "results.csv", wrap="dir:manifest.json"),
        Slot("export", "contrast", "gen", lambda b, h, o: ["export", h, "--format", "hf", "--out", o],
             "out", wrap="dir:contrast_sets.jsonl"),
        Slot("evaluate", "vlm_tsv", "vlm_predictions.tsv", lambda b, h, o: [
            "evaluate", "--contrast", b["gen"], "-p", f"m={h}", "--n-boot", "20", "--out", o], "out"),
        Slot("evaluate", "scores_csv", "scores.csv", lambda b, h, o: [
            "evaluate", "--captions", b["captions"], "-p", f"m={h}", "--n-boot", "20", "--out", o], "out"),
        Slot("evaluate", "captions", "captions", lambda b, h, o: [
            "evaluate", "--captions", h, "-p", f"m={b['scores.csv']}", "--n-boot", "20", "--out", o], "out",
             wrap="dir:captions.jsonl"),
        Slot("captions export", "captions", "captions", lambda b, h, o: [
            "captions", "export", h, "--format", "hf", "--out", o], "out", wrap="dir:captions.jsonl"),
        Slot("captions export", "captions", "captions", lambda b, h, o: [
            "captions", "export", h, "--format", "aro", "--out", o], "out", wrap="dir:captions.jsonl"),
        Slot("view", "captions", "captions", lambda b, h, o: [
            "view", h, "--scene-graphs", b["scene_graphs.json"], "--static", o], "out", wrap="dir:captions.jsonl"),
        Slot("verify", "captions", "captions", lambda b, h, o: [
            "verify", h, "--scene-graphs", b["scene_graphs.json"]], "", wrap="dir:captions.jsonl"),
        Slot("captions generate", "gqa_graphs", "scene_graphs.json", lambda b, h, o: [
            "captions", "generate", "--scene-graphs", h, "--out", o, "--workers", "1"], "out"),
        Slot("ood superclevr", "clevr_pool", "pool_scenes", lambda b, h, o: [
            "ood", "superclevr", "--scenes", h, "--questions", b["pool_questions.json"], "--variant", "bal",
            "--tolerance", "0.05", "--out", o], "out", wrap="dir:scenes.json"),
    ]


# Commands given every numeric option they take (from their own click definitions) with nan, inf,
# negative, huge and past-64-bit values: the valid input each such run starts from.
OPTION_BASES: dict[str, Callable[[dict[str, Path], Path], list]] = {
    "generate": lambda b, o: ["generate", "--questions", b["questions.json"], "--scene-graphs",
                              b["scene_graphs.json"], "--out", o, "--no-progress"],
    "augment": lambda b, o: ["augment", "--questions", b["questions.json"], "--scene-graphs",
                             b["scene_graphs.json"], "--out", o / "aug.json", "--replace"],
    "evaluate": lambda b, o: ["evaluate", "--contrast", b["gen"], "-p", f"m={b['predictions.json']}",
                              "--n-boot", "20", "--out", o],
    "verify": lambda b, o: ["verify", b["gen"], "--scene-graphs", b["scene_graphs.json"]],
    "captions generate": lambda b, o: ["captions", "generate", "--scene-graphs", b["scene_graphs.json"],
                                       "--out", o],
    "captions export": lambda b, o: ["captions", "export", b["captions"], "--format", "hf", "--out", o],
    "captions baselines": lambda b, o: ["captions", "baselines", b["captions"]],
    "mturk export": lambda b, o: ["mturk", "export", "--contrast", b["gen"], "--images-base-url",
                                  "https://example.org/i", "--sample", "10", "--gold", b["gold.json"], "--out", o],
    "mturk ingest": lambda b, o: ["mturk", "ingest", "--manifest", b["hits/manifest.json"], "--results",
                                  b["results.csv"], "--out", o],
    "mturk simulate": lambda b, o: ["mturk", "simulate", b["hits"], "--out", o / "results.csv"],
    "mturk preview": lambda b, o: ["mturk", "preview", b["hits"], "--out", o / "preview.html"],
    "ood gqa": lambda b, o: ["ood", "gqa", "--questions", b["questions.json"], "--out", o],
    "ood gqa-redundancy": lambda b, o: ["ood", "gqa-redundancy", "--questions", b["questions.json"],
                                        "--scene-graphs", b["scene_graphs.json"], "--out", o],
    "ood vqavs": lambda b, o: ["ood", "vqavs", "--questions", b["questions.json"], "--objects",
                               b["scene_graphs.json"], "--out", o],
    "ood superclevr": lambda b, o: ["ood", "superclevr", "--scenes", b["pool_scenes"], "--questions",
                                    b["pool_questions.json"], "--variant", "bal", "--tolerance", "0.05",
                                    "--out", o],
}
# what runs forever when valid (a server), or only with a --port, is left to the HTTP part
OPTIONS_LEFT_OUT = {("view", "--port"), ("serve", "*"), ("demo", "*")}


def numeric_options() -> list[tuple[str, str, object]]:
    """(command, option, click type) of every numeric option of every command in OPTION_BASES."""
    import click

    from contrastgen.cli import cli
    ctx = click.Context(cli)
    found = []
    for command in OPTION_BASES:
        cmd = cli
        for word in command.split():
            cmd = cmd.get_command(ctx, word)
        for param in cmd.params:
            if isinstance(param, click.Option) and isinstance(
                    param.type, (click.types.IntParamType, click.types.FloatParamType)):
                found.append((command, param.opts[-1] if param.opts[-1].startswith("--") else param.opts[0],
                              param.type))
    return found


# nan, infinity, a negative, past any double, past any 64-bit integer, huge
INT_OPTION_VALUES = ("nan", "-3", "1e400", str(2**70), "100000000")
FLOAT_OPTION_VALUES = ("nan", "inf", "-3", "1e400", "100000000")


def option_malformed(kind, value: str) -> bool:
    """Is `value` outside what the option's own definition (its --help) allows? Never a number
    that is not finite."""
    import click
    try:
        number = int(value) if isinstance(kind, click.types.IntParamType) else float(value)
    except ValueError:
        return True
    if number != number or number in (float("inf"), float("-inf")):
        return True
    lo, hi = getattr(kind, "min", None), getattr(kind, "max", None)
    if lo is not None and (number < lo or getattr(kind, "min_open", False) and number == lo):
        return True
    return bool(hi is not None and (number > hi or getattr(kind, "max_open", False) and number == hi))


# --- the workspace of valid inputs ----------------------------------------------------------------


def _run_ok(args: list[str], cwd: Path) -> None:
    done = subprocess.run([*CONTRASTGEN, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"setting up the workspace failed: contrastgen {' '.join(map(str, args))}\n{done.stderr}")


def build_workspace(base: Path) -> dict[str, Path]:
    """The valid inputs every hostile variant is made from, and the outputs some commands read."""
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    shutil.copyfile(SAMPLE / "questions.json", base / "questions.json")
    shutil.copyfile(SAMPLE / "scene_graphs.json", base / "scene_graphs.json")
    shutil.copytree(CLEVR_SAMPLE / "scenes", base / "clevr_scenes")
    shutil.copyfile(CLEVR_SAMPLE / "questions" / "superCLEVR_questions_5.json", base / "clevr_questions.json")
    _run_ok(["generate", "--questions", base / "questions.json", "--scene-graphs", base / "scene_graphs.json",
             "--out", base / "gen", "--no-progress"], base)
    # every question of the set answered (a run that asked only some is scored on those alone, and
    # one that asked no set in full is refused)
    answers: dict[str, str] = {}
    for line in (base / "gen" / "contrast_sets.jsonl").read_text().splitlines():
        record = json.loads(line)
        answers[record["question_id"]] = record["answer"]
        answers.update({p["question_id"]: p["answer"] for p in record["perturbations"]})
    (base / "predictions.json").write_bytes(_dump(answers))
    _run_ok(["mturk", "export", "--contrast", base / "gen", "--images-base-url", "https://example.org/i",
             "--sample", "10", "--out", base / "hits"], base)
    _run_ok(["mturk", "simulate", base / "hits", "--out", base / "results.csv"], base)
    _run_ok(["mturk", "ingest", "--manifest", base / "hits" / "manifest.json", "--results", base / "results.csv",
             "--out", base / "ingest"], base)
    shutil.copyfile(base / "ingest" / "review.jsonl", base / "review.jsonl")
    records = [json.loads(line) for line in (base / "gen" / "contrast_sets.jsonl").read_text().splitlines()]
    gold = [{"image_id": r["image_id"], "question": r["question"], "answer": r["answer"]} for r in records[:3]]
    (base / "gold.json").write_bytes(_dump(gold))
    _vqa_files(base)
    _run_ok(["captions", "generate", "--scene-graphs", base / "scene_graphs.json", "--out", base / "captions",
             "--workers", "1"], base)
    _caption_scores(base)
    _vlm_predictions(base, answers)
    pool = base / "pool_scenes"
    _run_ok_python([REPO / "benchmarks" / "synth_superclevr.py", "--scenes", "300", "--skew", "0.3",
                    "--out", base / "pool"], base)
    pool.mkdir()
    (base / "pool" / "scenes.json").rename(pool / "scenes.json")
    (base / "pool" / "questions.json").rename(base / "pool_questions.json")
    return {p.relative_to(base).as_posix(): p for p in [*base.rglob("*")]} | {"": base}


def _run_ok_python(args: list, cwd: Path) -> None:
    done = subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"setting up the workspace failed: {' '.join(map(str, args))}\n{done.stderr}")


def _caption_scores(base: Path) -> None:
    """A similarity file for the caption set: the true caption scored above each negative."""
    rows = ["image_id,caption_id,score"]
    for line in (base / "captions" / "captions.jsonl").read_text().splitlines():
        record = json.loads(line)
        rows.append(f"{record['image_id']},{record['id']},0.9")
        rows += [f"{record['image_id']},{n['id']},0.1" for n in record["negatives"]]
    (base / "scores.csv").write_text("\r\n".join(rows) + "\r\n", encoding="utf-8", newline="")


def _vlm_predictions(base: Path, answers: dict[str, str]) -> None:
    """A VLMEvalKit prediction TSV (`question_key` "q:<id>", `prediction`) answering every question."""
    rows = ["index\tquestion_key\tprediction"]
    rows += [f"{i}\tq:{qid}\t{answer}" for i, (qid, answer) in enumerate(sorted(answers.items()))]
    (base / "vlm_predictions.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8", newline="")


def _vqa_files(base: Path) -> None:
    """200 VQA v2 questions and their annotations (from ../shared when present, else made up)."""
    if (VQAVS / "Val-Ques.json").exists():
        questions = json.loads((VQAVS / "Val-Ques.json").read_bytes())[:200]
        wanted = {q["question_id"] for q in questions}
        annotations = [a for a in json.loads((VQAVS / "Val-Ans.json").read_bytes()) if a["question_id"] in wanted]
    else:
        questions = [{"image_id": i // 3, "question": f"Is the thing {i % 7} red?", "question_id": i}
                     for i in range(200)]
        annotations = [{"question_id": q["question_id"], "image_id": q["image_id"], "question_type": "is the",
                        "answer_type": "yes/no", "multiple_choice_answer": "yes" if i % 2 else "no",
                        "answers": [{"answer": "yes", "answer_confidence": "yes", "answer_id": j + 1}
                                    for j in range(10)]} for i, q in enumerate(questions)]
    (base / "vqa_questions.json").write_bytes(_dump(questions))
    (base / "vqa_annotations.json").write_bytes(_dump(annotations))


# --- one run ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    command: str
    slot: str
    variant: str
    verdict: str
    exit: int | None
    seconds: float
    detail: str = ""


@dataclass
class Case:
    slot: Slot
    slot_name: str
    variant: str
    mutation: Mutation | None
    malformed: bool = True  # the input (or option value) breaks its format's rules: must be refused
    option: tuple[str, str] | None = None  # (option, value) given to a valid run instead of a mutation
    extra: dict = field(default_factory=dict)


def _limits(memory_bytes: int, without_root_reads: bool) -> Callable[[], None]:
    """The child's limits: its own process group, the memory cap and, for the unreadable-file
    variants, no power to read past file permissions (root's CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH leave the bounding set, so even root gets EACCES)."""
    def apply() -> None:
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        if without_root_reads:
            libc = ctypes.CDLL(None, use_errno=True)
            for capability in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
                libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)
    return apply


def _snapshot(path: Path) -> dict[str, bytes]:
    """Every file under `path` (or `path` itself) with its bytes; {} when absent."""
    if path.is_file():
        return {".": path.read_bytes()}
    if not path.is_dir():
        return {}
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


_ERROR_LINE = re.compile(r"^(contrastgen: error: |Error: )(.*)$", re.MULTILINE)


def run_case(case: Case, files: dict[str, Path], work: Path, timeout: float, memory: int) -> Outcome:
    slot = case.slot
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=work))
    tmp = run_dir / "tmp"
    tmp.mkdir()
    out_parent = run_dir / "out"
    out_parent.mkdir()
    src = files[slot.base]
    name = Path(slot.base).name if not slot.wrap else slot.wrap.split(":", 1)[1]
    try:
        if case.option is not None:
            hostile = arg_path = files[slot.base]
        elif slot.wrap:
            holder = run_dir / "input"
            shutil.copytree(src, holder)
            (holder / name).unlink()
            hostile = case.mutation(src / name, holder / name)
            arg_path = holder
        else:
            hostile = case.mutation(src, run_dir / name)
            arg_path = hostile
    except Exception as exc:  # a variant that does not apply to this file
        shutil.rmtree(run_dir, ignore_errors=True)
        return Outcome(slot.command, case.slot_name, case.variant, "skipped", None, 0.0, repr(exc))
    source = src / name if slot.wrap else src
    if (case.option is None and not case.variant.endswith("unreadable") and source.is_file() and hostile.is_file()
            and not hostile.is_symlink() and hostile.read_bytes() == source.read_bytes()):
        shutil.rmtree(run_dir, ignore_errors=True)  # the variant changed nothing in this file
        return Outcome(slot.command, case.slot_name, case.variant, "skipped", None, 0.0, "no change")
    # the old result the run must leave whole if it fails
    outputs = [n for n in slot.out.split(",") if n]
    if slot.out == "out":
        (out_parent / "out").mkdir()
        # named as a report, which `evaluate` may replace (it keeps other folders from harm)
        (out_parent / "out" / "report.json").write_bytes(OLD)
        out_arg = out_parent / "out"
    else:
        for n in outputs:
            (out_parent / n).write_bytes(OLD)
        out_arg = out_parent
    before = {n: _snapshot(out_parent / n) for n in os.listdir(out_parent)}
    argv = [*CONTRASTGEN, *map(str, slot.argv(files, arg_path, out_arg))]
    if case.option is not None:
        argv = [*CONTRASTGEN, *map(str, OPTION_BASES[slot.command](files, out_arg)), *case.option]
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=run_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_limits(memory, case.variant.endswith("unreadable")))
    out_bytes = b""
    try:
        out_bytes, err_bytes = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        code = None
    seconds = time.perf_counter() - start
    err = err_bytes.decode("utf-8", "replace") if code is not None else ""
    leftovers = sorted(os.listdir(tmp))
    after = {n: _snapshot(out_parent / n) for n in os.listdir(out_parent)}
    shutil.rmtree(run_dir, ignore_errors=True)
    if code is None:
        return Outcome(slot.command, case.slot_name, case.variant, "hung", None, seconds)
    if (slot.command == "verify" and code == 1 and "Traceback" not in err
            and re.search(rb": FAILED: checked \d+ perturbations", out_bytes)):
        # the verifier's verdict: the input was read, and its problems are listed by record
        verdict = "clean" if case.malformed else "refused-valid"
        return Outcome(slot.command, case.slot_name, case.variant, verdict, code, seconds, "reported as failed checks")
    if "Traceback (most recent call last)" in err or code not in (0, 2):
        tail = err.strip().splitlines()[-1:] or [f"exit {code}"]
        return Outcome(slot.command, case.slot_name, case.variant, "crashed", code, seconds, tail[0][:300])
    if leftovers:
        return Outcome(slot.command, case.slot_name, case.variant, "partial", code, seconds,
                       f"left in TMPDIR: {leftovers[:5]}")
    if code != 0 and after != before:
        changed = sorted(set(after) ^ set(before) | {n for n in after if after.get(n) != before.get(n)})
        return Outcome(slot.command, case.slot_name, case.variant, "partial", code, seconds,
                       f"output path changed by a failed run: {changed[:5]}")
    if code == 0:
        verdict = "wrongly-accepted" if case.malformed else "accepted-valid"
        return Outcome(slot.command, case.slot_name, case.variant, verdict, code, seconds)
    lines = _ERROR_LINE.findall(err)
    message = lines[-1][1] if lines else err.strip().splitlines()[-1] if err.strip() else ""
    if case.option is not None:
        located = case.option[0] in message or case.option[0] in err
    else:
        located = Path(str(hostile)).name in message or bool(slot.wrap and str(arg_path.name) in message)
    verdict = ("clean" if case.malformed else "refused-valid") if lines and located else "unlocated"
    return Outcome(slot.command, case.slot_name, case.variant, verdict, code, seconds, message[:300])


def _guarded(case: Case, files: dict[str, Path], work: Path, timeout: float, memory: int) -> Outcome:
    """`run_case`, with a failure of this harness (not of the command) reported as such."""
    try:
        return run_case(case, files, work, timeout, memory)
    except OSError as exc:
        return Outcome(case.slot.command, case.slot_name, case.variant, "skipped", None, 0.0, f"harness: {exc}")


# --- the HTTP service ---------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _http_cases(files: dict[str, Path]) -> list[tuple[str, str, dict[str, str], bytes | Callable]]:
    graphs = json.loads(files["scene_graphs.json"].read_bytes())
    image_id, graph = next(iter(graphs.items()))
    questions = json.loads(files["questions.json"].read_bytes())
    qid, q = next((k, v) for k, v in questions.items() if v["imageId"] == image_id) if any(
        v["imageId"] == image_id for v in questions.values()) else next(iter(questions.items()))
    good = {"question_id": qid, "question": q["question"], "answer": q["answer"], "image_id": image_id,
            "scene_graph": graph}
    record = json.loads((files["gen/contrast_sets.jsonl"]).read_text().splitlines()[0])
    verify_ok = {"records": [record], "scene_graphs": {record["image_id"]: graphs[record["image_id"]]}}
    js = {"content-type": "application/json"}
    cases: list[tuple[str, str, dict[str, str], bytes | Callable]] = []
    bad_bodies = {
        "empty": b"", "garbage": bytes(range(256)), "not_json": b"question=what", "top_list": b"[]",
        "top_null": b"null", "deep_100k": _deep(100_000).encode(),
        "deep_in_field_2000": b'{"question": "a", "scene_graph": {"x": ' + _deep(2000).encode() + b"}}",
        "lone_surrogate": b'{"question": "\\ud800"}', "invalid_utf8": b'{"question": "\xff"}',
        "nan": b'{"question": NaN}', "huge_number": b'{"max_k": 1e999}',
    }
    for path in ("/v1/perturb", "/v1/perturb/batch", "/v1/verify", "/v1/evaluate"):
        for name, body in bad_bodies.items():
            cases.append((f"{path} {name}", path, js, body))
    relation_object = json.loads(_dump(good))
    first = next(iter(relation_object["scene_graph"]["objects"].values()))
    first["relations"] = [{"name": "near", "object": {}}]
    cases.append(("/v1/perturb relation object {}", "/v1/perturb", js, _dump(relation_object)))
    batch_rel = {"questions": {qid: q}, "scene_graphs": {image_id: relation_object["scene_graph"]}}
    cases.append(("/v1/perturb/batch relation object {}", "/v1/perturb/batch", js, _dump(batch_rel)))
    verify_rel = json.loads(_dump(verify_ok))
    g = next(iter(verify_rel["scene_graphs"].values()))
    next(iter(g["objects"].values()))["relations"] = [{"name": "near", "object": {}}]
    cases.append(("/v1/verify relation object {}", "/v1/verify", js, _dump(verify_rel)))
    for label, value in (("x string", "12"), ("x huge", 1e308), ("w negative", -5), ("name missing", None)):
        mutated = json.loads(_dump(good))
        obj = next(iter(mutated["scene_graph"]["objects"].values()))
        key = label.split()[0]
        if value is None:
            obj.pop(key, None)
        else:
            obj[key] = value
        cases.append((f"/v1/perturb {label}", "/v1/perturb", js, _dump(mutated)))
    cases.append(("/v1/perturb question 10 MB", "/v1/perturb", js, _dump({**good, "question": "is " * 3_500_000})))
    cases.append(("/v1/perturb text/plain", "/v1/perturb", {"content-type": "text/plain"}, _dump(good)))
    cases.append(("/v1/perturb no content-type", "/v1/perturb", {}, _dump(good)))
    cases.append(("/v1/perturb form", "/v1/perturb", {"content-type": "application/x-www-form-urlencoded"},
                  _dump(good)))
    cases.append(("/v1/perturb foreign Host", "/v1/perturb", {**js, "host": "attacker.example"}, _dump(good)))
    cases.append(("/v1/perturb stalled body", "/v1/perturb", js, "stall"))
    cases.append(("/v1/perturb client gone", "/v1/perturb", js, "disconnect"))
    cases.append(("/v1/perturb body over limit", "/v1/perturb", js, b" " * (17 << 20)))
    cases.append(("/v1/verify duplicate ids", "/v1/verify", js, _dump({**verify_ok, "records": [record, record]})))
    return cases


def _request(port: int, path: str, headers: dict[str, str], body, timeout: float) -> tuple[int | None, bytes]:
    if body == "stall" or body == "disconnect":
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: 1000\r\n\r\n").encode()
            s.sendall(head + b'{"question": ')
            if body == "disconnect":
                return 499, b""  # judged from the server's log
            data = b""
            try:
                while chunk := s.recv(65536):
                    data += chunk
                    if b"\r\n\r\n" in data:
                        break
            except TimeoutError:
                return None, b""
            status = re.match(rb"HTTP/1\.1 (\d+)", data)
            return (int(status.group(1)) if status else 0), data
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        hdrs = {"host": f"127.0.0.1:{port}", **headers}
        conn.putrequest("POST", path, skip_host=True, skip_accept_encoding=True)
        for k, v in hdrs.items():
            conn.putheader(k, v)
        conn.putheader("content-length", str(len(body)))
        conn.endheaders()
        conn.send(body)
        resp = conn.getresponse()
        return resp.status, resp.read()
    except TimeoutError:
        return None, b""
    except (ConnectionError, http.client.HTTPException):
        return 0, b""
    finally:
        conn.close()


def run_http(files: dict[str, Path], work: Path, timeout: float, memory: int) -> list[Outcome]:
    port = _free_port()
    log = work / "serve.log"
    tmp = work / "serve-tmp"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    env.pop("CONTRASTGEN_API_TOKEN", None)
    with log.open("wb") as log_fh:
        server = subprocess.Popen([*CONTRASTGEN, "serve", "--port", str(port), "--timeout", "10"], env=env,
                                  stdout=log_fh, stderr=log_fh, preexec_fn=_limits(memory, False))
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        results = []
        for name, path, headers, body in _http_cases(files):
            mark = log.stat().st_size
            start = time.perf_counter()
            status, payload = _request(port, path, headers, body, timeout)
            seconds = time.perf_counter() - start
            time.sleep(0.3 if body != "disconnect" else 3.0)
            logged = log.read_bytes()[mark:].decode("utf-8", "replace")
            traceback = "Traceback" in logged or '"status":500' in logged.replace(" ", "")
            if server.poll() is not None:
                results.append(Outcome("serve", path, name, "crashed", status, seconds, "the server died"))
                break
            if status is None:
                verdict, detail = "hung", "no answer"
            elif traceback or status == 0 or status >= 500 and status not in (503, 504):
                verdict, detail = "crashed", f"status {status}; log: {logged.strip()[-200:]}"
            elif status == 499:
                verdict, detail = "clean", "client disconnect, nothing logged as an error"
            elif 400 <= status < 500:
                verdict, detail = "clean", payload[:160].decode("utf-8", "replace")
            elif path == "/v1/verify" and status == 200 and b'"ok":false' in payload:
                verdict, detail = "clean", "reported as a failed check"
            else:
                verdict, detail = "wrongly-accepted", f"status {status}"
            results.append(Outcome("serve", path, name, verdict, status, seconds, detail))
        return results
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()


# --- the matrix -------------------------------------------------------------------------------


VERDICTS = ("clean", "refused-valid", "unlocated", "accepted-valid", "wrongly-accepted", "crashed", "hung",
            "partial")
_SHORT = {"refused-valid": "ref-valid", "accepted-valid": "acc-valid", "wrongly-accepted": "wrong-acc"}


def print_table(outcomes: list[Outcome]) -> None:
    by_command: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        if o.verdict != "skipped":
            by_command[o.command][o.verdict] += 1
    total: Counter = sum(by_command.values(), Counter())
    header = f"{'command':<19}{'tried':>6}" + "".join(f"{_SHORT.get(v, v):>10}" for v in VERDICTS)
    print(header)
    print("-" * len(header))
    for command in sorted(by_command):
        c = by_command[command]
        print(f"{command:<19}{sum(c.values()):>6}" + "".join(f"{c[v]:>10}" for v in VERDICTS))
    print("-" * len(header))
    print(f"{'all':<19}{sum(total.values()):>6}" + "".join(f"{total[v]:>10}" for v in VERDICTS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="runs at once")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds a run may take before it is hung")
    parser.add_argument("--memory-gib", type=float, default=2.0, help="address-space cap of each run")
    parser.add_argument("--only", default="", help="comma-separated commands (e.g. generate,serve)")
    parser.add_argument("--report", type=Path, help="write every outcome here as JSON")
    parser.add_argument("--no-options", action="store_true", help="leave out the numeric-option cases")
    parser.add_argument("--list", action="store_true", help="count the cases that would run, and stop")
    parser.add_argument("--table", type=Path, nargs="+",
                        help="print the table of these reports and stop (a command a later report ran is counted from that report alone)")
    parser.add_argument("--variants", default="", help="only variants whose name contains one of these (comma-separated)")
    parser.add_argument("--work", type=Path, help="workspace folder (default: a temporary one, removed)")
    args = parser.parse_args()
    if args.table:
        merged: dict[str, list[Outcome]] = {}
        for report in args.table:
            later: dict[str, list[Outcome]] = defaultdict(list)
            for o in json.loads(report.read_text()):
                later[o["command"]].append(Outcome(**o))
            merged.update(later)
        print_table([o for outcomes in merged.values() for o in outcomes])
        return
    memory = int(args.memory_gib * (1 << 30))
    work = args.work or Path(tempfile.mkdtemp(prefix="contrastgen-fuzz-"))
    work.mkdir(parents=True, exist_ok=True)
    only = {c.strip() for c in args.only.split(",") if c.strip()}
    try:
        files = {} if args.list else build_workspace(work / "base")
        cases = []
        for i, slot in enumerate(_slots()):
            if only and slot.command not in only:
                continue
            slot_name = f"{i}:{slot.kind}"
            for variant, v in variants(slot.kind).items():
                cases.append(Case(slot, slot_name, variant, v.make, slot.judged.get(variant, v.malformed)))
        if not args.no_options:
            slot_of = {}
            for slot in _slots():
                slot_of.setdefault(slot.command, slot)
            for command, option, kind in numeric_options():
                if only and command not in only or (command, option) in OPTIONS_LEFT_OUT:
                    continue
                slot = slot_of.get(command) or Slot(command, "options", "", lambda b, h, o: [], "out")
                if command in ("captions baselines", "verify"):
                    slot = Slot(command, "options", "", lambda b, h, o: [], "")
                import click
                values = INT_OPTION_VALUES if isinstance(kind, click.types.IntParamType) else FLOAT_OPTION_VALUES
                for value in values:
                    cases.append(Case(slot, "options", f"{option} {value}", None,
                                      option_malformed(kind, value), (option, value)))
        wanted = [w for w in args.variants.split(",") if w]
        if wanted:
            cases = [c for c in cases if any(w in c.variant for w in wanted)]
        if args.list:
            print(Counter(c.slot.command for c in cases), sum(1 for _ in cases))
            return
        outcomes: list[Outcome] = []
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(_guarded, c, files, work, args.timeout, memory) for c in cases]
            for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
                o = future.result()
                outcomes.append(o)
                if o.verdict not in ("clean", "skipped", "accepted-valid"):
                    print(f"[{n}/{len(cases)}] {o.command} {o.slot} {o.variant}: {o.verdict} {o.detail}",
                          file=sys.stderr, flush=True)
        if not only or "serve" in only:
            outcomes.extend(run_http(files, work, 30.0, memory))
            for o in outcomes[-60:]:
                if o.command == "serve" and o.verdict not in ("clean",):
                    print(f"serve {o.variant}: {o.verdict} {o.detail}", file=sys.stderr)
        print(f"hostile inputs: {sum(o.verdict != 'skipped' for o in outcomes)}, memory capped at "
              f"{args.memory_gib:g} GiB per run, {time.perf_counter() - started:.0f} s")
        print_table(outcomes)
        if args.report:
            args.report.write_text(json.dumps([o.__dict__ for o in outcomes], indent=1))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
