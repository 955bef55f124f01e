"""The benchmark scripts run end to end on tiny data (their figures come from real runs only)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

from contrastgen.datasets.gqa import load_questions, load_scene_graphs

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    if not (BENCH / f"{name}.py").is_file():
        pytest.skip(f"benchmarks/{name}.py absent (installed package)")
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_make_gqa_like_writes_loadable_data(tmp_path, capsys):
    _load("make_gqa_like").main(["--images", "6", "--questions", "70", "--seed", "1", "--out", str(tmp_path)])
    assert len(load_questions(tmp_path / "questions.json")) == 70
    assert len(load_scene_graphs(tmp_path / "scene_graphs.json")) == 6
    assert "wrote 70 questions on 6 images" in capsys.readouterr().out


@pytest.mark.skipif(not Path("/proc/self/smaps_rollup").exists(), reason="needs Linux /proc")
def test_tree_memory_counts_this_process():
    bench = _load("bench_generate")
    assert bench._tree_pss_kib(os.getpid()) > 10_000  # a Python process with contrastgen loaded


def test_bench_generate_reports_a_real_run(tmp_path, capsys):
    bench = _load("bench_generate")
    data = tmp_path / "data"
    bench.main(["--images", "30", "--questions", "400", "--data", str(data), "--workers", "1", "--json"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["questions"] == 400
    assert result["perturbations"] > 0 and result["originals_with_perturbations"] > 0
    assert result["wall_s"] > 0 and result["peak_rss_child_gib"] > 0
    assert result["machine"]["cpus"] >= 1
    assert result["host_probe_s"] > 0
    assert (data / "questions.json").is_file()


@pytest.mark.parametrize("benchmark", ["gqa", "vqavs"])
def test_bench_ood_reports_a_real_run(tmp_path, capsys, benchmark):
    bench = _load("bench_ood")
    bench.main(["--images", "100", "--questions", "2000", "--data", str(tmp_path / "data"), "--benchmark", benchmark])
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith(f"ood {benchmark} (local): 2,000 questions in ") and "peak RSS" in line and "host probe" in line


def test_bench_generate_repeats_and_reports_medians(tmp_path, capsys):
    bench = _load("bench_generate")
    bench.main(["--images", "20", "--questions", "200", "--data", str(tmp_path / "data"), "--workers", "1",
                "--repeat", "2"])
    out = capsys.readouterr().out
    assert "[run 1]" in out and "[run 2]" in out and "2 runs: wall median" in out and "host probe" in out


def test_output_digest_changes_with_any_byte_or_name(tmp_path):
    bench = _load("bench_generate")
    a = tmp_path / "a"
    (a / "lxmert").mkdir(parents=True)
    (a / "x.json").write_bytes(b'{"q": 1}')
    (a / "lxmert" / "y.json").write_bytes(b"[]")
    same = bench.output_digest(a)
    assert bench.output_digest(a) == same
    (a / "x.json").write_bytes(b'{"q": 2}')
    assert bench.output_digest(a) != same
    (a / "x.json").write_bytes(b'{"q": 1}')
    (a / "lxmert" / "y.json").rename(a / "lxmert" / "z.json")
    assert bench.output_digest(a) != same


@pytest.mark.skipif(not (Path(__file__).resolve().parents[2] / ".git").exists(), reason="not a git checkout")
def test_bench_generate_against_a_revision_alternates_and_removes_its_worktree(tmp_path, capsys):
    bench = _load("bench_generate")
    repo = Path(__file__).resolve().parents[2]
    bench.main(["--images", "20", "--questions", "200", "--data", str(tmp_path / "data"), "--workers", "1",
                "--against", "HEAD"])
    out = capsys.readouterr().out
    assert "[HEAD 1]" in out and "[working tree 1]" in out and "HEAD: 1 run: wall median" in out
    # identical on a clean checkout; a working tree with engine changes may differ, and says so
    assert "outputs identical" in out or "outputs DIFFER" in out
    worktrees = subprocess.run(["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True).stdout
    assert "bench-against-" not in worktrees


def test_compiled_bench_compares_output_trees_byte_for_byte(tmp_path):
    bench = _load("bench_compiled")
    for side in ("a", "b"):
        (tmp_path / side / "lxmert").mkdir(parents=True)
        (tmp_path / side / "stats.json").write_bytes(b"{}")
        (tmp_path / side / "lxmert" / "original.json").write_bytes(b"[1]")
    assert bench.same_bytes(tmp_path / "a", tmp_path / "b")
    (tmp_path / "b" / "lxmert" / "original.json").write_bytes(b"[2]")  # same size, other bytes, one level down
    assert not bench.same_bytes(tmp_path / "a", tmp_path / "b")
    (tmp_path / "b" / "lxmert" / "original.json").write_bytes(b"[1]")
    (tmp_path / "b" / "extra.json").write_bytes(b"")
    assert not bench.same_bytes(tmp_path / "a", tmp_path / "b")


def test_coverage_without_rule_counts_what_the_rule_refuses_and_restores_it(tmp_path, capsys):
    """"Who is wearing the shirt?" where the other garment is a hat: the rule refuses "the hat"
    (another may be unannotated), so only the run without it perturbs the question."""
    from contrastgen.language.lexicon import Lexicon

    def obj(name, x, relations=()):
        return {"name": name, "x": x, "y": 10, "w": 20, "h": 20, "attributes": [],
                "relations": [{"name": "wearing", "object": o} for o in relations]}
    graph = {"width": 640, "height": 480, "objects": {
        "1": obj("man", 10, ["2"]), "2": obj("shirt", 12), "3": obj("woman", 300, ["4"]), "4": obj("hat", 302)}}
    question = {"imageId": "img", "question": "Who is wearing the shirt?", "answer": "man",
                "annotations": {"question": {"4": "2"}},
                "semantic": [{"operation": "select", "argument": "shirt (2)", "dependencies": []},
                             {"operation": "relate", "argument": "person,wearing,s (1)", "dependencies": [0]},
                             {"operation": "query", "argument": "name", "dependencies": [1]}]}
    (tmp_path / "questions.json").write_text(json.dumps({"q1": question}))
    (tmp_path / "scene_graphs.json").write_text(json.dumps({"img": graph}))
    from contrastgen.programs.proofs import EditProofs

    rule, holds = Lexicon.is_unannotated_prone, EditProofs.holds
    _load("coverage_without_rule").main([str(tmp_path)])
    assert Lexicon.is_unannotated_prone is rule and EditProofs.holds is holds
    shipped, without_rule, without_proofs = capsys.readouterr().out.splitlines()
    assert "perturbed      0 (0.0%)" in shipped
    assert "perturbed      1 (100.0%)" in without_rule
    assert "perturbed      1 (100.0%)" in without_proofs


def test_the_super_clevr_engine_check_without_the_engine_says_where_it_comes_from(tmp_path):
    if not (BENCH / "superclevr_engine_check.py").is_file():
        pytest.skip("benchmarks/ absent (installed package)")
    import sys

    done = subprocess.run([sys.executable, str(BENCH / "superclevr_engine_check.py"), str(tmp_path / "none"),
                           str(tmp_path), str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no question_engine.py" in done.stderr and "github.com/Lizw14/Super-CLEVR" in done.stderr
