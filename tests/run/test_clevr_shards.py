"""CLEVR-family input through the run pipeline: several shards over a pool of forked workers
write the same bytes as one process running them in turn."""

from __future__ import annotations

import filecmp
from pathlib import Path

from click.testing import CliRunner

import contrastgen.families.base
from contrastgen.cli import cli
from contrastgen.resources import clevr_sample_dir


def _generate(out: Path, *extra: str) -> None:
    sample = clevr_sample_dir()
    result = CliRunner().invoke(cli, ["generate", "--questions", str(sample / "questions"), "--scene-graphs",
                                      str(sample / "scenes"), "--out", str(out), "--no-progress", *extra])
    assert result.exit_code == 0, result.output


def test_two_workers_write_what_one_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(contrastgen.families.base, "SHARD_IMAGES", 2)  # the sample's 5 scenes: 3 shards
    assert len(list((clevr_sample_dir() / "scenes").glob("*.json"))) > 4
    _generate(tmp_path / "w1", "--workers", "1")
    _generate(tmp_path / "w2", "--workers", "2")
    files = sorted(p.relative_to(tmp_path / "w1") for p in (tmp_path / "w1").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "w2") for p in (tmp_path / "w2").rglob("*") if p.is_file())
    assert (tmp_path / "w1" / "contrast_sets.jsonl").stat().st_size > 0
    _, mismatch, errors = filecmp.cmpfiles(tmp_path / "w1", tmp_path / "w2", [str(f) for f in files], shallow=False)
    assert not mismatch and not errors, mismatch + errors
