"""Fixtures for the CLEVR tests: the bundled Super-CLEVR sample (always there) and ../shared's copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from contrastgen.resources import clevr_sample_dir

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "super-clevr"


@pytest.fixture(scope="session")
def sample() -> Path:
    return clevr_sample_dir()


@pytest.fixture(scope="session")
def shared() -> Path:
    if not (SHARED / "scenes").is_dir():
        pytest.skip(f"../shared/data/super-clevr is absent ({SHARED})")
    return SHARED


@pytest.fixture(scope="session")
def generated(sample, tmp_path_factory) -> Path:
    """`contrastgen generate` on the bundled sample, once per session."""
    from contrastgen.run.pipeline import RunRequest, run_generate

    out = tmp_path_factory.mktemp("clevr") / "out"
    run_generate(RunRequest(sample / "questions", sample / "scenes", "clevr", workers=1), out)
    return out
