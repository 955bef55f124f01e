"""Real GQA questions (../shared, skipped when absent) through the API's models and a batch."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from contrastgen.api.models import Question
from pydantic import ValidationError

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
GQA = SHARED / "data" / "gqa" / "val_balanced_questions_sample.json"


@pytest.fixture(scope="module")
def gqa_questions() -> dict:
    if not GQA.exists():
        pytest.skip("../shared/data/gqa is absent")
    return orjson.loads(GQA.read_bytes())


def test_every_real_gqa_question_fits_the_question_model(gqa_questions):
    """GQA's own records (programs, annotations, entailments...) validate strictly as sent."""
    assert len(gqa_questions) > 1000
    for qid, q in gqa_questions.items():
        try:
            Question.model_validate(q)
        except ValidationError as exc:
            pytest.fail(f"question {qid}: {exc}")


def test_a_batch_of_real_questions_is_answered_for_every_question(server, gqa_questions):
    """Their scene graphs are not public here, so each image gets an empty graph: every question
    must come back (matched or not) with a reason, and none may crash the engine."""
    graphs = {str(q["imageId"]): {"width": 640, "height": 480, "objects": {}}
              for q in gqa_questions.values()}
    with server.client() as c:
        r = c.post("/v1/perturb/batch", json={"questions": gqa_questions, "scene_graphs": graphs})
    assert r.status_code == 200, r.text[:500]
    results = r.json()["results"]
    assert list(dict.fromkeys(x["question_id"] for x in results)) == list(gqa_questions)
    assert all(x["perturbations"] == [] and x["reason"] for x in results)
    matched = [x for x in results if x["template"]]
    assert matched  # real phrasings reach the templates
