"""Caption sets to test: the bundled GQA sample, the bundled Super-CLEVR sample and, where
../shared is there, the shared Super-CLEVR scenes; each made once per session with the command."""

from __future__ import annotations

from pathlib import Path

import pytest
from caption_cli import generate

from contrastgen.resources import clevr_sample_dir, sample_dir

SHARED_SUPERCLEVR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "super-clevr" / "scenes"
SOURCES = {"gqa_sample": lambda: sample_dir() / "scene_graphs.json",
           "clevr_sample": lambda: clevr_sample_dir() / "scenes",
           "superclevr_shared": lambda: SHARED_SUPERCLEVR}


@pytest.fixture(scope="session", params=sorted(SOURCES))
def caption_set(request, tmp_path_factory) -> tuple[Path, Path]:
    """(the captions output, its scene graphs) of each dataset."""
    graphs = SOURCES[request.param]()
    if not graphs.exists():
        pytest.skip(f"{graphs} is absent (the shared data is not beside this checkout)")
    return generate(graphs, tmp_path_factory.mktemp(request.param) / "out"), graphs


@pytest.fixture(scope="session")
def gqa_captions(tmp_path_factory) -> Path:
    return generate(sample_dir() / "scene_graphs.json", tmp_path_factory.mktemp("gqa_captions") / "out")
