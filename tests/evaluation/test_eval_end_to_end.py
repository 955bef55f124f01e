"""The whole loop on the bundled sample: generate, baselines, evaluate (library and CLI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from contrastgen.cli import cli
from contrastgen.datasets.gqa import load_questions, load_scene_graphs
from contrastgen.evaluation import demo_loop
from contrastgen.evaluation.baselines import oracle_predictions
from contrastgen.evaluation.contrast import evaluate_contrast
from contrastgen.records import load_contrast_records
from contrastgen.run.generate import generate

SAMPLE = Path(__file__).resolve().parents[2] / "contrastgen" / "data" / "sample"


@pytest.fixture(scope="module")
def engine():
    engine_mod = pytest.importorskip("contrastgen.engine")
    return engine_mod.Engine.load()


@pytest.fixture(scope="module")
def generated(tmp_path_factory, engine):
    """The sample's contrast sets, generated in-process (one worker: parallel-safe)."""
    from contrastgen.writers import write_outputs

    questions = load_questions(SAMPLE / "questions.json")
    graphs = load_scene_graphs(SAMPLE / "scene_graphs.json")
    gen = generate(questions, graphs, engine=engine, max_k=5, seed=0, workers=1)
    out = tmp_path_factory.mktemp("gen") / "contrast"
    write_outputs(gen, out)
    return out


def test_oracle_scores_100_percent_on_generated_perturbations(generated, engine):
    augmented = load_questions(generated / "augmented.json")
    graphs = load_scene_graphs(SAMPLE / "scene_graphs.json")
    preds, stats = oracle_predictions(augmented, graphs, engine)
    records = load_contrast_records(generated)
    report = evaluate_contrast(records, {"oracle": preds}, n_boot=0)
    n_perts = sum(len(r["perturbations"]) for r in records)
    assert n_perts > 100
    assert report["oracle"]["perturbations_answered"] == n_perts
    for k, res in report["results"]["oracle"].items():
        assert res["overall"]["perturbed_accuracy"]["value"] == 1.0, k
        for template, m in res["by_template"].items():
            assert m["perturbed_accuracy"]["value"] == 1.0, (k, template)
    assert stats["answered"] >= n_perts


