"""Contrast-set metrics on hand-computed cases."""

from __future__ import annotations

import pytest
from evaluation_cases import MODEL, contrast_set, records

from contrastgen.errors import InputError
from contrastgen.evaluation.contrast import evaluate_contrast


def approx(x):
    return pytest.approx(x, abs=1e-6)  # reports round to 6 decimals for byte-stable JSON


def value(metric):
    return metric["value"]


def test_paper_example_set_of_four_with_two_correct_is_inconsistent():
    # Fig. 1 of Bitton et al.: a set of 4 (original + 3 perturbations) with 2 of 4 correct.
    recs = [contrast_set("Q", "t", "yes", [(1, "no", "object"), (2, "no", "object"),
                                           (3, "no", "object")])]
    preds = {"m": {"Q": "yes", "Q_c1": "no", "Q_c2": "yes", "Q_c3": "yes"}}
    overall = evaluate_contrast(recs, preds, n_boot=0)["results"]["m"]["3"]["overall"]
    assert value(overall["consistency"]) == 0.0
    assert value(overall["original_accuracy"]) == 1.0
    assert value(overall["perturbed_accuracy"]) == approx(1 / 3)
    assert value(overall["drop"]) == approx(2 / 3)


def test_overall_metrics_for_each_nested_k():
    report = evaluate_contrast(records(), {"m": MODEL}, n_boot=0)
    assert report["settings"]["ks"] == [1, 3]  # largest rank is 3: k = 5 would repeat k = 3
    k1 = report["results"]["m"]["1"]["overall"]
    # k=1: A (orig ok, c1 ok), B (ok, ok), C (orig wrong, c1 ok)
    assert (k1["n_sets"], k1["n_perturbations"]) == (3, 3)
    assert value(k1["original_accuracy"]) == approx(2 / 3)
    assert value(k1["perturbed_accuracy"]) == 1.0
    assert value(k1["consistency"]) == approx(2 / 3)
    k3 = report["results"]["m"]["3"]["overall"]
    # k=3: A has c2 wrong -> only B is all correct; perturbations correct 2 + 2 + 1 of 6
    assert (k3["n_sets"], k3["n_perturbations"]) == (3, 6)
    assert value(k3["perturbed_accuracy"]) == approx(5 / 6)
    assert value(k3["consistency"]) == approx(1 / 3)
    assert value(k3["drop"]) == approx(2 / 3 - 5 / 6)


def test_breakdowns_by_template_kind_and_direction():
    res = evaluate_contrast(records(), {"m": MODEL}, n_boot=0)["results"]["m"]["3"]
    near = res["by_template"]["near"]
    assert (near["n_sets"], near["n_perturbations"]) == (2, 4)
    assert value(near["original_accuracy"]) == 0.5
    assert value(near["consistency"]) == 0.0
    relation = res["by_kind"]["relation"]  # only A_c3, correct, with A's original correct
    assert (relation["n_sets"], value(relation["consistency"])) == (1, 1.0)
    obj = res["by_kind"]["object"]  # A (c1 ok, c2 wrong) and C (orig wrong)
    assert value(obj["perturbed_accuracy"]) == approx(2 / 3)
    assert set(res["by_direction"]) == {"yes->no", "no->yes", "open"}
    assert value(res["by_direction"]["no->yes"]["original_accuracy"]) == 0.0
    assert value(res["by_direction"]["open"]["consistency"]) == 1.0


def test_answers_are_normalised_before_comparison():
    # "Yes.", "the red", " green ", "Blue", "NO" all count as correct.
    res = evaluate_contrast(records(), {"m": MODEL}, n_boot=0)["results"]["m"]["3"]
    assert value(res["by_template"]["color"]["consistency"]) == 1.0
    assert value(res["by_kind"]["relation"]["perturbed_accuracy"]) == 1.0


def test_missing_predictions_count_as_wrong_and_are_reported():
    preds = dict(MODEL)
    del preds["B_c2"]
    preds["unrelated"] = "yes"
    report = evaluate_contrast(records(), {"m": preds}, n_boot=0)
    cov = report["coverage"]["m"]
    assert cov["missing"] == 1 and cov["missing_examples"] == ["B_c2"]
    assert cov["ignored"] == 1 and cov["questions"] == 9
    assert value(report["results"]["m"]["3"]["overall"]["consistency"]) == 0.0


def test_strict_makes_missing_predictions_an_error():
    preds = dict(MODEL)
    del preds["A"]
    with pytest.raises(InputError, match="no prediction") as exc:
        evaluate_contrast(records(), {"m": preds}, n_boot=0, strict=True)
    assert exc.value.record == "question A"


