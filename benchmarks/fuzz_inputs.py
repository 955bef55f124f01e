"""The hostile-input matrix: every command that reads files, given malformed, deeply nested,
huge, duplicated and mistyped inputs, each run as its own process with its memory capped.

Each run is classified:

- clean: exit 2, no traceback, and a one-line error that names the file it is about (for
  `verify`, also exit 1 with its report of failed checks, each naming its record);
- unlocated: exit 2 and no traceback, but the error does not name the file;
- accepted: exit 0 (the input was read as valid; for some variants that is right);
- crashed: a traceback, or any other exit (1, killed by the memory cap, a signal);
- hung: still running at the timeout;
- partial: the run failed and the output path no longer holds exactly the old result placed
  there before the run, or something is left beside it or in the run's private TMPDIR.

The HTTP service is run once (capped the same way) and given hostile requests: a 4xx with a JSON
body is clean, a 5xx, a dropped connection or a traceback in its log is a crash, no answer within
the timeout is a hang.

    python benchmarks/fuzz_inputs.py                  # the whole matrix (about 10 minutes on 2 cores)
    python benchmarks/fuzz_inputs.py --only generate,view --jobs 2 --report out/fuzz.json

Prints tried / clean / unlocated / accepted / crashed / hung / partial, overall and per command.
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


def _record_edit(edit: Callable[[dict], None]) -> Mutation:
    """A variant that changes the first record (a dict) with `edit`."""
    def make(src: Path, dest: Path) -> Path:
        data = _load(src)
        container, key = _first(data)
        record = container[key]
        if isinstance(record, dict):
            edit(record)
        else:
            container[key] = {"x": record}
            edit(container[key])
        return _save(dest, data, src.suffix == ".jsonl")
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


GENERIC: dict[str, Mutation] = {
    "empty": _raw(b""),
    "garbage": _raw(bytes(range(256)) * 4),
    "truncated": _truncated,
    "top_scalar": _raw(b"42"),
    "wrong_top": _wrong_top,
    "deep_top_100k": _raw(_deep(100_000).encode()),
    "deep_record_1100": _splice_first_record(_deep(1_100).encode()),
    "deep_record_100k": _splice_first_record(_deep(100_000).encode()),
    "huge_string_24m": _splice_first_record(b'"' + b"a" * (24 << 20) + b'"'),
    "lone_surrogate": _splice_first_record(b'"\\ud800"'),
    "invalid_utf8": _splice_first_record(b'"\xff\xfe\xc3"'),
    "nan": _splice_first_record(b"NaN"),
    "duplicate_record": _duplicate_record,
    "record_is_string": _record_is("x"),
    "directory": _directory,
    "missing": _missing,
    "symlink_loop": _symlink_loop,
    "dev_zero": _dev_zero,
    "unreadable": _unreadable,
}


def _set(path: tuple, value) -> Callable[[dict], None]:
    def edit(record: dict) -> None:
        target = record
        for key in path[:-1]:
            if isinstance(target, dict):
                target = target.get(key) if key != "*" else next(iter(target.values()), {})
            elif isinstance(target, list) and target:
                target = target[0]
        if isinstance(target, dict):
            if value is _DELETE:
                target.pop(path[-1], None)
            else:
                target[path[-1]] = value
        elif isinstance(target, list) and target and isinstance(target[0], dict):
            if value is _DELETE:
                target[0].pop(path[-1], None)
            else:
                target[0][path[-1]] = value
    return edit


_DELETE = object()


def _field_variants(fields: list[tuple]) -> dict[str, Mutation]:
    """For each field path: deleted, an object, null; for a number (a path ending in "#") also
    a numeral as a string, a huge and a negative value."""
    out: dict[str, Mutation] = {}
    for path in fields:
        numeric = path[-1].endswith("#")
        path = (*path[:-1], path[-1].rstrip("#"))
        name = ".".join(path).replace("*", "first")
        values = [("missing", _DELETE), ("object", {}), ("null", None)]
        if numeric:
            values += [("string", "12"), ("1e308", 1e308), ("negative", -5)]
        for label, value in values:
            out[f"{name}={label}"] = _record_edit(_set(path, value))
    return out


# Fields each kind of file is read for: variants of each.
KIND_FIELDS: dict[str, list[tuple]] = {
    "gqa_questions": [("question",), ("imageId",), ("answer",), ("semantic",)],
    "gqa_graphs": [("objects",), ("width#",), ("objects", "*", "name"), ("objects", "*", "x#"),
                   ("objects", "*", "w#"), ("objects", "*", "relations"),
                   ("objects", "*", "relations", "object"), ("objects", "*", "attributes")],
    "contrast": [("question_id",), ("image_id",), ("question",), ("answer",), ("perturbations",),
                 ("perturbations", "question"), ("perturbations", "answer"), ("perturbations", "evidence")],
    "predictions": [],
    "clevr_questions": [("question",), ("program",), ("image_filename",), ("answer",)],
    "clevr_scene": [("objects",), ("objects", "shape"), ("objects", "pixel_coords"), ("relationships",)],
    "vqa_questions": [("question",), ("question_id",), ("image_id",)],
    "vqa_annotations": [("answers",), ("question_id",), ("multiple_choice_answer",)],
    "objects": [],
    "manifest": [("items",), ("hits",)],
    "gold": [("question",), ("answer",), ("image_id",)],
    "review": [("item_id",), ("question",), ("answers",)],
}


def _in_first_row(inserted: bytes) -> Mutation:
    """`inserted` at the start of the first data row's first cell."""
    def make(src: Path, dest: Path) -> Path:
        header, rows = src.read_bytes().split(b"\r\n", 1)
        quote = b'"' if rows.startswith(b'"') else b""
        dest.write_bytes(header + b"\r\n" + quote + inserted + rows[len(quote):])
        return dest
    return make


