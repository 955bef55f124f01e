"""Reading MTurk batch results CSVs back into per-item annotations.

The requester site's "Download CSV" gives one row per assignment with MTurk's own columns
(`HITId`, `AssignmentId`, `WorkerId`, `AssignmentStatus`, ...), the batch input echoed as
`Input.<variable>`, and the answers. crowd-html-elements answers arrive either flattened
(`Answer.item1_answer`, `Answer.item1_cannot_tell.on`) or, from API-created HITs, as one JSON
column `Answer.taskAnswers`; both are accepted. Because paying for a batch and then scoring it
against the wrong manifest is an easy and costly mistake, every row is checked against the
manifest: its HIT must be one we exported, with exactly the items we put in it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contrastgen.answers import normalize_answer
from contrastgen.errors import InputError
from contrastgen.files.csv_cells import restored_row
from contrastgen.files.csv_reading import csv_rows

CANNOT_TELL = "cannot tell"
REQUIRED_COLUMNS = ("HITId", "AssignmentId", "WorkerId", "AssignmentStatus")
KEPT_STATUSES = ("Approved", "Submitted")
DROPPED_STATUSES = ("Rejected",)
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off", ""}


@dataclass(frozen=True)
class Annotation:
    """One worker's answer to one item, normalised like the evaluator normalises predictions."""

    item: str
    hit_token: str
    hit_id: str
    assignment_id: str
    worker_id: str
    raw_answer: str
    cannot_tell: bool
    label: str
    order: int


@dataclass
class ResultsBatch:
    annotations: list[Annotation]
    rejected_assignments: int
    kept_assignments: int
    blank_answers: int
    files: list[str]


