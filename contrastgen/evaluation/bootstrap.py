"""Seeded percentile bootstrap over clusters, for metrics that are ratios of sums.

Why clusters: an original and its perturbations share an image and a phrasing, so their
correctness is correlated; resampling single questions would make the intervals too narrow.
We resample whole contrast sets (or, for GQA's standard metrics, single questions, which are
clusters of one). Every metric we report is a function of column sums over the resampled
clusters (accuracy = correct / asked, consistency = all-correct sets / sets), so one resampling
scheme serves all of them, and drawing the same resampling indices for every model (the same
seed and size) makes side-by-side intervals paired, not independent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# Bound on the size of one batch of resampled indices (elements), to keep memory flat on
# a 100k-set contrast file while still vectorising.
_BATCH_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its bootstrap confidence interval (all as fractions in [0, 1])."""

    value: float | None
    low: float | None
    high: float | None

    def to_json(self) -> dict[str, object]:
        return {"value": _round(self.value), "ci": [_round(self.low), _round(self.high)]}


def _round(x: float | None) -> float | None:
    # Rounding keeps report.json byte-identical across platforms whose last float bits differ.
    return None if x is None or not np.isfinite(x) else round(float(x), 6)


Statistic = Callable[[np.ndarray], dict[str, np.ndarray]]


def bootstrap_sums(columns: np.ndarray, statistic: Statistic, *, n_boot: int, seed: int,
                   confidence: float = 0.95) -> dict[str, Estimate]:
    """Point estimates and percentile intervals of `statistic` over resampled clusters.

    `columns` is (clusters, m): per-cluster counts. `statistic` maps an array of column sums
    of shape (b, m) to named arrays of shape (b,). With no clusters every estimate is None.
    """
    columns = np.asarray(columns, dtype=np.float64)
    n = columns.shape[0]
    if n == 0:
        with np.errstate(invalid="ignore", divide="ignore"):
            names = list(statistic(np.zeros((1, columns.shape[1]))))
        return {name: Estimate(None, None, None) for name in names}
    with np.errstate(invalid="ignore", divide="ignore"):
        point = {name: float(v[0]) for name, v in statistic(columns.sum(axis=0)[None, :]).items()}
    if n_boot <= 0:
        return {name: Estimate(v, None, None) for name, v in point.items()}
    rng = np.random.default_rng(seed)
    batch = max(1, _BATCH_ELEMENTS // max(1, n * columns.shape[1]))
    draws: dict[str, list[np.ndarray]] = {name: [] for name in point}
    done = 0
    while done < n_boot:
        b = min(batch, n_boot - done)
        idx = rng.integers(0, n, size=(b, n))
        sums = columns[idx].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            for name, values in statistic(sums).items():
                draws[name].append(values)
        done += b
    alpha = (1.0 - confidence) / 2.0
    out: dict[str, Estimate] = {}
    for name, value in point.items():
        values = np.concatenate(draws[name])
        values = values[np.isfinite(values)]
        if values.size == 0 or not np.isfinite(value):
            out[name] = Estimate(value if np.isfinite(value) else None, None, None)
            continue
        low, high = np.quantile(values, [alpha, 1.0 - alpha])
        out[name] = Estimate(value, float(low), float(high))
    return out
