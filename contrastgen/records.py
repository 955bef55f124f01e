"""The contrast-set record: built, read and validated here, and nowhere else.

A line of `contrast_sets.jsonl` is the contract between `generate` (and the HTTP service) and
everything that reads its output: `evaluate`, `verify`, `mturk export` and the API's evaluate.
Building it in one function and validating it in one parser means a field added or renamed here
reaches every reader at once, and a truncated or hand-edited file fails the same way everywhere:
with the file and the question id, never a KeyError in the middle of a bootstrap or an export.

The verify report lives here too, because the CLI and the API print the same JSON.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from contrastgen.answers import normalize_answer
from contrastgen.errors import InputError, duplicate_id
from contrastgen.files.manifest import CAPTION_SET, CONTRAST_SET, require_kind
from contrastgen.jsonio import read_jsonl, read_jsonl_lines

CONTRAST_FILE = "contrast_sets.jsonl"

# A record's fields, in the order a reader checks them.
RECORD_FIELDS = ("question_id", "image_id", "template", "question", "answer", "perturbations")


def contrast_set_record(*, question_id: str, image_id: str, template: str | None, question: str, answer: str,
                        slots: dict[str, str], grounding: dict[str, Any],
                        perturbations: list[dict[str, Any]], types: dict[str, Any],
                        semantic: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One line of contrast_sets.jsonl (the API adds `reason` to the same fields). `types` are the
    original's GQA question types (`structural`, `semantic`, `detailed`), empty when it had none;
    `semantic`, the original's program, is there on program-path records (the verifier compares
    the edited program with it)."""
    record = {"question_id": question_id, "image_id": image_id, "template": template,
              "question": question, "answer": answer, "slots": slots,
              "grounding": grounding, "perturbations": perturbations, "types": types}
    if semantic is not None:
        record["semantic"] = semantic
    return record


def question_type(record: Mapping[str, Any], level: str = "detailed") -> str:
    """A record's GQA question type at `level`, or "unknown" (records without types)."""
    types = record.get("types")
    value = types.get(level) if isinstance(types, Mapping) else None
    return value if isinstance(value, str) and value else "unknown"


CONTRAST, INVARIANCE = "contrast", "invariance"  # the answer changes; the answer provably stays


@dataclass(frozen=True)
class GroupCell:
    """One of a group's four questions on one image. The two on the record's own image are the
    original and the perturbation (`program` empty, `evidence` None: the record proves them);
    the two on the second image carry their edited program (GQA's `semantic`, CLEVR's `program`)
    and the evidence that proves their answer there."""

    question_id: str
    image_id: str
    question: str
    answer: str
    program: Mapping[str, Any] = field(default_factory=dict)
    evidence: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"question_id": self.question_id, "image_id": self.image_id, "question": self.question,
               "answer": self.answer, **self.program}
        if self.evidence is not None:
            out["evidence"] = self.evidence
        return out


@dataclass(frozen=True)
class Group:
    """A contrast pair seen on a second image (`generate --groups`, docs/groups.md): its four
    cells in NaturalBench's order (the original and the perturbation on the record's image,
    then the same two questions on `images[1]`). `kind` is `swap` or `differs`."""

    id: str
    kind: str
    images: tuple[str, str]
    cells: tuple[GroupCell, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "images": list(self.images),
                "cells": [c.to_dict() for c in self.cells]}


@dataclass(frozen=True)
class Perturbation:
    """One entry of a record's `perturbations`: what the generator writes and what every reader
    gets back (`to_dict` and `read_perturbation` are each other's inverse on the generator's
    output). Its fields come in one order: its id, question, answer, rank, change, evidence, the
    edited program where the path has one (GQA's `semantic`, CLEVR's `program`), its kind
    (`contrast`, or `invariance`: the answer provably stays) and, with `--groups`, its group.

    `answer` is the answer as written; `gold`, the normalised form a prediction is scored
    against."""

    question_id: str
    question: str
    answer: str
    rank: int
    change: Mapping[str, Any]
    evidence: Mapping[str, Any]
    program: Mapping[str, Any] = field(default_factory=dict)
    kind: str = CONTRAST
    group: Group | None = None

    @property
    def invariance(self) -> bool:
        return self.kind == INVARIANCE

    @property
    def change_kind(self) -> str:
        """What the edit changed: object, attribute, relation (or a CLEVR edit's kind)."""
        return self.change["kind"]

    @functools.cached_property
    def gold(self) -> str:
        return normalize_answer(self.answer)

    def to_dict(self) -> dict[str, Any]:
        out = {"question_id": self.question_id, "question": self.question, "answer": self.answer, "rank": self.rank,
               "change": self.change, "evidence": self.evidence, **self.program, "kind": self.kind}
        if self.group is not None:
            out["group"] = self.group.to_dict()
        return out