def _csv_variants() -> dict[str, Mutation]:
    def rows(edit: Callable[[list[list[str]]], None]) -> Mutation:
        def make(src: Path, dest: Path) -> Path:
            import csv
            import io
            table = list(csv.reader(io.StringIO(src.read_text(encoding="utf-8"))))
            edit(table)
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\r\n").writerows(table)
            dest.write_text(buf.getvalue(), encoding="utf-8")
            return dest
        return make

    def answer_cell(value: str) -> Callable[[list[list[str]]], None]:
        def edit(table: list[list[str]]) -> None:
            column = next((i for i, h in enumerate(table[0]) if h.startswith("Answer.")), 0)
            table[1][column] = value
        return edit

    def drop_column(prefix: str) -> Callable[[list[list[str]]], None]:
        def edit(table: list[list[str]]) -> None:
            keep = [i for i, h in enumerate(table[0]) if not h.startswith(prefix)]
            table[:] = [[row[i] for i in keep if i < len(row)] for row in table]
        return edit

    return {
        "csv_empty": _raw(b""),
        "csv_header_only": lambda src, dest: (dest.write_bytes(src.read_bytes().splitlines(True)[0]), dest)[1],
        "csv_huge_cell": rows(answer_cell("x" * (200 << 10))),
        "csv_invalid_utf8": _in_first_row(b"\xff\xfe"),
        "csv_nul": _in_first_row(b"\x00"),
        "csv_no_answers": rows(drop_column("Answer.")),
        "csv_no_assignment": rows(drop_column("AssignmentId")),
        "csv_no_worker": rows(drop_column("WorkerId")),
        "csv_duplicate_row": rows(lambda t: t.append(list(t[1]))),
        "csv_ragged": rows(lambda t: t[1].__delitem__(slice(3, None))),
        "csv_unterminated_quote": lambda src, dest: (dest.write_bytes(src.read_bytes() + b'"unterminated,\r\n'), dest)[1],
        "csv_formula": rows(answer_cell('=HYPERLINK("http://example.org","x")')),
        "csv_bad_token": rows(answer_cell('{"no such token": "yes"}')),
        "csv_answer_json_deep": rows(answer_cell(_deep(100_000))),
        "csv_many_columns": rows(lambda t: [row.extend([""] * 20_000) for row in t]),
        "csv_binary": _raw(bytes(range(256)) * 64),
        "csv_directory": _directory,
        "csv_missing": _missing,
        "csv_unreadable": _unreadable,
    }


