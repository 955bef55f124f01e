"""benchmarks/rule_costs.py: its timers change nothing the run writes, and its table adds up."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import rule_costs

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(*args: str, cwd: Path) -> str:
    return subprocess.run([sys.executable, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_the_timed_run_writes_what_generate_writes_and_its_rows_add_up(tmp_path):
    data = tmp_path / "data"
    _run(str(BENCHMARKS / "make_gqa_like.py"), "--images", "40", "--questions", "600", "--out", str(data), cwd=tmp_path)
    result = json.loads(_run(str(BENCHMARKS / "rule_costs.py"), "--data", str(data), "--json", cwd=BENCHMARKS))
    _run("-m", "contrastgen", "generate", "--questions", str(data / "questions.json"),
         "--scene-graphs", str(data / "scene_graphs.json"), "--out", str(tmp_path / "out"), "--workers", "1",
         "--no-progress", cwd=tmp_path)
    lines = (tmp_path / "out" / "contrast_sets.jsonl").read_text().splitlines()
    assert result["perturbations"] == sum(len(json.loads(line)["perturbations"]) for line in lines) > 0
    rules = {r["label"]: r for r in result["rules"]}
    assert rules["question record checks"]["calls"] == result["questions"] == 600
    assert rules["template screen (whole record kept?)"]["calls"] == 600
    assert 600 - rules["template screen (whole record kept?)"]["refused"] == result["kept_whole"]
    # every template's row is part of the handlers' row, and each was reached
    handlers = rules["handlers (each template's own refusals and search)"]
    templates = [r for r in result["rules"] if r["depth"] == 1 and r["label"].count("_") >= 3]
    assert len(templates) == 6 and all(t["calls"] > 0 for t in templates)
    assert handlers["calls"] == sum(t["calls"] for t in templates)
    assert abs(handlers["seconds"] - sum(t["seconds"] for t in templates)) < 1e-9
    # a question's program is executed once, however many of its templates reach it
    assert 0 < rules["original program executes (not_executable, answer_mismatch)"]["calls"] <= \
        rules["context (read, agree, ground)"]["calls"]
    table = rule_costs.table(result, 1_000_000)
    assert "| **perturb phase**" in table and "| in no row above" in table
