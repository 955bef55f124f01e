"""Bootstrap intervals: seeded, reproducible, paired across models, sane at the extremes."""

from __future__ import annotations

import numpy as np
import pytest
from evaluation_cases import contrast_set

from contrastgen.evaluation.bootstrap import bootstrap_sums
from contrastgen.evaluation.contrast import evaluate_contrast


def acc(sums):
    return {"acc": sums[:, 1] / sums[:, 0]}


def columns(n_correct, n):
    return np.array([(1, 1)] * n_correct + [(1, 0)] * (n - n_correct), dtype=float)


def test_same_seed_same_interval_other_seed_other_interval():
    cols = columns(37, 60)
    a = bootstrap_sums(cols, acc, n_boot=500, seed=3)["acc"]
    b = bootstrap_sums(cols, acc, n_boot=500, seed=3)["acc"]
    c = bootstrap_sums(cols, acc, n_boot=500, seed=4)["acc"]
    assert a == b
    assert (a.low, a.high) != (c.low, c.high)
    assert a.value == 37 / 60
    assert a.low < a.value < a.high


def test_interval_width_matches_the_binomial_standard_error():
    cols = columns(500, 1000)
    est = bootstrap_sums(cols, acc, n_boot=2000, seed=0)["acc"]
    se = np.sqrt(0.25 / 1000)
    assert abs((est.high - est.low) - 2 * 1.96 * se) < 0.01


def test_degenerate_and_empty():
    est = bootstrap_sums(columns(10, 10), acc, n_boot=100, seed=0)["acc"]
    assert (est.value, est.low, est.high) == (1.0, 1.0, 1.0)
    empty = bootstrap_sums(np.zeros((0, 2)), acc, n_boot=100, seed=0)["acc"]
    assert empty.value is None and empty.to_json() == {"value": None, "ci": [None, None]}
    no_boot = bootstrap_sums(columns(1, 2), acc, n_boot=0, seed=0)["acc"]
    assert no_boot.value == 0.5 and no_boot.low is None


def test_contrast_report_cis_are_deterministic_for_a_seed():
    recs = [contrast_set(str(i), "t", "yes", [(1, "no", "object"), (2, "no", "object")])
            for i in range(40)]
    rng = np.random.default_rng(1)
    preds = {"m": {q: ("no" if "_c" in q else "yes") if rng.random() < 0.7 else "x"
                   for r in recs for q in [r["question_id"]] + [p["question_id"] for p in r["perturbations"]]}}
    one = evaluate_contrast(recs, preds, seed=7, n_boot=300)
    two = evaluate_contrast(recs, preds, seed=7, n_boot=300)
    other = evaluate_contrast(recs, preds, seed=8, n_boot=300)
    assert one == two
    ci = one["results"]["m"]["2"]["overall"]["consistency"]["ci"]
    assert ci != other["results"]["m"]["2"]["overall"]["consistency"]["ci"]
    assert ci[0] < one["results"]["m"]["2"]["overall"]["consistency"]["value"] < ci[1]


# --- against scipy.stats.bootstrap, on cases both compute --------------------------------------
# scipy resamples the indices of the clusters (one sample, `np.arange(n)`) as this module does, one
# `rng.integers(0, n, (b, n))` draw per batch; with the same seed and batch, both see the same
# resamples, so their percentile intervals must agree (to rounding: the sums are added in another
# order) wherever scipy's is defined.


def _clusters(n: int, seed: int) -> np.ndarray:
    """Clusters of 1 to 5 questions (asked, right): an original with its perturbations."""
    rng = np.random.default_rng(seed)
    asked = rng.integers(1, 6, size=n).astype(float)
    return np.stack([asked, rng.binomial(asked.astype(int), 0.6).astype(float)], axis=1)