def variants(kind: str) -> dict[str, Mutation]:
    if kind == "results_csv":
        return _csv_variants()
    found = dict(GENERIC)
    found.update(_field_variants(KIND_FIELDS.get(kind, [])))
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
        Slot(g, "clevr_scene", "clevr_scenes", lambda b, h, o: [
            "generate", "--format", "clevr", "--questions", b["clevr_questions.json"], "--scene-graphs", h,
            "--out", o], "out", wrap="dir:superCLEVR_new_000000.json"),
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
        Slot("ood superclevr", "clevr_scene", "clevr_scenes", lambda b, h, o: [
            "ood", "superclevr", "--scenes", h, "--questions", b["clevr_questions.json"], "--out", o], "out",
             wrap="dir:superCLEVR_new_000000.json"),
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
    ]


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
    original = json.loads((base / "gen" / "original.json").read_bytes())
    (base / "predictions.json").write_bytes(_dump({qid: q["answer"] for qid, q in original.items()}))
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
    return {p.relative_to(base).as_posix(): p for p in [*base.rglob("*")]} | {"": base}


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
    mutation: Mutation
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
        if slot.wrap:
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
    if (not case.variant.endswith("unreadable") and source.is_file() and hostile.is_file()
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
        return Outcome(slot.command, case.slot_name, case.variant, "clean", code, seconds, "reported as failed checks")
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
        return Outcome(slot.command, case.slot_name, case.variant, "accepted", code, seconds)
    lines = _ERROR_LINE.findall(err)
    message = lines[-1][1] if lines else err.strip().splitlines()[-1] if err.strip() else ""
    located = Path(str(hostile)).name in message or (slot.wrap and str(arg_path.name) in message)
    verdict = "clean" if lines and located else "unlocated"
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
                verdict, detail = "accepted", f"status {status}"
            results.append(Outcome("serve", path, name, verdict, status, seconds, detail))
        return results
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()


# --- the matrix -------------------------------------------------------------------------------


VERDICTS = ("clean", "unlocated", "accepted", "crashed", "hung", "partial")


def print_table(outcomes: list[Outcome]) -> None:
    by_command: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        if o.verdict != "skipped":
            by_command[o.command][o.verdict] += 1
    total: Counter = sum(by_command.values(), Counter())
    header = f"{'command':<16}{'tried':>7}" + "".join(f"{v:>11}" for v in VERDICTS)
    print(header)
    print("-" * len(header))
    for command in sorted(by_command):
        c = by_command[command]
        print(f"{command:<16}{sum(c.values()):>7}" + "".join(f"{c[v]:>11}" for v in VERDICTS))
    print("-" * len(header))
    print(f"{'all':<16}{sum(total.values()):>7}" + "".join(f"{total[v]:>11}" for v in VERDICTS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="runs at once")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds a run may take before it is hung")
    parser.add_argument("--memory-gib", type=float, default=2.0, help="address-space cap of each run")
    parser.add_argument("--only", default="", help="comma-separated commands (e.g. generate,serve)")
    parser.add_argument("--report", type=Path, help="write every outcome here as JSON")
    parser.add_argument("--work", type=Path, help="workspace folder (default: a temporary one, removed)")
    args = parser.parse_args()
    memory = int(args.memory_gib * (1 << 30))
    work = args.work or Path(tempfile.mkdtemp(prefix="contrastgen-fuzz-"))
    work.mkdir(parents=True, exist_ok=True)
    only = {c.strip() for c in args.only.split(",") if c.strip()}
    try:
        files = build_workspace(work / "base")
        cases = []
        for i, slot in enumerate(_slots()):
            if only and slot.command not in only:
                continue
            slot_name = f"{i}:{slot.kind}"
            for variant, mutation in variants(slot.kind).items():
                cases.append(Case(slot, slot_name, variant, mutation))
        outcomes: list[Outcome] = []
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(_guarded, c, files, work, args.timeout, memory) for c in cases]
            for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
                o = future.result()
                outcomes.append(o)
                if o.verdict not in ("clean", "skipped"):
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
