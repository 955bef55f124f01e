"""Relative Degrade, Super-CLEVR's measure of domain robustness (Li et al. 2023, section 5.2,
Table 2): the share of its accuracy a model loses when the test data differ from its training data
along one factor.

The paper: "if a model gets accuracy a under in-domain testing ... and accuracy b under
out-of-domain testing ..., then RD = (a - b)/a. Since we train each model on three data variants,
the RD's ... are averaged"; and for the concept distribution (footnote 1) "the accuracy drop from
head to tail and the drop from long to oppo, take their average, and divide by the accuracy on
bal". Three things the words leave open are settled by Table 2 itself, which this definition
reproduces from Table 1 for all five models and four factors (tests/ood/test_relative_degrade.py):

- for a model trained on variant v, the drops to every other variant are *summed* (not averaged);
  for the distribution factor the head->tail and long->oppo drops are summed too (the footnote's
  "average" would give half of every figure in the column);
- the *absolute value* of that sum is divided by the reference accuracy: a model trained on the
  hard variant that does better on the easy one counts as degrading by that much (NSVQA's visual
  RD is 17.48 only so; the signed sum gives 15.63);
- the reference of the distribution factor is the accuracy on bal of the same model (trained on v).

So, with acc_v(t) the accuracy of the model trained on v, tested on variant t:
    RD(v) = |sum over the factor's shifts (s -> t) of acc_v(s) - acc_v(t)| / acc_v(reference(v))
    RD    = mean of RD(v) over the training variants
where a factor's shifts are, unless it names its own, from v itself to each other variant, and its
reference is v itself unless it names one. One definition serves the paper's train-on-each-variant
matrix and the splits of one test set (`superclevr_eval`), which are a one-training-variant case.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from contrastgen.resources import rules_resource

Accuracy = Mapping[str, Mapping[str, float | None]]  # training variant -> test variant -> accuracy


@dataclass(frozen=True)
class Factor:
    """A domain-shift factor: the variants models are trained on, the drops measured for each, and
    what a drop is divided by."""

    name: str
    variants: tuple[str, ...]
    shifts: tuple[tuple[str, str], ...] = ()  # (from, to) test variants; empty: from v to each other variant
    reference: str | None = None  # the test variant a drop is divided by; None: the training variant

    def shifts_for(self, trained_on: str) -> tuple[tuple[str, str], ...]:
        if self.shifts:
            return self.shifts
        return tuple((trained_on, other) for other in self.variants if other != trained_on)

    def reference_for(self, trained_on: str) -> str:
        return self.reference or trained_on

    def tests_for(self, trained_on: str) -> list[str]:
        """The test variants a model trained on `trained_on` needs accuracies on, in first-use order."""
        names = [t for pair in self.shifts_for(trained_on) for t in pair] + [self.reference_for(trained_on)]
        return list(dict.fromkeys(names))


@dataclass(frozen=True)
class Degrade:
    """RD of one training variant, with the figures it comes from."""

    trained_on: str
    drop: float  # the signed sum of the drops
    reference: float
    value: float  # |drop| / reference


@dataclass(frozen=True)
class RelativeDegrade:
    factor: str
    value: float | None  # mean over `by_training`; None when no training variant has every accuracy
    by_training: dict[str, Degrade] = field(default_factory=dict)
    missing: dict[str, list[str]] = field(default_factory=dict)  # training variant -> test variants lacking

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value,
                "by_training": {v: {"drop": d.drop, "reference": d.reference, "value": d.value}
                                for v, d in self.by_training.items()},
                "missing": self.missing}


def degrade_of(factor: Factor, trained_on: str, accuracy: Mapping[str, float | None]) -> Degrade | None:
    """RD(v) of a model trained on `trained_on`, from its accuracy on each test variant; None when
    one it needs is missing or the reference accuracy is 0."""
    needed = factor.tests_for(trained_on)
    if any(accuracy.get(t) is None for t in needed):
        return None
    acc = {t: float(accuracy[t]) for t in needed}  # type: ignore[arg-type]
    reference = acc[factor.reference_for(trained_on)]
    if reference == 0:
        return None
    drop = sum(acc[a] - acc[b] for a, b in factor.shifts_for(trained_on))
    return Degrade(trained_on, drop, reference, abs(drop) / reference)


def relative_degrade(factor: Factor, accuracy: Accuracy) -> RelativeDegrade:
    """RD of `factor` from a model's accuracies (training variant -> test variant -> accuracy),
    averaged over the training variants that have every accuracy they need; the others are named
    in `missing`, never guessed."""
    by_training: dict[str, Degrade] = {}
    missing: dict[str, list[str]] = {}
    for v in factor.variants:
        tested = accuracy.get(v)
        if tested is None:
            continue
        one = degrade_of(factor, v, tested)
        if one is None:
            missing[v] = [t for t in factor.tests_for(v) if tested.get(t) is None]
        else:
            by_training[v] = one
    value = sum(d.value for d in by_training.values()) / len(by_training) if by_training else None
    return RelativeDegrade(factor.name, value, by_training, missing)


@functools.cache
def paper_factors() -> dict[str, Factor]:
    """The paper's four factors (rules/ood/superclevr_variants.json), in its Table 2 order."""
    data = orjson.loads(rules_resource("ood", "superclevr_variants.json").read_bytes())
    return {name: Factor(name, tuple(f["variants"]), tuple(tuple(s) for s in f.get("shifts", ())),  # type: ignore[misc]
                         f.get("reference"))
            for name, f in data["factors"].items()}
