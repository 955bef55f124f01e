"""Why a question ends without perturbations on a path: one exception, and where its reasons are
listed.

A proposer raises `Refusal(reason)`; the driver records its reason on the question's
`PerturbResult`, and `stats.json` counts them (per template, per question type). Each dataset
family lists the reasons its paths give (`families.base.Family.reasons`; `families.all_reasons()`
is every registered family's); the docs say what each means, and a test holds the paths to those
lists, so a new reason cannot appear undocumented.

What an executor or a reader cannot decide has its own finer vocabulary
(`programs.executor.ProgramRefusal`, `datasets.clevr_reading.Unreadable`): a path turns it into one
of its family's reasons.
"""

from __future__ import annotations


class Refusal(Exception):
    """A question (or one of its candidates' searches) that cannot be perturbed with certainty;
    `reason` is one of its family's reasons, `detail` says more where a reader can use it."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
