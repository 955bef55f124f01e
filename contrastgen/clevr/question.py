"""The CLEVR path for one question: read its words back into its family's program, execute it,
propose parameter and redundancy edits (`clevr.edits`), and let the driver rank them.

A record looks like a GQA program-path record (so `evaluate`, `verify`, `mturk export`, the viewer
and the HTTP service read it unchanged) and adds what CLEVR's tools need: `dataset: "clevr"`, the
`family` it was read with, and `program`, the original's recovered program in CLEVR's own format
(every perturbation carries its edited one). The evidence of a perturbation is its execution
trace and the scene facts it rests on (`clevr.evidence`).

The contrasts are drawn in a seeded order (`perturb.seeded_rng`) and take the first ranks; the
redundancy edits (invariances) fill the ranks left.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contrastgen.clevr.edits import PART_AMBIGUOUS, Edit, Editor
from contrastgen.clevr.evidence import engine_program, evidence, part_words_ambiguous
from contrastgen.clevr.executor import Invalid, execute
from contrastgen.clevr.scene_view import ClevrScene
from contrastgen.datasets.clevr_reading import (
    Reading,
    Unreadable,
    read_question,
    words_and_program_agree,
)
from contrastgen.datasets.clevr_vocab import load_vocabulary
from contrastgen.perturb import (
    CONTRAST,
    INVARIANCE,
    PROGRAM_SUFFIX,
    Perturbation,
    PerturbResult,
    Proposal,
    Ranking,
    Refusal,
    seeded_rng,
)

# The CLEVR path's seed string (`perturb.seeded_rng`): fixed, since changing it changes every output.
CLEVR_SEED = "{seed}:{question}"
UNREAD = "unread"  # the `template` a question counts under when its words were not read


@dataclass(frozen=True)
class ClevrFields:
    """What a CLEVR record writes after the common fields: its dataset, the family its words
    were read with, and the original's recovered program in CLEVR's own format."""

    family: Mapping[str, Any]  # {"template_filename", "question_family_index"}
    program: list[dict[str, Any]]
    dataset: str = "clevr"

    def to_dict(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "family": self.family, "program": self.program}


@dataclass
class ClevrOutcome:
    """One question's result, and the original's program as read (its GQA- and LXMERT-format views
    carry it); None when the words were not read."""

    result: PerturbResult
    program: list[dict[str, Any]] | None
    reading: Reading | None = None  # the original's words read back (`--groups` executes its program elsewhere)


def family_fields(reading: Reading) -> dict[str, Any]:
    """The record's `family`: the template file and index its words were read with (what a
    reader of a perturbation's words needs beside them)."""
    return {"template_filename": reading.family.file, "question_family_index": reading.family.index}


def types_of(reading: Reading) -> dict[str, str]:
    """A family's place in the statistics' question types, as GQA's `types` are."""
    return {"structural": reading.family.nodes[-1]["type"], "semantic": reading.family.file.removesuffix(".json"),
            "detailed": reading.family.key}


def unread(question_id: str, q: Mapping[str, Any], reason: str) -> PerturbResult:
    """A question counted under `reason` before (or without) its words being read."""
    return PerturbResult(question_id=question_id, image_id=str(q["imageId"]), question=str(q["question"]),
                         answer="", template=UNREAD, reason=reason)


def _proposal(edit: Edit, scene: ClevrScene) -> Proposal:
    return Proposal(question=edit.question, answer=edit.answer, change=edit.change,
                    evidence=evidence(edit.program, edit.execution, scene, edit.answer),
                    kind=INVARIANCE if edit.invariance else CONTRAST,
                    program={"program": engine_program(edit.program, edit.execution)})


def perturb_clevr_question(question_id: str, q: Mapping[str, Any], scene: ClevrScene, *, max_k: int,
                           seed: int, existing: set[str]) -> ClevrOutcome:
    """The question's contrast set, or the reason it has none. `existing`: the normalised texts
    of the image's questions, which no edit may repeat."""
    reading = read_question(q)
    if isinstance(reading, Unreadable):
        return ClevrOutcome(unread(question_id, q, reading.reason), None)
    result = PerturbResult(question_id=question_id, image_id=str(q["imageId"]), question=str(q["question"]),
                           answer="", template=reading.family.file.removesuffix(".json"),
                           slots=dict(reading.values), types=types_of(reading))
    try:
        perturbations, extra = _perturbations(question_id, q, reading, scene, max_k, seed, existing, result)
    except Refusal as r:
        result.reason = r.reason
    else:
        result.perturbations, result.extra = perturbations, extra
    return ClevrOutcome(result, reading.program(), reading)


def _perturbations(question_id: str, q: Mapping[str, Any], reading: Reading, scene: ClevrScene, max_k: int,
                   seed: int, existing: set[str], result: PerturbResult
                   ) -> tuple[list[Perturbation], ClevrFields]:
    if q.get("program") is not None and not words_and_program_agree(reading, q["program"]):
        raise Refusal("program_mismatch")
    program = reading.program()
    original = execute(program, scene)
    if isinstance(original, Invalid):
        raise Refusal("original_invalid")
    if part_words_ambiguous(program, original):
        raise Refusal(PART_AMBIGUOUS)
    gold = load_vocabulary().answer_words(original.answer)
    if "answer" in q and str(q["answer"]) != gold:
        raise Refusal("answer_mismatch")
    result.answer = gold  # set only here: the original's program is proven (`families.clevr` relies on it)
    ranking = Ranking(existing, max_k)
    editor = Editor(reading, scene, original, ranking.asked)
    contrasts = editor.contrasts()
    seeded_rng(CLEVR_SEED, seed, question_id).shuffle(contrasts)
    ranking.take(_proposal(e, scene) for e in contrasts)
    if not ranking.full:
        ranking.take(_proposal(e, scene) for e in editor.redundancy())
    if not ranking.kept:
        raise Refusal(PART_AMBIGUOUS if editor.refused[PART_AMBIGUOUS] else "no_edit")
    extra = ClevrFields(family=family_fields(reading), program=engine_program(program, original))
    return ranking.numbered(question_id, PROGRAM_SUFFIX), extra
