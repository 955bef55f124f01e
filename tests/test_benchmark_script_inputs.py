"""The benchmark scripts the docs tell a newcomer to run refuse a missing input in one sentence.

Why: these are often run before their input exists (a `generate` output, an OOD build, the GQA
file of `../shared`); the sentence names the path and what makes it, where a traceback named a
reader's internals (benchmarks/script_inputs.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

# (script, arguments naming an input that is not there, words the sentence must hold)
CASES = [
    ("caption_balance.py", ["--scene-graphs", "absent.json"], "scene graphs"),
    ("graphs_from_programs.py", ["absent.json", "G"], "GQA questions with programs"),
    ("execute_programs.py", ["--gqa", "absent.json"], "GQA questions with programs"),
    ("gqa_redundancy_ladder.py", ["--gqa", "absent.json", "--out", "L"], "GQA questions with programs"),
    ("superclevr_prior.py", ["absent", "bal", "p.json"], "ood superclevr --variant"),
    ("vqavs_prior.py", ["absent", "p.json"], "ood vqavs --iid-split"),
    ("bench_export.py", ["absent"], "generate output"),
    ("profile_generate.py", ["--data", "absent"], "questions.json and scene_graphs.json"),
    ("bench_groups.py", ["--data", "absent"], "questions.json and scene_graphs.json"),
    ("profile_groups.py", ["--data", "absent"], "questions.json and scene_graphs.json"),
    ("rule_costs.py", ["--data", "absent"], "questions.json and scene_graphs.json"),
    ("grammar_check.py", ["absent.jsonl"], "contrast_sets.jsonl"),
    ("superclevr_engine_check.py", ["absent", "out", "scenes"], "github.com/Lizw14/Super-CLEVR"),
]


@pytest.mark.parametrize(("script", "args", "words"), CASES, ids=[c[0] for c in CASES])
def test_a_missing_input_is_one_sentence_and_exit_2(script, args, words, tmp_path: Path):
    run = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "absent" in lines[0] and words in lines[0], run.stderr
    assert not any(tmp_path.iterdir()), "nothing is written before the input is found missing"


def test_every_script_with_an_input_argument_is_listed():
    """A benchmark that takes a path the user names is checked here; a new one joins the list."""
    takes_paths = {p.name for p in BENCHMARKS.glob("*.py")
                   if "script_inputs import" in p.read_text(encoding="utf-8")
                   or "import script_inputs" in p.read_text(encoding="utf-8")}
    assert takes_paths <= {c[0] for c in CASES}, takes_paths - {c[0] for c in CASES}
