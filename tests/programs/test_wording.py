"""Where a phrase is said: the ASCII fast path must find exactly what the whole-word pattern finds."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from contrastgen.programs.wording import Span, _ascii_occurrences, _whole_words, said_once, tokens

SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "data" / "gqa" / "val_balanced_questions_sample.json"


@pytest.mark.parametrize("text, phrase, expected", [
    ("Is the man near the car?", "man", Span(7, 10)),
    ("Is the woman near the car?", "man", None),  # inside a word
    ("Is the tv-stand near the TV?", "tv", None),  # said twice, once before a hyphen
    ("Is the man_x near the man?", "man", Span(22, 25)),  # "_" is a word character
    ("a a a", "a a", Span(0, 3)),  # matches do not overlap: one, as the pattern finds
    ("Is the Café open?", "café", Span(7, 11)),  # not ASCII: the pattern's path
    ("Are there both cars and trucks?", "cars", Span(15, 19)),
    ("Is the table red or blue?", "", None),
])
def test_said_once(text, phrase, expected):
    assert said_once(text, phrase) == expected


def test_non_overlapping_like_the_pattern():
    assert _ascii_occurrences("a a a", "a a") == [m.span() for m in _whole_words("a a").finditer("a a a")]


def test_fast_path_agrees_with_pattern_on_real_gqa_phrasing():
    if not SAMPLE.exists():
        pytest.skip(f"real GQA questions absent ({SAMPLE})")
    texts = [q["question"] for q in orjson.loads(SAMPLE.read_bytes()).values()]
    phrases = set()
    for t in texts:
        words = t.rstrip("?").split()
        phrases.update(w.lower() for w in words)
        phrases.update(" ".join(words[i:i + 2]).lower() for i in range(len(words) - 1))
    checked = 0
    for t in texts[:400]:
        for p in phrases:
            if t.isascii() and p.isascii() and p.strip():
                assert _ascii_occurrences(t.lower(), p.lower()) == [m.span() for m in _whole_words(p).finditer(t)], (t, p)
                checked += 1
    assert checked > 100_000


def test_tokens_are_gqa_tokens():
    assert [("Is the man's hat red?"[a:b]) for a, b in tokens("Is the man's hat red?")] == [
        "Is", "the", "man's", "hat", "red", "?"]
