"""Fixtures every test folder may use: the loaded engine, and the real GQA questions of ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"


@pytest.fixture(scope="session")
def engine():
    from contrastgen.engine import Engine
    return Engine.load()


@pytest.fixture(scope="session")
def real_gqa_questions():
    path = SHARED / "data" / "gqa" / "val_balanced_questions_sample.json"
    if not path.exists():
        pytest.skip(f"real GQA questions absent ({path}); they live in ../shared beside the repository")
    from contrastgen.datasets.gqa import load_questions
    return load_questions(path)
