"""Why a question ends without perturbations on a path: one exception, one list of reasons.

Every reason a (question, path) can end without perturbations is in `REASONS`; `stats.json`
counts them (per template, per GQA question type), docs/refusals.md and docs/clevr.md say what
each means, and a test holds the handlers, the program edits and the CLEVR path to this list, so
a new reason cannot appear undocumented. A proposer raises `Refusal`; the driver records its
reason on the question's `PerturbResult`.

What an executor or a reader cannot decide has its own finer vocabulary
(`programs.executor.ProgramRefusal`, `datasets.clevr_reading.Unreadable`): a path turns it into one of
these reasons.
"""

from __future__ import annotations

# GQA: the templates and the program path
GQA_REASONS = ("no_answer", "no_match", "no_scene_graph", "not_grounded", "ambiguous", "answer_mismatch",
               "no_distractor", "duplicate", "unannotated_prone", "unsupported_phrase", "no_relation",
               "no_opposite", "inconsistent_graph", "program_mismatch", "not_executable", "unaligned",
               "no_argument", "original_presupposition", "uninformative_answer", "attribute_kind",
               "answer_in_question", "several_colors")
# CLEVR and Super-CLEVR: the words read back into no family's program (`no_family`, `no_reading`,
# `ambiguous`, `program_mismatch`), the program does not run on the scene, a part's words select
# other parts than the raw name Super-CLEVR's engine matches (the original's, or those of every
# edit that held otherwise), or no edit holds
CLEVR_REASONS = ("no_family", "no_reading", "original_invalid", "part_ambiguous", "no_edit")
REASONS = GQA_REASONS + CLEVR_REASONS


class Refusal(Exception):
    """A question (or one of its candidates' searches) that cannot be perturbed with certainty;
    `reason` is one of `REASONS`, `detail` says more where a reader can use it."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
