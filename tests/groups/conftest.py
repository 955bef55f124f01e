"""The bundled GQA sample, loaded once for the group tests that search it."""

from __future__ import annotations

import pytest

from contrastgen.datasets.gqa import load_questions, load_scene_graphs
from contrastgen.resources import sample_dir


@pytest.fixture(scope="session")
def sample():
    folder = sample_dir()
    return load_questions(folder / "questions.json"), load_scene_graphs(folder / "scene_graphs.json")
