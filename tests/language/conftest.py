"""Shared fixtures: the committed lexicon, and a throw-away copy of it for tests that break files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from contrastgen.language.lexicon import Lexicon

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "rules"
SHARED = REPO / ".." / "shared"


@pytest.fixture(scope="session")
def lex() -> Lexicon:
    return Lexicon.load()


@pytest.fixture
def rules_copy(tmp_path: Path) -> Path:
    """A private copy of rules/lexicon (and the relations table beside it) that a test may edit."""
    dest = tmp_path / "rules"
    shutil.copytree(RULES / "lexicon", dest / "lexicon")
    shutil.copy(RULES / "relations.tsv", dest / "relations.tsv")
    return dest / "lexicon"
