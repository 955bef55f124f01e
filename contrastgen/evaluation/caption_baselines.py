"""The two blind baselines of a caption set: how often the text alone picks the true caption.

SugarCrepe found that models which never see the image (a grammar scorer, a plausibility model)
beat CLIP on ARO, CREPE and VL-CheckList, because those benchmarks' negatives are implausible or
ungrammatical. A caption set is only a test of the image if a blind model is near chance (50%) on
it. Two blind models, each picking one caption of every pair:
- `classifier`: TF-IDF over words and pairs of adjacent words, and logistic regression, trained
  to tell captions from negatives on the other folds of the set (5-fold cross-validation, folds by
  image so that no image's captions are on both sides) and asked of each held-out pair which
  caption is the positive;
- `plausibility`: the corpus n-gram scorer the generator stored in each record (leave-one-image-
  out counts over the input's graphs, `contrastgen.captions.plausibility`): the more plausible
  caption is its pick.
A tie counts half. Each figure is per kind: what a kind's negatives give away is the kind's.
Needs scikit-learn (the `captions` extra).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from contrastgen.terminal.progress import Advance, noop
from contrastgen.verify.captions import KINDS

FOLDS = 5
MIN_PAIRS = 2 * FOLDS  # fewer pairs than this give no classifier figure
TOKEN_PATTERN = r"(?u)\b\w+\b"  # every word, "a" included


@dataclass(frozen=True)
class Pair:
    """One positive and one negative of a kind, as the baselines see them."""

    kind: str
    image_id: str
    positive_id: str
    negative_id: str
    positive: str
    negative: str
    positive_plausibility: float
    negative_plausibility: float


def pairs_of(records: Iterable[Mapping[str, Any]]) -> list[Pair]:
    """Every (caption, negative) of a captions file, in file order."""
    out = []
    for r in records:
        for n in r["negatives"]:
            out.append(Pair(n["kind"], str(r["image_id"]), r["id"], n["id"], r["caption"], n["caption"],
                            float(r["plausibility"]), float(n["plausibility"])))
    return out


def _picks(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """1 where the positive's score `a` beats the negative's `b`, 0.5 on a tie, 0 else."""
    return np.where(a > b, 1.0, np.where(a == b, 0.5, 0.0))


def plausibility_picks(pairs: list[Pair]) -> np.ndarray:
    return _picks(np.array([p.positive_plausibility for p in pairs]),
                  np.array([p.negative_plausibility for p in pairs]))


def classifier_picks(pairs: list[Pair], *, seed: int = 0, advance: Advance = noop) -> np.ndarray | None:
    """Per pair, whether the cross-validated classifier picks its positive (None: too few pairs
    or images for five folds). `advance(1)` per fold (all five when there are none)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    groups = np.array([p.image_id for p in pairs])
    if len(pairs) < MIN_PAIRS or len(set(groups)) < FOLDS:
        advance(FOLDS)
        return None
    positives = np.array([p.positive for p in pairs], dtype=object)
    negatives = np.array([p.negative for p in pairs], dtype=object)
    out = np.zeros(len(pairs))
    for train, test in GroupKFold(n_splits=FOLDS).split(positives, groups=groups):
        vectorizer = TfidfVectorizer(ngram_range=(1, 2), token_pattern=TOKEN_PATTERN)
        x = vectorizer.fit_transform(np.concatenate([positives[train], negatives[train]]))
        y = np.concatenate([np.ones(len(train)), np.zeros(len(train))])
        model = LogisticRegression(max_iter=2000, random_state=seed).fit(x, y)
        out[test] = _picks(model.decision_function(vectorizer.transform(positives[test])),
                           model.decision_function(vectorizer.transform(negatives[test])))
        advance(1)
    return out


def by_kind(pairs: list[Pair]) -> dict[str, list[int]]:
    """Pair indices per kind, kinds in the order of `KINDS` (SugarCrepe's seven, then ARO's two)."""
    out: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        out.setdefault(p.kind, []).append(i)
    order = {k: n for n, k in enumerate(KINDS)}
    return dict(sorted(out.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))


def blind_baselines(pairs: list[Pair], *, seed: int = 0, advance: Advance = noop) -> dict[str, dict[str, Any]]:
    """kind -> {"pairs", "classifier", "plausibility"}: the share of pairs each blind model picks
    right (None where the kind has too few pairs for the classifier). `advance(1)` per fold of
    each kind's cross-validation (FOLDS per kind)."""
    out = {}
    plaus = plausibility_picks(pairs)
    for kind, idx in by_kind(pairs).items():
        subset = [pairs[i] for i in idx]
        clf = classifier_picks(subset, seed=seed, advance=advance)
        out[kind] = {"pairs": len(idx), "classifier": None if clf is None else round(float(clf.mean()), 4),
                     "plausibility": round(float(plaus[idx].mean()), 4)}
    return out
