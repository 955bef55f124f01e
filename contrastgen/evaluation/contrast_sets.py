"""Reading `contrast_sets.jsonl` into validated records the metrics can index without checks.

The file is the contract between `generate` and `evaluate` (README, "Output formats"). We check
the fields evaluation relies on once, here, so that a truncated or hand-edited file fails with
the file and the question id rather than a KeyError in the middle of a bootstrap.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contrastgen.answers import normalize_answer
from contrastgen.errors import InputError
from contrastgen.jsonio import read_jsonl

CONTRAST_FILE = "contrast_sets.jsonl"


@dataclass(frozen=True)
class Perturbation:
    question_id: str
    question: str
    answer: str  # normalised gold answer
    rank: int
    kind: str  # object | attribute | relation
    record: Mapping[str, Any]  # the raw entry, kept for error analysis (change, evidence)


@dataclass(frozen=True)
class ContrastSet:
    """An original question and its perturbations (all ranks); metrics filter by rank."""

    question_id: str
    image_id: str
    template: str
    question: str
    answer: str  # normalised gold answer
    perturbations: tuple[Perturbation, ...]

    def up_to(self, k: int) -> tuple[Perturbation, ...]:
        """The nested set for k: perturbations of rank <= k."""
        return tuple(p for p in self.perturbations if p.rank <= k)


def _field(rec: Mapping[str, Any], name: str, kind: type | tuple[type, ...], *, path: str | None,
           record: str) -> Any:
    if name not in rec:
        raise InputError(f"missing field {name!r}", path=path, record=record)
    value = rec[name]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(f"field {name!r} has the wrong type", path=path, record=record)
    return value


def _perturbation(raw: Any, *, parent: str, index: int, path: str | None) -> Perturbation:
    where = f"question {parent} perturbation {index}"
    if not isinstance(raw, Mapping):
        raise InputError("perturbation is not an object", path=path, record=where)
    qid = str(_field(raw, "question_id", (str, int), path=path, record=where))
    where = f"question {qid}"
    rank = _field(raw, "rank", int, path=path, record=where)
    if rank < 1:
        raise InputError("field 'rank' must be >= 1", path=path, record=where)
    change = _field(raw, "change", Mapping, path=path, record=where)
    kind = change.get("kind")
    if not isinstance(kind, str):
        raise InputError("field 'change.kind' is missing", path=path, record=where)
    return Perturbation(
        question_id=qid,
        question=_field(raw, "question", str, path=path, record=where),
        answer=normalize_answer(_field(raw, "answer", str, path=path, record=where)),
        rank=rank,
        kind=kind,
        record=raw,
    )


def parse_contrast_sets(records: Iterable[Mapping[str, Any]], *,
                        path: str | None = None) -> list[ContrastSet]:
    """Validate contrast-set records (lines of `contrast_sets.jsonl`), in their given order."""
    out: list[ContrastSet] = []
    set_keys: set[tuple[str, str]] = set()
    original_ids: set[str] = set()
    pert_ids: set[str] = set()
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping):
            raise InputError("contrast set is not an object", path=path, record=f"line {i + 1}")
        qid = str(_field(rec, "question_id", (str, int), path=path, record=f"line {i + 1}"))
        where = f"question {qid}"
        raw_perts = _field(rec, "perturbations", list, path=path, record=where)
        if not raw_perts:
            raise InputError("contrast set has no perturbations", path=path, record=where)
        perts = tuple(_perturbation(p, parent=qid, index=j, path=path)
                      for j, p in enumerate(raw_perts))
        template = str(_field(rec, "template", str, path=path, record=where))
        # An original may head one set per template it matches; perturbation ids are unique.
        clash = qid if (qid, template) in set_keys or qid in pert_ids else None
        for p in perts:
            if clash is None and (p.question_id in pert_ids or p.question_id in original_ids):
                clash = p.question_id
            pert_ids.add(p.question_id)
        if clash is not None:
            raise InputError("question id appears twice", path=path, record=f"question {clash}")
        set_keys.add((qid, template))
        original_ids.add(qid)
        out.append(ContrastSet(
            question_id=qid,
            image_id=str(rec.get("image_id", "")),
            template=template,
            question=_field(rec, "question", str, path=path, record=where),
            answer=normalize_answer(_field(rec, "answer", str, path=path, record=where)),
            perturbations=perts,
        ))
    if not out:
        raise InputError("no contrast sets found", path=path)
    return out


def contrast_file(contrast_dir: str | os.PathLike[str]) -> Path:
    """The `contrast_sets.jsonl` of a `generate` output directory (or the file itself)."""
    p = Path(contrast_dir)
    if p.is_dir():
        p = p / CONTRAST_FILE
    if not p.is_file():
        raise InputError(f"no {CONTRAST_FILE} here; is this the output of `contrastgen generate`?",
                         path=str(p))
    return p


def load_contrast_records(contrast_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The raw records of a contrast directory, in file order."""
    path = contrast_file(contrast_dir)
    records = list(read_jsonl(path))
    if not records:
        raise InputError("file is empty", path=str(path))
    return records