def _truthy(value: Any, *, path: str, record: str, column: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError(f"column {column!r} holds {value!r}, expected true/false", path=path, record=record)


def _answers_from_row(row: Mapping[str, str], slot_fields: list[tuple[str, str]], *, mode: str,
                      path: str, record: str) -> list[tuple[str, bool]]:
    """(answer text, cannot-tell) for each slot of one assignment."""
    if mode == "json":
        try:
            parsed = orjson.loads(row["Answer.taskAnswers"] or "null")
        except orjson.JSONDecodeError as exc:
            raise InputError(f"Answer.taskAnswers is not JSON ({exc})", path=path, record=record) from None
        if isinstance(parsed, list) and len(parsed) == 1:
            parsed = parsed[0]
        if not isinstance(parsed, dict):
            raise InputError("Answer.taskAnswers is not a one-object JSON list", path=path, record=record)
        out = []
        for answer_field, box_field in slot_fields:
            box = parsed.get(box_field, {})
            checked = box.get("on", False) if isinstance(box, dict) else box
            out.append((str(parsed.get(answer_field, "") or ""),
                        _truthy(checked, path=path, record=record, column=f"taskAnswers.{box_field}")))
        return out
    out = []
    for answer_field, box_field in slot_fields:
        box_col = f"Answer.{box_field}.on"
        box_value = row.get(box_col, row.get(f"Answer.{box_field}", ""))
        out.append((row.get(f"Answer.{answer_field}", "") or "",
                    _truthy(box_value, path=path, record=record, column=box_col)))
    return out


def _answer_mode(columns: list[str], slot_fields: list[tuple[str, str]], path: str) -> str:
    if "Answer.taskAnswers" in columns:
        return "json"
    missing = [f"Answer.{a}" for a, _ in slot_fields if f"Answer.{a}" not in columns]
    if missing:
        raise InputError(
            f"results CSV lacks the answer column(s) {', '.join(missing[:3])}"
            f"{' ...' if len(missing) > 3 else ''}: it was not made with this export's layout", path=path)
    return "flat"


def _check_columns(columns: list[str], manifest: Mapping[str, Any], path: str) -> None:
    if not columns:
        raise InputError("results CSV is empty", path=path)
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        raise InputError(f"not an MTurk batch results CSV: missing column(s) {', '.join(missing)}", path=path)
    inputs = {c[len("Input."):] for c in columns if c.startswith("Input.")}
    expected = set(manifest["columns"])
    if inputs != expected:
        lacks = sorted(expected - inputs)
        extra = sorted(inputs - expected)
        detail = "; ".join(p for p in (
            f"missing Input.{', Input.'.join(lacks[:3])}" if lacks else "",
            f"unexpected Input.{', Input.'.join(extra[:3])}" if extra else "") if p)
        raise InputError(f"results CSV has a different layout from the manifest ({detail})", path=path)


def read_results(paths: Iterable[str | os.PathLike[str]], manifest: Mapping[str, Any]) -> ResultsBatch:
    """Parse and check every results CSV against the manifest; drop rejected assignments."""
    hits = {h["hit_token"]: h["items"] for h in manifest["hits"]}
    roles = {tok: item["role"] for tok, item in manifest["items"].items()}
    n_slots = manifest["params"]["items_per_hit"]
    slot_fields = [(f"item{s}_answer", f"item{s}_cannot_tell") for s in range(1, n_slots + 1)]
    annotations: list[Annotation] = []
    seen_assignments: dict[str, str] = {}
    seen_worker_hit: set[tuple[str, str]] = set()
    hit_ids: dict[str, str] = {}
    rejected = kept = blank = 0
    files: list[str] = []
    order = 0
    for p in paths:
        path = str(p)
        files.append(path)
        if not Path(p).is_file():
            raise InputError("file not found", path=path)
        with csv_rows(p) as reader:
            columns = list(reader.fieldnames or [])
            _check_columns(columns, manifest, path)
            mode = _answer_mode(columns, slot_fields, path)
            n_rows = 0
            for lineno, raw in enumerate(reader, 2):
                n_rows += 1
                if None in raw:
                    raise InputError("row has more fields than the header", path=path, record=f"line {lineno}")
                row = restored_row(raw)  # cells written with a formula-guarding apostrophe read as written
                hit_id = row["HITId"]
                record = f"line {lineno} (HITId {hit_id}, AssignmentId {row['AssignmentId']})"
                token = row["Input.hit_token"]
                if token not in hits:
                    raise InputError(f"unknown HIT (hit_token {token!r} is not in the manifest)",
                                     path=path, record=record)
                if hit_ids.setdefault(hit_id, token) != token:
                    raise InputError("HITId appears with two different hit_tokens", path=path, record=record)
                row_items = [row[f"Input.item{s}_token"] for s in range(1, n_slots + 1)]
                if row_items != hits[token]:
                    raise InputError("the HIT's items differ from the manifest's: results of another export?",
                                     path=path, record=record)
                aid = row["AssignmentId"]
                if aid in seen_assignments:
                    raise InputError(f"assignment appears twice (also in {seen_assignments[aid]})",
                                     path=path, record=record)
                seen_assignments[aid] = path
                status = row["AssignmentStatus"]
                if status in DROPPED_STATUSES:
                    rejected += 1
                    continue
                if status not in KEPT_STATUSES:
                    raise InputError(f"unknown AssignmentStatus {status!r}", path=path, record=record)
                worker = row["WorkerId"]
                if (worker, token) in seen_worker_hit:
                    raise InputError(f"worker {worker} answered the same HIT twice", path=path, record=record)
                seen_worker_hit.add((worker, token))
                kept += 1
                answers = _answers_from_row(row, slot_fields, mode=mode, path=path, record=record)
                for item, (text, unsure) in zip(row_items, answers, strict=True):
                    if roles[item] == "padding":
                        continue
                    label = CANNOT_TELL if unsure else normalize_answer(text)
                    if not label:
                        blank += 1
                        continue
                    annotations.append(Annotation(
                        item=item, hit_token=token, hit_id=hit_id, assignment_id=aid, worker_id=worker,
                        raw_answer=text, cannot_tell=unsure, label=label, order=order))
                    order += 1
        if n_rows == 0:
            raise InputError("results CSV has a header but no assignments", path=path)
    if not files:
        raise InputError("no results CSV given")
    return ResultsBatch(annotations=annotations, rejected_assignments=rejected, kept_assignments=kept,
                        blank_answers=blank, files=files)
