"""Seeded percentile bootstrap over clusters, for metrics that are ratios of sums.

Why clusters: an original and its perturbations share an image and a phrasing, so their
correctness is correlated; resampling single questions would make the intervals too narrow.
We resample whole clusters (an original question with all its perturbations; for GQA's standard
metrics, single questions). Every metric we report is a function of column sums over the
resampled clusters (accuracy = correct / asked, consistency = all-correct sets / sets), so one
resampling serves all of them: each replicate draws how often every cluster of the whole set is
picked, and every group (a template, a change kind, a model, a k) is summed with those same
weights. Groups are thus subsets of one resampled data set, as in the textbook bootstrap, and
models compared side by side get paired intervals. The sums are one matrix product per batch,
which keeps a paper-scale report (11k sets, 2 models, 3 k, ~40 groups, 1000 replicates) to
seconds.

Why not `scipy.stats.bootstrap` (which the OOD metrics use, on plain means): it resamples the same
way (one `rng.integers(0, n, (b, n))` per batch of cluster indices; given the same seed and batch
it draws the same resamples, and the tests hold our percentile intervals equal to its), but
- a resample in which a small group is drawn empty has an undefined ratio (0/0) for that group;
  scipy then returns a NaN interval (percentile and BCa alike), where we leave that resample out
  of that group's interval only, as one conditions on the group being observed;
- it computes one statistic per call: thousands of groups sharing every resample (the pairing of
  models, and groups as subsets of one resampled data set) would be one call per group with the
  same seed, each re-drawing the indices and gathering (b, n) rows, instead of one weight matrix
  and one matrix product per batch.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

import numpy as np

from contrastgen.terminal.progress import Advance, noop

# Bound on the size of one batch of resampling weights (elements): memory stays flat on a
# 100k-cluster file while the sums remain one BLAS call.
_BATCH_ELEMENTS = 4_000_000
# Every resample's statistics are kept for the percentiles: 100,000 (a hundred times what a 95%
# interval needs to settle) bounds that memory; the CLI and the HTTP service refuse more.
MAX_RESAMPLES = 100_000


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


def _weights(rng: np.random.Generator, b: int, n: int) -> np.ndarray:
    """(b, n) multiplicities of each cluster in b resamples of n clusters with replacement."""
    idx = rng.integers(0, n, size=(b, n)) + (np.arange(b) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(np.float64)


def bootstrap_many(groups: Mapping[Hashable, np.ndarray], statistic: Statistic, *, n_boot: int,
                   seed: int, confidence: float = 0.95, advance: Advance = noop) -> dict[Hashable, dict[str, Estimate]]:
    """Point estimates and percentile intervals of `statistic` for many groups at once.

    Every array in `groups` is (clusters, m) over the same clusters, in the same order, with
    zero rows for clusters outside the group. `statistic` maps column sums of shape (b, m) to
    named arrays of shape (b,); replicates where a statistic is undefined (a group drawn empty)
    are left out of its interval. `advance(b)` as each batch of b resamples is done (a progress
    bar's).
    """
    keys = list(groups)
    if not keys:
        return {}
    mats = [np.asarray(groups[k], dtype=np.float64) for k in keys]
    n, m = mats[0].shape
    if any(x.shape != (n, m) for x in mats):
        raise ValueError("every group must have the same clusters and columns")
    stacked = np.concatenate(mats, axis=1) if mats else np.zeros((n, 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        totals = stacked.sum(axis=0)[None, :]
        points = [statistic(totals[:, i * m:(i + 1) * m]) for i in range(len(keys))]
    draws: list[dict[str, list[np.ndarray]]] = [{name: [] for name in p} for p in points]
    if n_boot > 0 and n > 0:
        rng = np.random.default_rng(seed)
        batch = max(1, _BATCH_ELEMENTS // n)
        done = 0
        while done < n_boot:
            b = min(batch, n_boot - done)
            sums = _weights(rng, b, n) @ stacked
            with np.errstate(invalid="ignore", divide="ignore"):
                for i in range(len(keys)):
                    for name, values in statistic(sums[:, i * m:(i + 1) * m]).items():
                        draws[i][name].append(values)
            done += b
            advance(b)
    alpha = (1.0 - confidence) / 2.0
    out: dict[Hashable, dict[str, Estimate]] = {}
    for key, point, draw in zip(keys, points, draws, strict=True):
        est: dict[str, Estimate] = {}
        for name, v in point.items():
            value = float(v[0])
            if not np.isfinite(value):
                est[name] = Estimate(None, None, None)
                continue
            values = np.concatenate(draw[name]) if draw[name] else np.empty(0)
            values = values[np.isfinite(values)]
            if values.size == 0:
                est[name] = Estimate(value, None, None)
                continue
            low, high = np.quantile(values, [alpha, 1.0 - alpha])
            est[name] = Estimate(value, float(low), float(high))
        out[key] = est
    return out


def bootstrap_sums(columns: np.ndarray, statistic: Statistic, *, n_boot: int, seed: int,
                   confidence: float = 0.95, advance: Advance = noop) -> dict[str, Estimate]:
    """`bootstrap_many` for a single group: `columns` is (clusters, m)."""
    columns = np.asarray(columns, dtype=np.float64)
    if columns.ndim != 2:
        raise ValueError("columns must be a 2-D array (clusters, m)")
    return bootstrap_many({0: columns}, statistic, n_boot=n_boot, seed=seed,
                          confidence=confidence, advance=advance)[0]