@dataclass(frozen=True)
class ContrastSet:
    """An original question and its perturbations (all ranks); metrics filter by rank."""

    question_id: str
    image_id: str
    template: str
    question: str
    answer: str  # normalised gold answer
    perturbations: tuple[Perturbation, ...]
    record: dict[str, Any] = field(compare=False)  # the raw record, ids as strings
    question_type: str = "unknown"  # GQA's types.detailed of the original

    def contrasts(self) -> ContrastSet:
        """The set with its contrast perturbations only (invariance ones are scored apart)."""
        return replace(self, perturbations=tuple(p for p in self.perturbations if not p.invariance))


def _field(rec: Mapping[str, Any], name: str, kind: type | tuple[type, ...], *, path: str | None,
           record: str) -> Any:
    if name not in rec:
        raise InputError(f"missing field {name!r}", path=path, record=record)
    value = rec[name]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(f"field {name!r} has the wrong type", path=path, record=record)
    return value


# Fields of an evidence fact that name an object of the graph (docs/output-formats.md, "Facts").
_FACT_ID_FIELDS = ("id", "subject", "object")
# The object fields each kind of fact must give (docs/output-formats.md, "Facts"; a caption's
# `may_be`, `not_attribute` and `not_relation` as docs/captions.md writes them): a fact about an
# object that does not say which object proves nothing.
_FACT_NEEDS: dict[str, tuple[str, ...]] = {
    "object": ("id",), "relation": ("subject", "object"), "side": ("id",), "color": ("id",),
    "part": ("object",), "only": ("ids",), "may_be": ("ids",), "not_attribute": ("id",),
    "not_relation": ("subject", "object"),
}


def _evidence(raw: Mapping[str, Any], *, path: str | None, record: str, facts_needed: bool = True) -> None:
    """The evidence's shape, as `verify` reads it: an object whose `facts` is a non-empty list of
    facts, each naming its kind, with object ids as strings. Why here as well as in verify: an
    export, the viewer or a crowd task shows the proof to people; a record whose proof is null or
    names no object must fail when it is read, not reach them looking proven. A caption's proof
    may rest on its reading alone (`facts_needed=False`); `verify` judges what it lacks."""
    evidence = raw.get("evidence")
    if not isinstance(evidence, Mapping):
        raise InputError("no 'evidence' object (the proof of what it claims)", path=path, record=record)
    facts = evidence.get("facts")
    if not isinstance(facts, list) or (facts_needed and not facts):
        raise InputError("evidence.facts must be a list of facts (an answer needs a proof)", path=path, record=record)
    for i, fact in enumerate(facts, 1):
        if not isinstance(fact, Mapping) or not isinstance(fact.get("fact"), str):
            raise InputError(f"evidence fact {i} is not an object with a string 'fact'", path=path, record=record)
        for key in _FACT_NEEDS.get(fact["fact"], ()):
            if key not in fact:
                raise InputError(f"evidence fact {i} ({fact['fact']}) has no {key!r} (the object it is about)",
                                 path=path, record=record)
        for key in _FACT_ID_FIELDS:
            if key in fact and not isinstance(fact[key], str):
                raise InputError(f"evidence fact {i}: field {key!r} must be an object id (a string), "
                                 f"not {fact[key]!r}", path=path, record=record)
        ids = fact.get("ids", [])
        if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
            raise InputError(f"evidence fact {i}: field 'ids' must be a list of object ids (strings)",
                             path=path, record=record)


_PROGRAM_FIELDS = ("semantic", "program")  # an edited program: GQA's, CLEVR's


