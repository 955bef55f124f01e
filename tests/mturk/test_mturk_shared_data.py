"""Checks against real GQA questions in ../shared (skipped where that folder is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from contrastgen.mturk.layout import display_question

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
GQA = SHARED / "data" / "gqa" / "val_balanced_questions_sample.json"


def test_blinding_typesetting_leaves_real_gqa_questions_verbatim():
    """Workers must see GQA's originals exactly as GQA wrote them: the typesetting that hides
    generated questions' quirks is the identity on all 1,358 real questions."""
    if not GQA.is_file():
        pytest.skip(f"{GQA} absent (../shared is not part of the repository)")
    questions = json.loads(GQA.read_text())
    assert len(questions) > 1000
    changed = [q["question"] for q in questions.values() if display_question(q["question"]) != q["question"]]
    assert changed == []
    # and it does change what a generator might emit
    assert display_question("is the cup  on the left .") == "Is the cup on the left?"
