"""The answer normalisations (contrastgen.answers): VQA's official one, as `vqaEval.py` of the VQA
API applies it, and the contrast-set scorers' comparison built on it; GQA's own metrics keep the
GQA-style form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contrastgen.answers import (
    is_empty,
    is_right,
    normalize_answer,
    normalize_vqa_answer,
    score_form,
)
from contrastgen.resources import clevr_sample_dir, sample_dir

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"  # as tests/conftest.py finds it


@pytest.mark.parametrize(("raw", "official"), [
    # every article, wherever it stands (not only a leading one)
    ("a dog", "dog"), ("the dog", "dog"), ("dog", "dog"), ("A dog and the cat", "dog and cat"),
    ("an apple", "apple"),
    # number words and "none" as digits
    ("two", "2"), ("Ten", "10"), ("none", "0"), ("eleven", "eleven"),
    # the contractions map
    ("dont", "don't"), ("don't", "don't"), ("isnt it", "isn't it"),
    # punctuation: spaced inside a word, deleted beside a space, all deleted around a digit-comma-digit;
    # a period stripped unless a digit follows; the apostrophe and other marks kept
    ("red-car", "red car"), ("yes !", "yes"), ("yes!", "yes"), ("1,000", "1000"), ("3.5", "3.5"),
    ("Yes.", "yes"), ("t-shirt", "t shirt"), ("it's", "it's"), ("50%", "50%"),
    (" Right\t\nside ", "right side"),
])
def test_the_official_vqa_normalisation(raw, official):
    assert normalize_vqa_answer(raw) == official


@pytest.mark.parametrize(("prediction", "gold"), [
    ("a dog", "dog"), ("the dog", "dog"), ("The dog.", "a dog"), ("two", "2"), ("2", "two"),
    ("dont", "don't"), ("Don't.", "dont"), ("a dog and a cat", "dog and cat"), ("none", "0"),
])
def test_the_contrast_scorers_read_answers_as_the_official_normaliser(prediction, gold):
    """Pairs VQA's official evaluation scores as one answer are one answer here (the first four
    kinds were wrong before: only a leading article was dropped, "dont" was not "don t")."""
    assert normalize_vqa_answer(prediction) == normalize_vqa_answer(gold)
    assert is_right(prediction, normalize_answer(gold))


@pytest.mark.parametrize(("prediction", "gold"), [("dog", "cat"), ("2", "3"), ("yes", "no"), ("red car", "car")])
def test_different_answers_stay_different(prediction, gold):
    assert not is_right(prediction, gold)


@pytest.mark.parametrize("nothing", ["", "  ", ".", "?!", "the", "a an", None])
def test_an_answer_that_normalises_to_nothing_is_no_answer(nothing):
    assert is_empty(nothing) and not is_right(nothing, "")


def test_gqa_metrics_keep_the_gqa_form():
    """GQA's own metrics compare GQA-style (a leading article only): the official VQA rules are
    the contrast scorers', not theirs."""
    assert is_right("the left", "left", normalize=normalize_answer)
    assert not is_right("a dog and a cat", "dog and cat", normalize=normalize_answer)
    assert is_right("a dog and a cat", "dog and cat")


def _gold_answers() -> set[str]:
    answers: set[str] = set()
    files = [sample_dir() / "questions.json", SHARED / "gqa" / "val_balanced_questions_sample.json"]
    for file in files:
        if file.is_file():
            data = json.loads(file.read_text())
            answers |= {str(q["answer"]) for q in (data.values() if isinstance(data, dict) else data)}
    for file in [*sorted((clevr_sample_dir() / "questions").glob("*.json")),
                 *sorted((SHARED / "super-clevr").glob("*.json"))]:
        answers |= {str(q["answer"]) for q in json.loads(file.read_text())["questions"] if "answer" in q}
    return answers


def test_every_gold_answer_said_back_as_written_is_right():
    """A record's gold answer is in GQA's form (`normalize_answer`); a model that says the
    dataset's answer verbatim is right under the VQA-style comparison, for every gold answer of the
    bundled samples and (when present) the real GQA and Super-CLEVR data."""
    answers = _gold_answers()
    assert len(answers) > 50
    wrong = sorted(a for a in answers if not is_right(a, normalize_answer(a)))
    assert not wrong, wrong[:10]
    assert score_form("taking a picture") == "taking picture"  # a GQA answer with an inner article
