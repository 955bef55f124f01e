import json

import pytest

from contrastgen.errors import InputError
from contrastgen.ood import evaluate_ood, render_ood_table
from contrastgen.ood.gqa_ood import build_gqa_ood, write_gqa_ood
from contrastgen.ood.pipeline import run_vqavs

from .helpers import gqa_questions, vqa_files
from .test_vqavs import rows


@pytest.fixture()
def gqa_dir(tmp_path):
    qs = gqa_questions()
    write_gqa_ood(build_gqa_ood(qs), qs, tmp_path / "gqa_ood")
    return tmp_path / "gqa_ood"


def _by_group(answers):
    qs = gqa_questions()
    return {qid: answers[q["groups"]["local"]] for qid, q in qs.items()
            if q.get("groups", {}).get("local") in answers}


def test_gqa_ood_accuracies_and_confusion(gqa_dir, tmp_path):
    prior = _by_group({"g1": "Red", "g4": "the dog"})  # normalised like GQA scorers
    rare = _by_group({"g1": "blue", "g4": "cat"})
    report = evaluate_ood(gqa_dir, {"prior": prior, "rare": rare}, out_dir=tmp_path / "rep")
    p, r = report["models"]["prior"], report["models"]["rare"]
    assert (p["acc_all"], p["acc_head"], p["acc_tail"]) == (pytest.approx(11 / 14), 1.0, 0.0)
    assert p["confusion"] == 1.0  # every tail question answered with its group's head answer
    assert (r["acc_head"], r["acc_tail"]) == (0.0, pytest.approx(2 / 3))
    assert r["confusion"] == 0.0
    assert r["diff"] == pytest.approx(-2 / 3)
    sweep = {pt["alpha"]: pt for pt in r["alpha_sweep"]}
    assert sweep[0.3]["tail_size"] == 2  # g1 threshold 1.0 keeps blue/green; g4 threshold 0.6 keeps none
    assert sweep[0.3]["acc_tail"] == pytest.approx(0.5)
    assert sweep[10.0]["tail_size"] == 14 and sweep[10.0]["confusion"] is None
    assert (tmp_path / "rep" / "ood_report.json").exists()
    assert (tmp_path / "rep" / "ood_alpha_sweep.png").stat().st_size > 0


def test_missing_predictions_count_as_wrong(gqa_dir):
    preds = {k: v for k, v in _by_group({"g1": "red", "g4": "dog"}).items() if k != "q001"}
    m = evaluate_ood(gqa_dir, {"m": preds})["models"]["m"]
    assert m["missing"] == 1 and m["acc_head"] == pytest.approx(10 / 11)


def test_predictions_for_other_questions_are_an_input_error(gqa_dir):
    with pytest.raises(InputError, match="none of the questions"):
        evaluate_ood(gqa_dir, {"m": {"zzz": "red"}})


def test_not_an_ood_directory(tmp_path):
    (tmp_path / "stats.json").write_text(json.dumps({"benchmark": "other"}))
    with pytest.raises(InputError, match="not a GQA-OOD, VQA-VS or Super-CLEVR"):
        evaluate_ood(tmp_path, {"m": {}})


def test_report_is_deterministic_for_a_seed(gqa_dir):
    preds = {"m": _by_group({"g1": "red", "g4": "cat"})}
    a = evaluate_ood(gqa_dir, preds, seed=3)
    b = evaluate_ood(gqa_dir, preds, seed=3)
    assert a == b
    assert a["models"]["m"]["ci95"]["acc_all"] is not None


def test_vqavs_accuracy_on_iid_and_ood_sets(tmp_path):
    q, a = vqa_files(tmp_path, rows())
    run_vqavs(q, tmp_path / "vs", annotations=a, config=None)
    ids = [str(1000 + i) for i in range(14)]
    always_white = {qid: "white" for qid in ids}
    report = evaluate_ood(tmp_path / "vs", {"white": always_white}, out_dir=tmp_path / "rep")
    acc = report["models"]["white"]["accuracy"]
    assert acc["IID"] == pytest.approx(6 / 14)
    assert acc["QT"] == 0.0  # the QT OOD set is the black cat and the red car
    assert report["models"]["white"]["head_accuracy"]["QT"] == 1.0
    cat_says_gray = {"1006": "gray"}  # 2 of 10 humans said gray: leave-one-out 0.6
    m = evaluate_ood(tmp_path / "vs", {"g": cat_says_gray})["models"]["g"]
    assert m["accuracy"]["QT"] == pytest.approx(0.6 / 2)
    assert m["missing"] == 13
    assert "KO" in report["skipped"]
    assert (tmp_path / "rep" / "ood_vqavs_accuracy.png").exists()
    # per answer type, as the VQA-VS release reports: the walls, cat and car are "other"
    assert report["answer_types"]["yes/no"]["IID"] == 6 and report["answer_types"]["other"]["IID"] == 8
    by_type = report["models"]["white"]["by_answer_type"]
    assert by_type["yes/no"]["IID"] == 0.0 and by_type["other"]["IID"] == pytest.approx(6 / 8)
    assert by_type["other"]["QT"] == 0.0 and by_type["yes/no"]["QT"] is None  # no yes/no in QT's OOD set
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(render_ood_table(report))
    assert "by answer type" in console.export_text()


def test_render_table_names_models_and_sets(gqa_dir):
    from rich.console import Console

    report = evaluate_ood(gqa_dir, {"prior": _by_group({"g1": "red", "g4": "dog"})})
    console = Console(record=True, width=200)
    console.print(render_ood_table(report))
    text = console.export_text()
    assert "prior" in text and "acc-tail" in text and "78.57" in text


def test_evaluate_cli_wires_the_ood_report(gqa_dir, tmp_path):
    from click.testing import CliRunner

    from contrastgen.cli import cli

    preds = tmp_path / "prior.json"
    preds.write_text(json.dumps(_by_group({"g1": "red", "g4": "dog"})))
    res = CliRunner().invoke(cli, ["evaluate", "--ood", str(gqa_dir), "-p", f"prior={preds}",
                                   "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "rep" / "ood_report.json").read_text())
    assert report["models"]["prior"]["acc_tail"] == 0.0