def test_cli_baselines_then_evaluate(generated, tmp_path):
    runner = CliRunner()
    prior, oracle = tmp_path / "prior.json", tmp_path / "oracle.json"
    result = runner.invoke(cli, ["baseline", "--kind", "prior", "--questions",
                                 str(generated / "augmented.json"), "--out", str(prior)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["baseline", "--kind", "oracle", "--questions",
                                 str(generated / "augmented.json"), "--scene-graphs",
                                 str(SAMPLE / "scene_graphs.json"), "--out", str(oracle)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "report"
    result = runner.invoke(cli, ["evaluate", "--contrast", str(generated), "-p", str(prior),
                                 "-p", str(oracle), "--out", str(out), "--n-boot", "50",
                                 "--examples", "2"])
    assert result.exit_code == 0, result.output
    assert "overall" in result.output and "prior" in result.output
    report = json.loads((out / "report.json").read_text())
    assert report["models"] == ["prior", "oracle"]
    overall = report["results"]["prior"]["5"]["overall"]
    # The shortcut collapses on perturbations; the oracle does not.
    assert overall["perturbed_accuracy"]["value"] < overall["original_accuracy"]["value"]
    assert report["results"]["oracle"]["5"]["overall"]["perturbed_accuracy"]["value"] == 1.0
    assert report["oracle"]["model"] == "oracle"
    assert len(report["examples"]["prior"]) == 2
    assert (out / "consistency_by_k.svg").is_file()


@pytest.fixture(scope="module")
def generated_both(tmp_path_factory, engine):
    """The sample in both modes: templates and program edits, whose invariances are scored apart."""
    from contrastgen.writers import write_outputs

    questions = load_questions(SAMPLE / "questions.json")
    graphs = load_scene_graphs(SAMPLE / "scene_graphs.json")
    out = tmp_path_factory.mktemp("gen_both") / "contrast"
    write_outputs(generate(questions, graphs, engine=engine, max_k=5, seed=0, workers=1, mode="both"), out)
    return out


def test_cli_constant_baselines_are_not_invariance_consistent(generated_both, tmp_path):
    """always-"yes" scored 1.0 invariance consistency on the sample in both modes, and so did an
    empty answer; now neither does, and the report shows it beside the accuracies."""
    runner = CliRunner()
    args = ["evaluate", "--contrast", str(generated_both), "--n-boot", "0", "--out", str(tmp_path / "report")]
    for answer in ("yes", "no", ""):
        path = tmp_path / f"constant_{answer or 'empty'}.json"
        result = runner.invoke(cli, ["baseline", "--kind", "constant", "--answer", answer, "--questions",
                                     str(generated_both / "augmented.json"), "--out", str(path)])
        assert result.exit_code == 0, result.output
        args += ["-p", str(path)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "constant_yes: invariance sets" in " ".join(result.output.split())
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    inv = {m: report["invariance"][m]["overall"] for m in report["models"]}
    assert inv["constant_yes"]["n_sets"] > 100
    assert 0 < inv["constant_yes"]["consistency"] < 1 and 0 < inv["constant_no"]["consistency"] < 1
    # a set's answer is yes or no or neither: the two constants share no consistent set
    assert inv["constant_yes"]["consistency"] + inv["constant_no"]["consistency"] <= 1
    assert inv["constant_empty"]["consistency"] == 0
    assert report["invariance"]["constant_empty"]["empty"] == report["invariance"]["constant_empty"]["questions"]
    assert "| constant_yes | overall |" in (tmp_path / "report" / "report.md").read_text()
    result = runner.invoke(cli, ["baseline", "--kind", "prior", "--answer", "yes", "--questions",
                                 str(generated_both / "augmented.json"), "--out", str(tmp_path / "x.json")])
    assert result.exit_code == 2 and "--answer" in result.output


def test_cli_gqa_standard_metrics(generated, tmp_path):
    gold = {qid: q["answer"] for qid, q in load_questions(generated / "original.json").items()}
    p = tmp_path / "gold.json"
    p.write_text(json.dumps(gold))
    result = CliRunner().invoke(cli, ["evaluate", "--questions", str(generated / "original.json"),
                                      "-p", str(p), "--n-boot", "20"])
    assert result.exit_code == 0, result.output
    assert "100.0" in result.output and "binary" in result.output


@pytest.mark.parametrize("args, needle", [
    (["-p", "{bad}"], "bad.json"),
    (["--strict", "-p", "{partial}"], "--strict"),
    (["--questions", "x.json", "-p", "{partial}"], "exactly one"),
    (["-p", "{partial}", "-p", "{partial}"], "NAME=PATH"),
])
def test_cli_errors_exit_2_and_name_the_problem(generated, tmp_path, args, needle):
    (tmp_path / "bad.json").write_text("[{")
    (tmp_path / "partial.json").write_text(json.dumps({"nonexistent": "yes"}))
    args = [a.format(bad=tmp_path / "bad.json", partial=tmp_path / "partial.json") for a in args]
    result = CliRunner().invoke(cli, ["evaluate", "--contrast", str(generated), *args])
    assert result.exit_code == 2
    assert needle in result.output


def test_demo_loop(generated, tmp_path, engine):
    tables = demo_loop(generated, SAMPLE / "questions.json", SAMPLE / "scene_graphs.json",
                       tmp_path / "demo", n_boot=20, engine=engine)
    console = Console(record=True, width=160)
    console.print(tables)
    text = console.export_text()
    assert "prior" in text and "oracle" in text and "overall" in text
    assert (tmp_path / "demo" / "predictions" / "oracle.json").is_file()
    report = json.loads((tmp_path / "demo" / "report" / "report.json").read_text())
    assert report["results"]["oracle"]["5"]["overall"]["consistency"]["value"] == 1.0


def test_cli_never_replaces_a_directory_that_is_not_a_report(generated, tmp_path):
    prior = tmp_path / "prior.json"
    prior.write_text(json.dumps({"x": "yes"}))
    precious = tmp_path / "results"
    precious.mkdir()
    (precious / "thesis.tex").write_text("keep me")
    result = CliRunner().invoke(cli, ["evaluate", "--contrast", str(generated), "-p", str(prior),
                                      "--out", str(precious), "--n-boot", "0"])
    assert result.exit_code == 2 and "not a contrastgen report" in result.output
    assert (precious / "thesis.tex").read_text() == "keep me"