def _group(raw: Any, *, path: str | None, record: str) -> Group:
    """A perturbation's two-image group, checked to be shaped as `generate --groups` writes it."""
    cells = raw.get("cells") if isinstance(raw, Mapping) else None
    if not (isinstance(raw, Mapping) and isinstance(raw.get("id"), str) and isinstance(raw.get("kind"), str)
            and isinstance(raw.get("images"), list) and len(raw["images"]) == 2
            and isinstance(cells, list) and len(cells) == 4
            and all(isinstance(c, Mapping) and isinstance(c.get("question_id"), str) and isinstance(c.get("question"), str)
                    and isinstance(c.get("answer"), str) for c in cells)):
        raise InputError("the perturbation's group is not shaped as `generate --groups` writes it "
                         "(id, kind, two images, four cells with question_id, question and answer)",
                         path=path, record=record)
    return Group(id=raw["id"], kind=raw["kind"], images=tuple(raw["images"]),  # type: ignore[arg-type]
                 cells=tuple(GroupCell(question_id=c["question_id"], image_id=c.get("image_id"),
                                       question=c["question"], answer=c["answer"],
                                       program={k: c[k] for k in _PROGRAM_FIELDS if k in c},
                                       evidence=c.get("evidence")) for c in cells))


def read_perturbation(raw: Any, *, parent: str, index: int, path: str | None, proofs: bool) -> Perturbation:
    """One entry of a record's `perturbations`, checked (`proofs`: its evidence too)."""
    where = f"question {parent} perturbation {index}"
    if not isinstance(raw, Mapping):
        raise InputError("perturbation is not an object", path=path, record=where)
    # the generator writes ids as strings, and a reader that turned an integer into one would
    # pass the record on unchanged to an export that then disagrees with its own predictions
    qid = _field(raw, "question_id", str, path=path, record=where)
    where = f"question {qid}"
    if proofs:
        _evidence(raw, path=path, record=where)
    rank = _field(raw, "rank", int, path=path, record=where)
    if rank < 1:
        raise InputError("field 'rank' must be >= 1", path=path, record=where)
    change = _field(raw, "change", Mapping, path=path, record=where)
    if not isinstance(change.get("kind"), str):
        raise InputError("field 'change.kind' is missing", path=path, record=where)
    evidence = raw.get("evidence")
    group = raw.get("group")
    return Perturbation(
        question_id=qid,
        question=_field(raw, "question", str, path=path, record=where),
        answer=_field(raw, "answer", str, path=path, record=where),
        rank=rank,
        change=change,
        evidence=evidence if isinstance(evidence, Mapping) else {},
        program={k: raw[k] for k in _PROGRAM_FIELDS if k in raw},
        kind=INVARIANCE if raw.get("kind") == INVARIANCE else CONTRAST,
        group=None if group is None else _group(group, path=path, record=where),
    )


def _contrast_set(rec: Any, *, line: int, path: str | None, proofs: bool) -> ContrastSet:
    where = f"line {line}"
    if not isinstance(rec, Mapping):
        raise InputError("contrast set is not an object", path=path, record=where)
    for name in RECORD_FIELDS:
        if name not in rec:
            raise InputError(f"missing field {name!r}", path=path, record=f"{where} ({rec.get('question_id')})")
    qid = str(_field(rec, "question_id", (str, int), path=path, record=where))
    where = f"question {qid}"
    raw_perts = _field(rec, "perturbations", list, path=path, record=where)
    if not raw_perts:
        raise InputError("contrast set has no perturbations (field 'perturbations' must be a non-empty list)",
                         path=path, record=where)
    perts = tuple(read_perturbation(p, parent=qid, index=j, path=path, proofs=proofs) for j, p in enumerate(raw_perts))
    image_id = str(_field(rec, "image_id", (str, int), path=path, record=where))
    return ContrastSet(
        question_id=qid,
        image_id=image_id,
        template=_field(rec, "template", str, path=path, record=where),
        question=_field(rec, "question", str, path=path, record=where),
        answer=normalize_answer(_field(rec, "answer", str, path=path, record=where)),
        perturbations=perts,
        record={**rec, "question_id": qid, "image_id": image_id},
        question_type=question_type(rec),
    )


