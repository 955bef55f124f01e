"""benchmarks/bench_check.py: a change is judged by its ratio to the parse floor against the
stored baseline, and one over the budget is called slower."""

from __future__ import annotations

import subprocess

import orjson
import pytest
from bench_check import Measurement, parse_floor, verdict

STORED = {"ratio": 20.0, "perturbations": 1000}


def _now(ratio: float) -> Measurement:
    return Measurement("both", 3, generate_cpu_s=ratio, floor_cpu_s=1.0, ratio=ratio, perturbations=1000,
                       host_probe_s=0.3)


def test_a_change_over_the_budget_is_called_slower():
    ok, sentence = verdict(_now(22.5), STORED, 0.10)
    assert not ok
    assert "SLOWER" in sentence and "+12.5%" in sentence


def test_a_change_within_the_budget_passes_and_says_by_how_much():
    ok, sentence = verdict(_now(21.0), STORED, 0.10)
    assert ok
    assert "within budget" in sentence and "+5.0%" in sentence


def test_the_floor_parses_both_input_files(tmp_path):
    (tmp_path / "questions.json").write_bytes(orjson.dumps({str(i): {"question": "x" * 50} for i in range(20_000)}))
    (tmp_path / "scene_graphs.json").write_bytes(orjson.dumps({}))
    assert parse_floor(tmp_path) > 0
    (tmp_path / "scene_graphs.json").unlink()
    with pytest.raises(subprocess.CalledProcessError):  # a missing input is an error, never a floor
        parse_floor(tmp_path)