def test_models_side_by_side_are_scored_independently():
    gold = {q["question_id"]: q["answer"] for q in records()}
    gold.update({p["question_id"]: p["answer"] for q in records() for p in q["perturbations"]})
    report = evaluate_contrast(records(), {"m": MODEL, "gold": gold}, n_boot=0)
    assert report["models"] == ["m", "gold"]
    assert value(report["results"]["gold"]["3"]["overall"]["consistency"]) == 1.0
    assert value(report["results"]["m"]["3"]["overall"]["consistency"]) == approx(1 / 3)


def test_examples_list_failing_sets_with_evidence():
    report = evaluate_contrast(records(), {"m": MODEL}, n_boot=0, examples=5)
    examples = report["examples"]["m"]
    assert [e["question_id"] for e in examples] == ["A", "C"]  # B is all correct
    a = examples[0]
    assert [p["correct"] for p in a["perturbations"]] == [True, False, True]
    assert a["perturbations"][1]["evidence"]["answer"] == "no"
    assert a["perturbations"][1]["prediction"] == "yes"


def test_oracle_disagreement_rate_is_reported():
    oracle = {"A": "yes", "A_c1": "no", "A_c2": "no", "A_c3": "no", "B": "white",
              "B_c1": "blue", "B_c2": "green"}  # abstains on C; disagrees with GQA on B
    report = evaluate_contrast(records(), {"m": MODEL, "oracle": oracle}, n_boot=0)
    o = report["oracle"]
    assert (o["originals_answered"], o["originals_disagreeing"]) == (2, 1)
    assert o["disagreement_rate"]["value"] == 0.5
    assert o["perturbation_accuracy"] == 1.0 and o["perturbations_answered"] == 5
    assert "oracle" not in evaluate_contrast(records(), {"m": MODEL}, n_boot=0)


def test_explicit_ks_and_unknown_oracle():
    report = evaluate_contrast(records(), {"m": MODEL}, n_boot=0, ks=[2])
    assert list(report["results"]["m"]) == ["2"]
    with pytest.raises(InputError, match="oracle"):
        evaluate_contrast(records(), {"m": MODEL}, n_boot=0, oracle="nope")


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r[0].pop("template"), "missing field 'template'"),
    (lambda r: r[0]["perturbations"][0].pop("rank"), "missing field 'rank'"),
    (lambda r: r[0]["perturbations"].clear(), "no perturbations"),
    (lambda r: r[2].update(question_id="A"), r"question id 'A' is given twice \(line 1, and line 3\)"),  # same template
    (lambda r: r[1]["perturbations"][0].update(question_id="A_c1"),
     r"question id 'A_c1' is given twice \(line 1, and line 2\)"),
    (lambda r: r[0]["perturbations"][0]["change"].pop("kind"), "change.kind"),
])
def test_bad_records_name_the_record(mutate, message):
    recs = records()
    mutate(recs)
    with pytest.raises(InputError, match=message) as exc:
        evaluate_contrast(recs, {"m": MODEL}, n_boot=0, path="cs.jsonl")
    assert exc.value.path == "cs.jsonl" and exc.value.record


def test_an_original_matched_by_two_templates_heads_two_sets():
    # The paper's two "Is the X Rel the Y?" rows: one original, a set per template.
    recs = [contrast_set("Q", "rel_swap", "yes", [(1, "no", "relation")]),
            contrast_set("Q", "obj_swap", "yes", [(1, "no", "object")])]
    recs[1]["perturbations"][0]["question_id"] = "Q_o1"
    preds = {"m": {"Q": "yes", "Q_c1": "no", "Q_o1": "yes"}}
    res = evaluate_contrast(recs, preds, n_boot=0)["results"]["m"]["1"]
    assert (res["overall"]["n_sets"], res["overall"]["n_perturbations"]) == (2, 2)
    assert value(res["overall"]["consistency"]) == 0.5
    assert value(res["by_template"]["obj_swap"]["consistency"]) == 0.0


def test_model_differences_are_paired():
    recs = [contrast_set(str(i), "t", "yes", [(1, "no", "object")]) for i in range(30)]
    a = {q: ("yes" if "_c" not in q else ("no" if int(q.split("_")[0]) % 3 else "yes"))
         for r in recs for q in [r["question_id"], f"{r['question_id']}_c1"]}
    b = dict(a)
    b["0_c1"] = "no"  # b fixes one perturbation that a gets wrong
    report = evaluate_contrast(recs, {"a": a, "b": b, "a2": dict(a)}, n_boot=200)
    same = report["comparisons"]["a2 - a"]["1"]["consistency"]
    assert same == {"value": 0.0, "ci": [0.0, 0.0]}  # identical models: paired interval is 0
    diff = report["comparisons"]["b - a"]["1"]["perturbed_accuracy"]
    assert diff["value"] == approx(1 / 30)
    assert diff["ci"][0] >= 0.0
    assert set(report["comparisons"]) == {"b - a", "a2 - a"}