def parse_contrast_sets(records: Iterable[Any], *, path: str | None = None, proofs: bool = True) -> list[ContrastSet]:
    """Validate contrast-set records (lines of `contrast_sets.jsonl`), in their given order.

    An original may head one set per template it matches; every perturbation id is unique and
    no perturbation id is an original's. With `proofs` (every reader that shows or passes on
    records: exports, the viewer, crowd tasks, `evaluate` of a contrast-set file) each
    perturbation's evidence must be shaped as verify reads it.
    """
    return list(iter_contrast_sets(records, path=path, proofs=proofs))


def iter_contrast_sets(records: Iterable[Any], *, path: str | None = None,
                       proofs: bool = True) -> Iterator[ContrastSet]:
    """`parse_contrast_sets`, one set at a time: a reader that streams (the exporter) holds only
    the ids seen, not every record. A bad record raises when it is reached."""
    seen = 0
    set_keys: dict[tuple[str, str], int] = {}  # (original's id, template) -> its line
    original_ids: dict[str, int] = {}
    pert_ids: dict[str, int] = {}
    for line, rec in enumerate(records, 1):
        cs = _contrast_set(rec, line=line, path=path, proofs=proofs)
        qid = cs.question_id
        first = set_keys.get((qid, cs.template), pert_ids.get(qid))
        clash = qid if first is not None else None
        for p in cs.perturbations:
            if clash is None and (p.question_id in pert_ids or p.question_id in original_ids):
                clash, first = p.question_id, pert_ids.get(p.question_id, original_ids.get(p.question_id))
            pert_ids.setdefault(p.question_id, line)
        if clash is not None:
            raise InputError(duplicate_id("question", clash, f"line {first}", f"line {line}"), path=path,
                             record=f"question {clash}")
        set_keys[(qid, cs.template)] = line
        original_ids.setdefault(qid, line)
        seen += 1
        yield cs
    if not seen:
        raise InputError("no contrast sets found (file is empty)", path=path)


def contrast_file(path: str | os.PathLike[str]) -> Path:
    """The `contrast_sets.jsonl` of a `generate` output directory (or the file itself); a
    directory whose manifest says it is another kind of output is refused, naming that kind."""
    p = Path(path)
    require_kind(p, CONTRAST_SET)
    if p.is_dir() or (not p.exists() and p.suffix != ".jsonl"):  # a missing output directory
        p = p / CONTRAST_FILE
    if not p.is_file():
        raise InputError("file not found (is this the output of `contrastgen generate`?)", path=str(p))
    return p


