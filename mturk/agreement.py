"""Inter-annotator agreement and confidence intervals, from well-kept libraries.

Fleiss' kappa comes from statsmodels, Cohen's from scikit-learn, Krippendorff's alpha from
crowd-kit, intervals from scipy: these are the implementations reviewers know, so a number in
our report means what it means in theirs. Our code only decides which annotations go in:

- Fleiss' kappa assumes every item was rated by the same number of raters; after rejected
  assignments are dropped some items have fewer, so it is computed over the items with the
  most common number of ratings, and the report says how many that was.
- Cohen's kappa is for two annotators; on MTurk the "annotators" of an item are whoever took its
  assignments, so we compare each item's first and second rating (in results-file order), as the
  paper's setting with two ratings per item does. Krippendorff's alpha uses every rating.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from crowdkit.metrics.data import alpha_krippendorff
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa


def _finite(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


@dataclass(frozen=True)
class Agreement:
    fleiss_kappa: float | None
    fleiss_items: int
    fleiss_raters: int
    cohen_kappa: float | None
    cohen_items: int
    krippendorff_alpha: float | None
    rated_items: int

    def as_dict(self) -> dict[str, float | int | None]:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def fleiss(labels: Mapping[str, Sequence[str]]) -> tuple[float | None, int, int]:
    """Fleiss' kappa over items with the most common number (>= 2) of ratings."""
    counts = Counter(len(v) for v in labels.values() if len(v) >= 2)
    if not counts:
        return None, 0, 0
    n_raters = max(counts, key=lambda n: (counts[n], n))
    rows = [list(v) for _, v in sorted(labels.items()) if len(v) == n_raters]
    table, _ = aggregate_raters(np.array(rows, dtype=object))
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        kappa = fleiss_kappa(table, method="fleiss")
    return _finite(kappa), len(rows), n_raters


def cohen_first_two(labels: Mapping[str, Sequence[str]]) -> tuple[float | None, int]:
    """Cohen's kappa between each item's first and second rating."""
    pairs = [(v[0], v[1]) for _, v in sorted(labels.items()) if len(v) >= 2]
    if not pairs:
        return None, 0
    a, b = zip(*pairs, strict=True)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        kappa = cohen_kappa_score(list(a), list(b))
    return _finite(kappa), len(pairs)


def krippendorff(frame: pd.DataFrame) -> float | None:
    """Krippendorff's alpha (nominal) over all items with >= 2 ratings; `frame` has task/worker/label."""
    sizes = frame.groupby("task")["label"].transform("size")
    multi = frame[sizes >= 2]
    if multi.empty or multi["label"].nunique() < 2:
        return None
    return _finite(alpha_krippendorff(multi[["task", "worker", "label"]]))


def agreement(labels: Mapping[str, Sequence[str]], frame: pd.DataFrame) -> Agreement:
    """All agreement figures for one set of items; `labels` maps item -> ratings in order."""
    fk, f_items, f_raters = fleiss(labels)
    ck, c_items = cohen_first_two(labels)
    return Agreement(fleiss_kappa=fk, fleiss_items=f_items, fleiss_raters=f_raters, cohen_kappa=ck,
                     cohen_items=c_items, krippendorff_alpha=krippendorff(frame),
                     rated_items=sum(1 for v in labels.values() if v))


def wilson(successes: int, n: int, confidence: float = 0.95) -> tuple[float | None, float | None]:
    """Wilson score interval for a proportion (scipy's binomtest)."""
    if n == 0:
        return None, None
    ci = stats.binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def bootstrap_mean(values: Sequence[float], *, seed: int, confidence: float = 0.95,
                   n_resamples: int = 2000) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of a mean over items (resampling items, not ratings).

    Ratings of one item are correlated, so resampling ratings would understate the width.
    """
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None, None
    if np.all(data == data[0]):
        return float(data[0]), float(data[0])
    res = stats.bootstrap((data,), np.mean, confidence_level=confidence, n_resamples=n_resamples,
                          method="percentile", rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def paired_bootstrap_diff(a: Sequence[float], b: Sequence[float], *, seed: int, confidence: float = 0.95,
                          n_resamples: int = 2000) -> tuple[float | None, float | None]:
    """Percentile interval of mean(a - b) for paired values (original vs perturbed of one image)."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return bootstrap_mean(diff.tolist(), seed=seed, confidence=confidence, n_resamples=n_resamples)
