"""VQA accuracy as the official VQA v2 evaluation computes it.

A prediction is right to the degree humans agreed with it: min(#humans who gave it / 3, 1),
averaged over the ten subsets of nine of the ten human answers (leave one out), after VQA's own
answer normalisation (punctuation, number words, articles, contractions; tables in
`rules/ood/vqa_answer_normalization.json`). Two deliberate differences from `vqaEval.py`, both
documented in docs/ood.md: the prediction and the answers are always normalised (the official code
skips it when all ten humans agree, so "Yes" scores 0 against ten "yes"), and a question with a
single gold answer (GQA data) is scored by exact match after normalisation, because leaving its
only answer out would make every prediction wrong.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import regex

from contrastgen.ood.rules_data import vqa_normalization


@functools.cache
def _tables():
    t = vqa_normalization()
    return (t["punctuation"], regex.compile(t["period_strip"]), regex.compile(t["comma_strip"]),
            t["number_words"], frozenset(t["articles"]), t["contractions"])


def _process_punctuation(text: str) -> str:
    punct, period_strip, comma_strip, *_ = _tables()
    out = text
    has_comma_number = comma_strip.search(text) is not None
    for p in punct:
        if (p + " " in text or " " + p in text) or has_comma_number:
            out = out.replace(p, "")
        else:
            out = out.replace(p, " ")
    return period_strip.sub("", out)


def _process_digit_article(text: str) -> str:
    *_, numbers, articles, contractions = _tables()
    words = [numbers.get(w, w) for w in text.lower().split()]
    words = [w for w in words if w not in articles]
    return " ".join(contractions.get(w, w) for w in words)


def normalize_vqa_answer(answer: object) -> str:
    """VQA v2's answer normalisation (vqaEval.processPunctuation then processDigitArticle)."""
    if answer is None:
        return ""
    return _normalize(str(answer))


@functools.lru_cache(maxsize=1 << 18)
def _normalize(answer: str) -> str:
    # Cached: human answers repeat heavily ("yes", "2", "white"), and scoring normalises each of the
    # ten answers of every question.
    text = answer.replace("\n", " ").replace("\t", " ").strip()
    return _process_digit_article(_process_punctuation(text))


def vqa_accuracy(prediction: object, answers: Sequence[str]) -> float:
    """Leave-one-out VQA accuracy of one prediction against the human answers."""
    return accuracy_normalized(normalize_vqa_answer(prediction), [normalize_vqa_answer(a) for a in answers])


def accuracy_normalized(pred: str, gold: Sequence[str]) -> float:
    """`vqa_accuracy` on answers already normalised (score many models against one gold set)."""
    if not gold:
        return 0.0
    if len(gold) == 1:
        return 1.0 if pred == gold[0] else 0.0
    matches = sum(1 for g in gold if g == pred)
    # Leaving out a matching answer leaves matches-1 matches; leaving out another leaves matches.
    n = len(gold)
    total = matches * min(1.0, (matches - 1) / 3) + (n - matches) * min(1.0, matches / 3)
    return total / n
