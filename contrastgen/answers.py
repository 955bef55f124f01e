"""Answer normalisation shared by every scorer (evaluation, crowd ingest, baselines).

GQA's official evaluation compares answers as exact strings after its own light clean-up; models
and crowd workers produce "Yes.", "the left", " Right ". We normalise the way GQA-style scorers
do (lower case, trim, drop punctuation and leading articles, collapse spaces) so a prediction
is not marked wrong for its typography. VQA v2's heavier normalisation (number words,
contractions) lives with the VQA-VS metrics, because its definition is part of that metric.
"""

from __future__ import annotations

import regex

_PUNCT = regex.compile(r"[\p{P}\p{S}]+")
_ARTICLES = regex.compile(r"^(?:a|an|the)\s+")
_SPACES = regex.compile(r"\s+")


def normalize_answer(answer: object) -> str:
    """Lower-case, strip punctuation and a leading article, collapse white space."""
    if answer is None:
        return ""
    text = str(answer).lower().strip()
    text = _PUNCT.sub(" ", text)
    text = _SPACES.sub(" ", text).strip()
    text = _ARTICLES.sub("", text)
    return text
