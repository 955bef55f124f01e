"""What a path proposes (`Proposal`), what the driver keeps and numbers (`Perturbation`), and one
question's outcome on one path (`PerturbResult`).

Why one record for every path: `contrast_sets.jsonl` is read by `verify`, `evaluate`, the
exports, the crowd tools and the viewer, whichever path made a line. A perturbation's fields
come in one order (`Perturbation.to_dict`): its id, question, answer, rank, change, evidence,
the edited program where the path has one (GQA's `semantic`, CLEVR's `program`), and its kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contrastgen.records import contrast_set_record

EVIDENCE_VERSION = 1  # docs/output-formats.md, "Evidence schema"; the verifier checks it
CONTRAST, INVARIANCE = "contrast", "invariance"  # the answer changes; the answer provably stays

# The paths, as the driver's seeding names them; PROGRAM_PATH is also the `template` of a GQA
# program-path contrast set.
TEMPLATE_PATH, PROGRAM_PATH = "template", "program"
PROGRAM_SUFFIX = "p"  # the id suffix of a program edit, GQA's or CLEVR's


def perturbation_id(question_id: str, suffix: str, rank: int) -> str:
    """`<question id>_<suffix><rank>`: a template's `id_suffix`, or `p` for a program edit."""
    return f"{question_id}_{suffix}{rank}"


@dataclass(frozen=True)
class Proposal:
    """One candidate perturbation with its proof, before the driver ranks it.

    `program` holds the edited program where the path writes one (`{"semantic": [...]}` for a
    GQA program edit, `{"program": [...]}` for CLEVR); `ids` are the objects the new words
    denote (a template path builds its edited program from them)."""

    question: str
    answer: str
    change: dict[str, str]
    evidence: dict[str, Any]
    kind: str = CONTRAST
    program: dict[str, Any] = field(default_factory=dict)
    ids: tuple[str, ...] = ()

    @property
    def invariance(self) -> bool:
        return self.kind == INVARIANCE


@dataclass(frozen=True)
class Perturbation:
    """A kept proposal with its id and rank: one entry of a record's `perturbations`."""

    question_id: str
    rank: int
    proposal: Proposal

    def to_dict(self) -> dict[str, Any]:
        p = self.proposal
        return {"question_id": self.question_id, "question": p.question, "answer": p.answer, "rank": self.rank,
                "change": p.change, "evidence": p.evidence, **p.program, "kind": p.kind}


@dataclass
class PerturbResult:
    """One question on one path (a template, the program path, a CLEVR family): its
    perturbations (as `Perturbation.to_dict` gives them, rank order) or the reason it has none.

    `record_extra` are fields a path adds after the common ones (CLEVR's `dataset`, `family` and
    recovered `program`)."""

    question_id: str
    image_id: str
    question: str
    answer: str
    template: str | None
    slots: dict[str, str] = field(default_factory=dict)
    grounding: dict[str, Any] = field(default_factory=dict)
    perturbations: list[dict[str, Any]] = field(default_factory=list)
    reason: str | None = None
    types: dict[str, Any] = field(default_factory=dict)  # the question's GQA types, if it has them
    program: list[dict[str, Any]] | None = None  # the original's program, where the question has one
    record_extra: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """The contrast_sets.jsonl line, whether or not it has perturbations (the HTTP service
        returns it with `reason`)."""
        record = contrast_set_record(question_id=self.question_id, image_id=self.image_id,
                                     template=self.template, question=self.question, answer=self.answer,
                                     slots=self.slots, grounding=self.grounding,
                                     perturbations=self.perturbations, types=self.types,
                                     semantic=self.program)
        record.update(self.record_extra)
        return record

    def to_record(self) -> dict[str, Any] | None:
        """The contrast_sets.jsonl line, or None when nothing was produced."""
        return self.record() if self.perturbations else None
