"""Contrast sets to export: the bundled GQA sample in both modes (templates and program edits,
contrast and invariance) and the bundled Super-CLEVR sample."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from contrastgen.resources import clevr_sample_dir, sample_dir


@pytest.fixture(scope="session")
def gqa_output(tmp_path_factory) -> Path:
    from contrastgen.engine import Engine
    from contrastgen.run.generate import generate
    from contrastgen.writers import write_outputs

    questions = orjson.loads((sample_dir() / "questions.json").read_bytes())
    graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    out = tmp_path_factory.mktemp("export_gqa") / "out"
    write_outputs(generate(Engine.load(), questions, graphs, workers=1, mode="both"), out)
    return out


@pytest.fixture(scope="session")
def clevr_output(tmp_path_factory) -> Path:
    from contrastgen.cli.engine_cmds import run_generate_clevr

    sample = clevr_sample_dir()
    out = tmp_path_factory.mktemp("export_clevr") / "out"
    run_generate_clevr(sample / "questions", sample / "scenes", out, max_k=5, seed=0)
    return out


@pytest.fixture()
def hf_offline(tmp_path, monkeypatch):
    """`datasets` with its cache in the test's own folder and no network (parallel-safe)."""
    datasets = pytest.importorskip("datasets", reason="the `datasets` package (extra [hf]) is not installed")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    datasets.disable_progress_bars()
    return datasets
