"""Fixtures for the fault and hostile-input tests: the bundled sample and one generated output
(the helpers that run the command line are in `robustness_helpers`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.resources import sample_dir


@pytest.fixture(scope="session")
def sample() -> tuple[Path, Path]:
    base = sample_dir()
    return base / "questions.json", base / "scene_graphs.json"


@pytest.fixture(scope="session")
def generated(tmp_path_factory, sample) -> Path:
    """`contrastgen generate` on the sample, once."""
    out = tmp_path_factory.mktemp("generated") / "out"
    questions, graphs = sample
    result = CliRunner().invoke(cli, ["generate", "--questions", str(questions), "--scene-graphs", str(graphs),
                                      "--out", str(out), "--no-progress", "--workers", "1"])
    assert result.exit_code == 0, result.output
    return out
