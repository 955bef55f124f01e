"""The perturbation contract: what every path that perturbs a question emits, and the one driver
that numbers what it proposes.

A path (a template of `rules/templates.json`, the program edits of a dataset family) only
*proposes*: given one question and its scene it yields `Proposal`s, each with the evidence that
proves its answer, or raises `Refusal` with one of its family's reasons
(`families.base.Family.reasons`). The driver here
(`Ranking`) drops what the image already asks, keeps contrasts first and invariances in the
ranks left, up to `max_k`, and numbers the kept ones as `<question id>_<suffix><rank>`
(`perturbation_id`); `PerturbResult` is one question's outcome on one path, serialised by its
own `record()`. What is kept is a `Perturbation` (`contrastgen.records`), the class every reader
of `contrast_sets.jsonl` gets back too, invariance (`kind`) and a two-image group (`group`)
typed parts of it.

What the two other kinds of output share with this, and what they do not:
- two-image groups (`groups/`) are not proposed: a group is found for a pair the driver already
  kept, one at most, its two new cells proven on a second image; it is given to that
  perturbation (`Perturbation.group`), so it is written and read with it.
- caption negatives (`captions/`) are not ranked per question: an image's pair of each kind is
  chosen against running tallies over the images before it, so that a blind model cannot tell
  positive from negative (`captions.balance`), which no ranking of one caption's candidates can
  do; they share the evidence schema (`EVIDENCE_VERSION`) and have their own record
  (`captions.records`), read by `contrastgen.records.read_caption_records`.
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
