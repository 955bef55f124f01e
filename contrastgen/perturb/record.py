"""What a path proposes (`Proposal`), what the driver keeps and numbers (`Perturbation`), and one
question's outcome on one path (`PerturbResult`).

Why one record for every path: `contrast_sets.jsonl` is read by `verify`, `evaluate`, the
exports, the crowd tools and the viewer, whichever path made a line. The kept perturbation is
the same class the readers get back (`contrastgen.records.Perturbation`, core, so the exports
that may import only core read it too); its `to_dict` fixes the order of the written fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from contrastgen.records import CONTRAST, INVARIANCE, Perturbation, contrast_set_record

EVIDENCE_VERSION = 1  # docs/output-formats.md, "Evidence schema"; the verifier checks it

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

    def numbered(self, question_id: str, rank: int) -> Perturbation:
        """The kept proposal as its record's entry: its id (`perturbation_id`) and rank given."""
        return Perturbation(question_id=question_id, question=self.question, answer=self.answer, rank=rank,
                            change=self.change, evidence=self.evidence, program=self.program, kind=self.kind)


class RecordFields(Protocol):
    """Fields a path writes after the common ones of a record (CLEVR's `clevr.question.ClevrFields`)."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass
class PerturbResult:
    """One question on one path (a template, the program path, a CLEVR family): its
    perturbations (rank order) or the reason it has none.

    `extra` are the fields a path writes after the common ones (CLEVR's `dataset`, `family` and
    recovered `program`)."""

    question_id: str
    image_id: str
    question: str
    answer: str
    template: str | None
    slots: dict[str, str] = field(default_factory=dict)
    grounding: dict[str, Any] = field(default_factory=dict)
    perturbations: list[Perturbation] = field(default_factory=list)
    reason: str | None = None
    types: dict[str, Any] = field(default_factory=dict)  # the question's GQA types, if it has them
    program: list[dict[str, Any]] | None = None  # the original's program, where the question has one
    extra: RecordFields | None = None

    def record(self) -> dict[str, Any]:
        """The contrast_sets.jsonl line, whether or not it has perturbations (the HTTP service
        returns it with `reason`)."""
        record = contrast_set_record(question_id=self.question_id, image_id=self.image_id,
                                     template=self.template, question=self.question, answer=self.answer,
                                     slots=self.slots, grounding=self.grounding,
                                     perturbations=[p.to_dict() for p in self.perturbations], types=self.types,
                                     semantic=self.program)
        if self.extra is not None:
            record.update(self.extra.to_dict())
        return record

    def to_record(self) -> dict[str, Any] | None:
        """The contrast_sets.jsonl line, or None when nothing was produced."""
        return self.record() if self.perturbations else None
