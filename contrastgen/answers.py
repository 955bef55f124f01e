"""Answer normalisation shared by every scorer (evaluation, crowd ingest, baselines).

GQA's official evaluation compares answers as exact strings after its own light clean-up; models
and crowd workers produce "Yes.", "the left", " Right ", "three" for "3". We normalise the way
GQA-style scorers and lmms-eval's `gqa` task do (lower case, trim, drop punctuation and a leading
article, collapse spaces) and, as VQA's evaluation does, read the number words zero to ten as
digits, so a prediction is not marked wrong for its typography. VQA v2's other rules
(contractions, its "none" -> "0") live with the VQA-VS metrics, because they are part of that
metric's definition.

The lmms-eval task that `contrastgen export --format lmms-eval` writes scores answers with its
own copy of this function (it may import nothing of contrastgen); a test holds the two equal.
"""

from __future__ import annotations

import functools

import regex

from contrastgen.resources import rules_resource

_PUNCT = regex.compile(r"[\p{P}\p{S}]+")
_ARTICLES = regex.compile(r"^(?:a|an|the)\s+")


@functools.cache
def number_words() -> dict[str, str]:
    """Number word -> digits, from `rules/answer_numbers.tsv`."""
    table: dict[str, str] = {}
    for line in rules_resource("answer_numbers.tsv").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, digits = line.split("\t")
            table[word] = digits
    return table


def normalize_answer(answer: object) -> str:
    """Lower-case, strip punctuation and a leading article, collapse white space, number words
    as digits."""
    if answer is None:
        return ""
    text = str(answer).lower()
    text = " ".join(_PUNCT.sub(" ", text).split())
    text = _ARTICLES.sub("", text)
    numbers = number_words()
    return " ".join(numbers.get(word, word) for word in text.split())


def is_right(prediction: object, gold: str) -> bool:
    """Whether a raw prediction, normalised, is the (normalised) gold answer. A prediction that
    normalises to nothing (an empty string, punctuation only, a multiple-choice reply that names no
    option) is no answer, and never right, whatever the gold: otherwise a model that says nothing
    would match a record whose answer is empty, and two empty answers would pass for one kept."""
    said = normalize_answer(prediction)
    return bool(said) and said == gold


def is_empty(prediction: object) -> bool:
    """Whether a raw prediction says nothing once normalised (scored wrong and counted apart)."""
    return not normalize_answer(prediction)