def read_contrast_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The raw records of a contrast file or output directory, streamed in file order.

    The first record is read before this returns, so a missing or empty file fails at once
    (before a caller's slow loading of scene graphs).
    """
    return _started(contrast_file(path), "no contrast sets")


def read_contrast_lines(path: str | os.PathLike[str]) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """`read_contrast_records`, each record with its line: for a caller that hands records to
    other processes (`verify.sharded`)."""
    return _started(contrast_file(path), "no contrast sets", read_jsonl_lines)


def _started(file: Path, nothing: str, read: Callable[[Path], Iterator[Any]] = read_jsonl) -> Iterator[Any]:
    """The records of a JSON-lines file, the first read before this returns (so an empty or
    missing file fails now, not at a caller's first use)."""
    records = read(file)
    first = next(records, None)
    if first is None:
        raise InputError(f"file is empty: {nothing}", path=str(file))

    def chained() -> Iterator[Any]:
        yield first
        yield from records

    return chained()


def load_contrast_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every raw record of a contrast file or output directory, in file order."""
    return list(read_contrast_records(path))


def load_contrast_sets(path: str | os.PathLike[str]) -> list[ContrastSet]:
    """Read and validate a contrast file or output directory."""
    return parse_contrast_sets(read_contrast_records(path), path=str(contrast_file(path)))


# --- caption records (`contrastgen captions generate`, docs/captions.md) ---------------------------

CAPTIONS_FILE = "captions.jsonl"


def caption_file(path: str | os.PathLike[str]) -> Path:
    """The `captions.jsonl` of a `captions generate` output directory (or the file itself); a
    directory whose manifest says it is another kind of output is refused, naming that kind."""
    p = Path(path)
    require_kind(p, CAPTION_SET)
    if p.is_dir() or (not p.exists() and p.suffix != ".jsonl"):
        p = p / CAPTIONS_FILE
    if not p.is_file():
        raise InputError("file not found (is this the output of `contrastgen captions generate`?)", path=str(p))
    return p


def _caption_record(rec: Any, *, line: int, path: str) -> dict[str, Any]:
    """The fields every reader of a caption record relies on, checked; the record as given."""
    where = f"line {line}"
    if not isinstance(rec, Mapping):
        raise InputError("caption record is not an object", path=path, record=where)
    cid = _field(rec, "id", str, path=path, record=where)
    where = f"caption {cid}"
    _field(rec, "image_id", (str, int), path=path, record=where)
    _field(rec, "caption", str, path=path, record=where)
    for name in ("region", "image_size"):
        box = _field(rec, name, list, path=path, record=where)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in box):
            raise InputError(f"field {name!r} must be a list of whole numbers", path=path, record=where)
    _evidence(rec, path=path, record=where, facts_needed=False)
    negatives = _field(rec, "negatives", list, path=path, record=where)
    for i, neg in enumerate(negatives):
        at = f"{where} negative {i}"
        if not isinstance(neg, Mapping):
            raise InputError("negative is not an object", path=path, record=at)
        for name in ("id", "kind", "caption"):
            _field(neg, name, str, path=path, record=at)
        _evidence(neg, path=path, record=at, facts_needed=False)
    return {**rec, "image_id": str(rec["image_id"])}


def read_caption_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The records of a captions file or output directory, checked and streamed in file order;
    an id given twice is refused. A missing or empty file fails before this returns."""
    file = caption_file(path)
    records = _started(file, "no captions")

    def checked() -> Iterator[dict[str, Any]]:
        seen: dict[str, int] = {}
        for line, rec in enumerate(records, 1):
            out = _caption_record(rec, line=line, path=str(file))
            for key in (out["id"], *(n["id"] for n in out["negatives"])):
                if key in seen:
                    raise InputError(duplicate_id("caption", key, f"line {seen[key]}", f"line {line}"),
                                     path=str(file), record=f"caption {out['id']}")
                seen[key] = line
            yield out

    return checked()


# --- the verify report ------------------------------------------------------------------------


@dataclass
class Failure:
    """One check that did not hold. `perturbation_id` is None for a problem with the whole record.

    `check` names the kind of check (one of verify.checker.CHECKS) so that reports can count
    failures by kind.
    """

    question_id: str
    perturbation_id: str | None
    problem: str
    check: str = "structure"


@dataclass
class VerifyReport:
    """`checked` counts perturbations; `failures` lists every problem found (several per
    perturbation possible); `check_order` is the order `by_check` lists the kinds in."""

    checked: int
    failures: list[Failure] = field(default_factory=list)
    check_order: tuple[str, ...] = ()
    groups: int = 0  # two-image groups re-proven (`generate --groups`), each with its four cells

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def failed_perturbations(self) -> int:
        """How many distinct perturbations (or whole records) failed at least one check."""
        return len({(f.question_id, f.perturbation_id) for f in self.failures})

    def by_check(self) -> dict[str, int]:
        """Problems per kind of check, in `check_order`, kinds with none left out."""
        counts = dict.fromkeys(self.check_order, 0)
        for f in self.failures:
            counts[f.check] = counts.get(f.check, 0) + 1
        return {check: n for check, n in counts.items() if n}

    def as_dict(self, *, unannotated_prone_rules: str | None, file: str | None = None) -> dict[str, Any]:
        """The report as `contrastgen verify --json` prints it and the API returns it (without `file`)."""
        out: dict[str, Any] = {} if file is None else {"file": file}
        out.update({
            "checked": self.checked,
            **({"groups": self.groups} if self.groups else {}),
            "failed": self.failed_perturbations,
            "ok": self.ok,
            "unannotated_prone_rules": unannotated_prone_rules,
            "by_check": self.by_check(),
            "failures": [{"question_id": f.question_id, "perturbation_id": f.perturbation_id,
                          "problem": f.problem, "check": f.check} for f in self.failures],
        })
        return out
