"""Prediction files: the formats VQA code bases write, and errors that name file and record."""

from __future__ import annotations

import json

import pytest

from contrastgen.errors import InputError
from contrastgen.evaluation.predictions import load_predictions

EXPECTED = {"101": "yes", "102": "left", "7": "red"}


@pytest.mark.parametrize("doc", [
    [{"questionId": "101", "prediction": "yes"}, {"questionId": "102", "prediction": "left"},
     {"questionId": 7, "prediction": "red"}],  # GQA submission
    {"101": "yes", "102": "left", "7": "red"},  # {qid: answer} / LXMERT quesid2ans
    [{"question_id": "101", "answer": "yes"}, {"question_id": "102", "answer": "left"},
     {"question_id": 7, "answer": "red"}],  # LXMERT / VQA results
    {"101": {"answer": "yes"}, "102": {"prediction": "left"}, "7": {"answer": "red"}},
], ids=["gqa-submission", "map", "lxmert-vqa-list", "map-of-objects"])
def test_formats(tmp_path, doc):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    assert load_predictions(path) == EXPECTED


def test_answers_are_kept_raw(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"1": " The Left. "}))
    assert load_predictions(path) == {"1": " The Left. "}


@pytest.mark.parametrize("text, message, record", [
    ("", "empty", None),
    ("[{", "malformed JSON", None),
    ("[]", "no predictions", None),
    ('"yes"', "expected a JSON list or object", None),
    ('[{"questionId": "1", "prediction": "yes"}, {"qid": "2"}]', "needs 'questionId'", "entry 1"),
    ('[{"questionId": "1", "prediction": ["yes"]}]', "not a string", "question 1"),
    ('[{"questionId": "1", "prediction": "yes"}, {"questionId": "1", "prediction": "no"}]',
     "two different predictions", "question 1"),
    ('{"5": {"score": 1}}', "no 'prediction' or 'answer'", "question 5"),
    ('[3]', "not an object", "entry 0"),
])
def test_errors_name_file_and_record(tmp_path, text, message, record):
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as exc:
        load_predictions(path)
    assert exc.value.path == str(path)
    assert exc.value.record == record


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_predictions(tmp_path / "nope.json")
