"""The whole loop on the real output of the engine over the shipped sample data:
generate -> mturk export -> preview -> (simulated) results -> ingest, through the CLI."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from click.testing import CliRunner
from contrastgen.mturk.layout import display_question
from contrastgen.mturk.simulate import CrowdModel, simulate_results

from contrastgen.cli import cli
from contrastgen.jsonio import write_jsonl
from contrastgen.run.generate import generate


@pytest.fixture(scope="module")
def contrast_dir(tmp_path_factory):
    from contrastgen.datasets.gqa import load_questions, load_scene_graphs
    from contrastgen.engine import Engine

    base = resources.files("contrastgen.data") / "sample"
    questions = load_questions(base / "questions.json")
    graphs = load_scene_graphs(base / "scene_graphs.json")
    gen = generate(questions, graphs, engine=Engine.load(), seed=0, workers=1)
    out = tmp_path_factory.mktemp("gen")
    write_jsonl(out / "contrast_sets.jsonl", gen.records)
    return out, gen.records


def _run(*args: str):
    res = CliRunner().invoke(cli, ["mturk", *args])
    assert res.exit_code == 0, res.output
    return res


def test_export_preview_and_ingest_on_generated_contrast_sets(contrast_dir, tmp_path):
    gen_dir, records = contrast_dir
    images = {r["image_id"] for r in records}
    n = min(20, len(images))
    hits = tmp_path / "hits"
    _run("export", "--contrast", str(gen_dir), "--images-base-url", "https://img.example.org/gqa",
         "--sample", str(n), "--seed", "3", "--items-per-hit", "8", "--out", str(hits))
    _run("preview", str(hits))
    assert (hits / "preview.html").is_file()
    manifest = json.loads((hits / "manifest.json").read_text())

    # every perturbed item is one of the engine's perturbations, shown with its own wording
    perts = {p["question_id"]: (r, p) for r in records for p in r["perturbations"]}
    scored = [it for it in manifest["items"].values() if it["role"] in ("original", "perturbed")]
    assert len(scored) == 2 * n
    assert len({it["image_id"] for it in scored}) == n
    for it in scored:
        if it["role"] == "perturbed":
            rec, pert = perts[it["question_id"]]
            assert it["question"] == display_question(pert["question"])
            assert it["evidence"] == pert["evidence"] and it["answers"] == [pert["answer"]]
            assert it["pair_id"] == rec["question_id"] and it["image_id"] == rec["image_id"]

    # a crowd that always agrees with the computed answers: nothing to review
    perfect = simulate_results(hits, out=tmp_path / "perfect.csv", seed=1, model=CrowdModel(
        accuracy_original=1.0, accuracy_perturbed=1.0, cannot_tell_rate=0.0))
    _run("ingest", "--manifest", str(hits / "manifest.json"), "--results", str(perfect), "--out", str(tmp_path / "r1"))
    rep = json.loads((tmp_path / "r1" / "report.json").read_text())
    assert rep["accuracy"]["perturbed"]["majority_accuracy"] == 1.0
    assert rep["accuracy"]["original"]["items"] == n
    assert rep["agreement"]["all"]["fleiss_kappa"] == pytest.approx(1.0)
    assert (tmp_path / "r1" / "review.jsonl").read_text() == ""

    # a crowd that never agrees on perturbations: every perturbation is listed, with evidence
    contrary = simulate_results(hits, out=tmp_path / "contrary.csv", seed=1, model=CrowdModel(
        accuracy_original=1.0, accuracy_perturbed=0.0, cannot_tell_rate=0.0))
    _run("ingest", "--manifest", str(hits / "manifest.json"), "--results", str(contrary), "--out", str(tmp_path / "r2"))
    review = [json.loads(x) for x in (tmp_path / "r2" / "review.jsonl").read_text().splitlines()]
    assert len(review) == n and {e["role"] for e in review} == {"perturbed"}
    for e in review:
        assert e["evidence"] == perts[e["question_id"]][1]["evidence"]
        assert e["majority"] != e["computed_answer"]
    rep2 = json.loads((tmp_path / "r2" / "report.json").read_text())
    assert rep2["gap"]["original_minus_perturbed"] == 1.0
    assert "## Perturbations where the crowd majority disagrees" in (tmp_path / "r2" / "report.md").read_text()
