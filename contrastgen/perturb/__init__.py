"""The perturbation contract: what every path that perturbs a question emits, and the one driver
that numbers what it proposes.

A path (a template of `rules/templates.json`, the program edits of a dataset family) only
*proposes*: given one question and its scene it yields `Proposal`s, each with the evidence that
proves its answer, or raises `Refusal` with one of its family's reasons
(`families.base.Family.reasons`). The driver here
(`Ranking`) drops what the image already asks, keeps contrasts first and invariances in the
ranks left, up to `max_k`, and numbers the kept ones as `<question id>_<suffix><rank>`
(`perturbation_id`); `PerturbResult` is one question's outcome on one path, serialised by its
own `record()`. A new path (caption negatives, two-image groups) is one proposer on top of this.
"""

from contrastgen.perturb.ranking import Ranking, normalize_question, seeded_rng
from contrastgen.perturb.record import (
    CONTRAST,
    EVIDENCE_VERSION,
    INVARIANCE,
    PROGRAM_PATH,
    PROGRAM_SUFFIX,
    TEMPLATE_PATH,
    Perturbation,
    PerturbResult,
    Proposal,
    perturbation_id,
)
from contrastgen.perturb.refusal import Refusal

__all__ = ["CONTRAST", "EVIDENCE_VERSION", "INVARIANCE", "PROGRAM_PATH", "PROGRAM_SUFFIX",
           "TEMPLATE_PATH", "PerturbResult", "Perturbation", "Proposal", "Ranking", "Refusal",
           "normalize_question", "perturbation_id", "seeded_rng"]
