"""VQA accuracy as the official VQA v2 evaluation computes it.

A prediction is right to the degree humans agreed with it: min(#humans who gave it / 3, 1),
averaged over the ten subsets of nine of the ten human answers (leave one out), after VQA's own
answer normalisation (punctuation, number words, articles, contractions:
`contrastgen.answers.normalize_vqa_answer`, which every open-answer scorer shares, its tables in
`rules/vqa_answer_normalization.json`). Two deliberate differences from `vqaEval.py`, both
documented in docs/ood.md: the prediction and the answers are always normalised (the official code
skips it when all ten humans agree, so "Yes" scores 0 against ten "yes"), and a question with a
single gold answer (GQA data) is scored by exact match after normalisation, because leaving its
only answer out would make every prediction wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

from contrastgen.answers import normalize_vqa_answer


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