def _scipy_interval(columns_of, n: int, n_boot: int, seed: int):
    from scipy import stats

    from contrastgen.evaluation.bootstrap import _BATCH_ELEMENTS

    def ratio(idx, axis=-1):  # idx: (..., n) resampled cluster indices; the sums run over n
        with np.errstate(invalid="ignore", divide="ignore"):
            sums = columns_of[idx.astype(int)].sum(axis=-2)
            return sums[..., 1] / sums[..., 0]

    return stats.bootstrap((np.arange(n),), ratio, n_resamples=n_boot, batch=_BATCH_ELEMENTS // n,
                           method="percentile", confidence_level=0.95, rng=np.random.default_rng(seed))


def test_a_cluster_ratio_interval_is_scipys_percentile_interval():
    """Accuracy as a ratio of sums over resampled clusters of unequal size: the interval is the
    one scipy.stats.bootstrap computes from the same resamples."""
    cols = _clusters(300, seed=1)
    ours = bootstrap_sums(cols, acc, n_boot=800, seed=11)["acc"]
    theirs = _scipy_interval(cols, 300, 800, 11).confidence_interval
    assert ours.value == cols[:, 1].sum() / cols[:, 0].sum()
    assert (ours.low, ours.high) == (float(theirs.low), float(theirs.high))


def test_every_group_and_model_is_resampled_alike_as_scipy_would_resample_each():
    """Groups (a template's sets, zero elsewhere) and models share the resamples: each group's
    interval, and a paired difference's, is scipy's over the same resampled cluster indices."""
    from contrastgen.evaluation.bootstrap import bootstrap_many

    n = 250
    model_a, model_b = _clusters(n, seed=2), _clusters(n, seed=3)
    template = np.zeros((n, 2))
    template[::3] = model_a[::3]
    est = bootstrap_many({"a": model_a, "b": model_b, "template": template}, acc, n_boot=600, seed=5)
    for key, cols in (("a", model_a), ("b", model_b), ("template", template)):
        theirs = _scipy_interval(cols, n, 600, 5).confidence_interval
        assert (est[key]["acc"].low, est[key]["acc"].high) == (float(theirs.low), float(theirs.high)), key

    def difference(sums):
        return {"acc": sums[:, 3] / sums[:, 2] - sums[:, 1] / sums[:, 0]}

    paired = bootstrap_many({0: np.concatenate([model_a, model_b], axis=1)}, difference, n_boot=600, seed=5)[0]
    from scipy import stats

    from contrastgen.evaluation.bootstrap import _BATCH_ELEMENTS

    both = np.concatenate([model_a, model_b], axis=1)

    def diff(idx, axis=-1):
        s = both[idx.astype(int)].sum(axis=-2)
        return s[..., 3] / s[..., 2] - s[..., 1] / s[..., 0]

    theirs = stats.bootstrap((np.arange(n),), diff, n_resamples=600, batch=_BATCH_ELEMENTS // n,
                             method="percentile", rng=np.random.default_rng(5)).confidence_interval
    assert (paired["acc"].low, paired["acc"].high) == pytest.approx((theirs.low, theirs.high), abs=1e-12)


def test_a_group_drawn_empty_is_left_out_where_scipy_gives_no_interval():
    """What scipy cannot do and this module exists for: a small group (3 of 200 clusters) is drawn
    empty in some resamples, where its accuracy is 0/0. scipy's percentile interval is then NaN;
    ours leaves those resamples out, so it is the percentile of scipy's own bootstrap distribution
    over the resamples where the group was drawn."""
    import warnings

    cols = np.zeros((200, 2))
    cols[:3] = [(4, 3), (2, 0), (5, 4)]
    ours = bootstrap_sums(cols, acc, n_boot=700, seed=9)["acc"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns that the distribution has NaN
        res = _scipy_interval(cols, 200, 700, 9)
    assert np.isnan(res.confidence_interval.low)
    drawn = res.bootstrap_distribution[np.isfinite(res.bootstrap_distribution)]
    assert 0 < drawn.size < 700
    assert (ours.low, ours.high) == tuple(float(x) for x in np.quantile(drawn, [0.025, 0.975]))
