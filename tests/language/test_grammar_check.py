"""benchmarks/grammar_check.py: the rule checks behind the grammar figures of docs/program-edits.md flag the
errors they name and pass GQA-style questions without them."""

from __future__ import annotations

import pytest
from grammar_check import Checker


@pytest.fixture(scope="module")
def checker():
    return Checker()


@pytest.mark.parametrize("text,problem", [
    ("Is there a umbrella near the car?", "article"),
    ("Is there an car near the man?", "article"),
    ("What is the someone holding?", "determinerless"),
    ("Is there a jeans on the bed?", "a_plural"),
    ("Are the car red?", "number"),
    ("Is the cars red?", "number"),
    ("Are the light blue shirt clean?", "number"),
    ("Is the the car red?", "doubled"),
    ("Are there both cheese and vase in this picture?", "bare_singular"),
    ("Is there computer keyboard that is red?", "bare_singular"),
])
def test_each_error_is_flagged(checker, text, problem):
    assert problem in checker.problems(text)


@pytest.mark.parametrize("text", [
    "Is there an umbrella near the car?", "What is the person holding?", "Are the cars red?",
    "Is the car to the left or to the right of the man?", "What color are the pants the man is wearing?",
    "Are there both cheese and bread in this picture?", "Is the sky blue or orange?",
    "Do you see either towel racks or fish there?", "Are there both cars and trucks in the image?",
    "What are the light blue articles of clothing?", "Is the light on?",
    "What are the orange clothing items called?", "Is the orange on the table?",
])
def test_good_questions_pass(checker, text):
    assert checker.problems(text) == []
