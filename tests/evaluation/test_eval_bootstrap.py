"""Bootstrap intervals: seeded, reproducible, paired across models, sane at the extremes."""

from __future__ import annotations

import numpy as np
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
