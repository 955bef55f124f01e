"""GQA's standard metrics on hand-computed cases and on real GQA questions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contrastgen.datasets.gqa import load_questions
from contrastgen.errors import InputError
from contrastgen.evaluation.gqa_metrics import evaluate_gqa, steps

GQA_SAMPLE = (Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "gqa"
              / "val_balanced_questions_sample.json")


def q(text, answer, structural, semantic, entailed=(), group=None, balanced=True, program=()):
    return {"question": text, "answer": answer, "imageId": "1", "isBalanced": balanced,
            "types": {"structural": structural, "semantic": semantic, "detailed": "d"},
            "entailed": list(entailed), "groups": {"global": group, "local": None},
            "semantic": list(program)}


QUESTIONS = {
    "q1": q("Is the ball red?", "yes", "verify", "attr", ["q2", "q1"], "g",
            program=[{"operation": "select", "argument": "ball (1)"},
                     {"operation": "verify color", "argument": "red"}]),
    "q2": q("What color is the ball?", "red", "query", "attr", ["q1"], "color"),
    "q3": q("Which side is the dog on?", "left", "query", "obj", ["q4"], "g"),
    "q5": q("Is it a or b?", "a", "choose", "rel", balanced=False),
}
PREDS = {"q1": "Yes", "q2": "blue", "q3": "the left", "q5": "b"}


def test_hand_computed_metrics():
    res = evaluate_gqa(QUESTIONS, {"m": PREDS}, n_boot=0)["results"]["m"]
    assert res["accuracy"]["value"] == pytest.approx(2 / 3, abs=1e-6)
    assert res["accuracy"]["n"] == 3  # q5 is not balanced
    assert (res["binary"]["value"], res["binary"]["n"]) == (1.0, 1)
    assert (res["open"]["value"], res["open"]["n"]) == (0.5, 2)
    # q1 is correct and entails q2 (itself excluded), answered wrongly; q3 entails only an
    # absent question; q2 is wrong so it does not count.
    assert (res["consistency"]["value"], res["consistency"]["n"]) == (0.0, 1)
    assert res["consistency"]["entailed_absent"] == 1
    # chi-square: group g matches exactly; group color: (0 - 1)^2 / 1 weighted by 1; over 3
    assert res["distribution"] == pytest.approx(1 / 3 / 100, abs=1e-6)
    assert res["by_structural"] == {"query": {"n": 2, "value": 0.5},
                                    "verify": {"n": 1, "value": 1.0}}
    assert res["by_semantic"]["attr"] == {"n": 2, "value": 0.5}
    assert res["by_steps"]["2"]["n"] == 1 and res["by_words"]["4"]["n"] == 1


def test_consistency_counts_correct_entailed_answers():
    preds = dict(PREDS, q2="red")
    res = evaluate_gqa(QUESTIONS, {"m": preds}, n_boot=0)["results"]["m"]
    # q1 correct -> q2 correct (1.0); q2 correct -> q1 correct (1.0)
    assert (res["consistency"]["value"], res["consistency"]["n"]) == (1.0, 2)


def test_steps_follow_gqa_eval():
    program = [{"operation": "select", "argument": "snow (1)"},
               {"operation": "relate", "argument": "person,in,s (2)"},
               {"operation": "relate", "argument": "_,wearing,o (3)"},
               {"operation": "query", "argument": "name"}]
    assert steps({"semantic": program}) == 3
    assert steps({"semantic": [{"operation": "exist", "argument": "?"}]}) == 0


def test_missing_predictions_and_strict():
    preds = {"q1": "yes", "q3": "left"}
    report = evaluate_gqa(QUESTIONS, {"m": preds}, n_boot=0)
    assert report["coverage"]["m"]["missing"] == 1
    assert report["results"]["m"]["accuracy"]["value"] == pytest.approx(2 / 3, abs=1e-6)
    with pytest.raises(InputError, match="no prediction") as exc:
        evaluate_gqa(QUESTIONS, {"m": preds}, n_boot=0, strict=True)
    assert exc.value.record == "question q2"


def test_oracle_disagreement_over_answered_questions():
    oracle = {"q1": "yes", "q2": "white"}
    report = evaluate_gqa(QUESTIONS, {"m": PREDS, "oracle": oracle}, n_boot=0)
    assert report["oracle"]["answered"] == 2
    assert report["oracle"]["disagreement_rate"] == 0.5


@pytest.fixture(scope="module")
def gqa_questions():
    if not GQA_SAMPLE.is_file():
        pytest.skip("../shared/data/gqa sample absent")
    return load_questions(GQA_SAMPLE)


@pytest.mark.shared
def test_real_gqa_questions(gqa_questions):
    gold = {qid: q["answer"] for qid, q in gqa_questions.items()}
    res = evaluate_gqa(gqa_questions, {"gold": gold}, n_boot=50)["results"]["gold"]
    n_open = sum(q["types"]["structural"] == "query" for q in gqa_questions.values())
    assert res["accuracy"] == {"n": len(gqa_questions), "value": 1.0, "ci": [1.0, 1.0]}
    assert res["open"]["n"] == n_open and res["binary"]["n"] == len(gqa_questions) - n_open
    assert res["consistency"]["value"] == 1.0 and res["consistency"]["n"] > 0
    assert res["consistency"]["entailed_absent"] > 0  # a balanced sample: most are absent
    assert res["distribution"] == 0.0
    assert sum(g["n"] for g in res["by_semantic"].values()) == len(gqa_questions)

    # A model that always answers the most frequent answer: accuracy is that answer's share.
    top = max(set(gold.values()), key=lambda a: (list(gold.values()).count(a), a))
    always = {qid: top for qid in gqa_questions}
    res = evaluate_gqa(gqa_questions, {"always": always}, n_boot=50)["results"]["always"]
    share = sum(a == top for a in gold.values()) / len(gold)
    assert res["accuracy"]["value"] == pytest.approx(share, abs=1e-6)
    assert res["distribution"] > 0


@pytest.mark.shared
def test_cli_evaluate_ood_is_wired_to_the_ood_package(gqa_questions, tmp_path):
    from click.testing import CliRunner

    from contrastgen.cli import cli

    runner = CliRunner()
    result = runner.invoke(cli, ["ood", "gqa", "--questions", str(GQA_SAMPLE), "--out",
                                 str(tmp_path / "ood")])
    assert result.exit_code == 0, result.output
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({qid: q["answer"] for qid, q in gqa_questions.items()}))
    result = runner.invoke(cli, ["evaluate", "--ood", str(tmp_path / "ood"), "-p", str(gold),
                                 "--out", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report" / "ood_report.json").read_text())
    assert "gold" in json.dumps(report["models"])
