"""Invariance consistency on hand-computed cases: a set counts only when its original and every
invariance perturbation are answered right, so no constant and no empty answer wins it."""

from __future__ import annotations

import pytest
from evaluation_cases import contrast_set, pert

from contrastgen.answers import is_right
from contrastgen.errors import InputError
from contrastgen.evaluation.contrast import evaluate_contrast
from contrastgen.evaluation.groups import group_metrics
from contrastgen.evaluation.report import render_csv, render_markdown
from contrastgen.records import parse_contrast_sets


def invariance(qid: str, rank: int, answer: str) -> dict:
    return {**pert(qid, rank, answer, "attribute"), "kind": "invariance"}


def records() -> list[dict]:
    """Y (gold yes, two invariances), N (gold no, one), R (gold red, one); each set also has one
    contrast, which the contrast metrics need."""
    out = []
    for qid, gold, other, n_inv in (("Y", "yes", "no", 2), ("N", "no", "yes", 1), ("R", "red", "blue", 1)):
        rec = contrast_set(qid, "t", gold, [(1, other, "object")])
        rec["perturbations"] += [invariance(f"{qid}_i{r}", r, gold) for r in range(2, 2 + n_inv)]
        out.append(rec)
    return out


def questions() -> list[str]:
    return [q for r in records() for q in [r["question_id"], *(p["question_id"] for p in r["perturbations"])]]


def scored(preds: dict[str, str]) -> dict:
    return evaluate_contrast(records(), {"m": preds}, n_boot=0)["invariance"]["m"]


def test_always_yes_is_consistent_only_where_yes_is_the_answer():
    inv = scored({q: "Yes." for q in questions()})
    assert inv["overall"]["consistency"] == pytest.approx(1 / 3)  # Y only
    assert inv["overall"]["original_accuracy"] == pytest.approx(1 / 3)
    assert inv["overall"]["perturbed_accuracy"] == pytest.approx(2 / 4)
    assert (inv["overall"]["n_sets"], inv["overall"]["n_perturbations"]) == (3, 4)


@pytest.mark.parametrize("nothing", ["", "   ", "?!", "."])
def test_empty_answers_are_never_consistent_and_are_counted(nothing):
    report = evaluate_contrast(records(), {"m": {q: nothing for q in questions()}}, n_boot=0)
    inv = report["invariance"]["m"]
    assert inv["overall"]["consistency"] == 0 and inv["overall"]["perturbed_accuracy"] == 0
    assert (inv["questions"], inv["empty"], inv["missing"]) == (7, 7, 0)
    cov = report["coverage"]["m"]
    assert (cov["questions"], cov["empty"], cov["missing"], cov["ignored"]) == (6, 6, 0, 0)
    assert report["results"]["m"]["1"]["overall"]["original_accuracy"]["value"] == 0


def test_keeping_a_wrong_answer_is_not_consistency():
    gold = {q: ("yes" if q.startswith("Y") else "no" if q.startswith("N") else "red") for q in questions()}
    same_wrong = {**gold, "R": "green", "R_i2": "green"}  # kept, but wrong on both
    changed = {**gold, "Y_i3": "no"}  # original right, one invariance changed
    missing = {q: a for q, a in gold.items() if q != "N_i2"}
    assert scored(gold)["overall"]["consistency"] == 1.0
    assert scored(same_wrong)["overall"]["consistency"] == pytest.approx(2 / 3)
    assert scored(same_wrong)["by_question_type"]["unknown"]["original_accuracy"] == pytest.approx(2 / 3)
    assert scored(changed)["overall"]["consistency"] == pytest.approx(2 / 3)
    assert scored(changed)["overall"]["perturbed_accuracy"] == pytest.approx(3 / 4)
    inv = scored({**missing, "R": "green"})  # a partial run: N's set was not asked in full
    assert inv["overall"]["n_sets"] == 2 and inv["overall"]["consistency"] == pytest.approx(1 / 2)
    assert (inv["missing"], inv["missing_examples"]) == (1, ["N_i2"])


def test_a_set_whose_original_was_not_asked_is_left_out_as_the_harness_leaves_it_out():
    """A partial run (`--limit`) is scored on the sets asked in full, as the exported lmms-eval
    task scores it; `--strict` refuses it instead."""
    gold = {q: ("yes" if q.startswith("Y") else "no" if q.startswith("N") else "red") for q in questions()}
    del gold["Y"]
    inv = scored({**gold, "R": "green"})
    assert inv["overall"]["n_sets"] == 2 and inv["overall"]["consistency"] == pytest.approx(1 / 2)
    assert (inv["missing"], inv["missing_examples"]) == (1, ["Y"])
    with pytest.raises(InputError, match="--strict"):
        evaluate_contrast(records(), {"m": {q: a for q, a in gold.items() if q != "Y_i2"} | {"Y": "yes"}},
                          n_boot=0, strict=True)


def test_an_empty_gold_answer_is_not_matched_by_an_empty_prediction():
    assert not is_right("", "") and not is_right(" . ", "")
    assert is_right("The Red.", "red")
    rec = records()[2]
    rec["answer"] = ""
    for p in rec["perturbations"]:
        p["answer"] = "" if p.get("kind") == "invariance" else "blue"
    report = evaluate_contrast([rec], {"m": {"R": "", "R_c1": "blue", "R_i2": ""}}, n_boot=0)
    assert report["invariance"]["m"]["overall"]["consistency"] == 0


def test_the_report_shows_consistency_beside_accuracy():
    report = evaluate_contrast(records(), {"yes": {q: "yes" for q in questions()},
                                           "empty": {q: "" for q in questions()}}, n_boot=0)
    md = render_markdown(report)
    section = md[md.index("## Invariance"):md.index("## Perturbed accuracy")]
    assert "| model | question type | sets | perturbations | Orig | Pert | Cons |" in section
    assert "| yes | overall | 3 | 4 | 33.3 | 50.0 | 33.3 |" in section
    assert "| empty | 7 | 0 | 7 |" in section  # questions, missing, empty
    rows = [line.split(",") for line in render_csv(report).splitlines()]
    assert ["yes", "", "invariance", "all", "consistency", "0.3333333333333333", "", "", "3", "4"] in rows


def test_no_constant_or_empty_answer_scores_a_two_image_group():
    """NaturalBench's metrics are accuracies: the first question's answer differs between the two
    images, so one answer cannot be right on both, and an empty answer is never right."""
    rec = contrast_set("G", "t", "yes", [(1, "no", "object")])
    rec["perturbations"][0]["group"] = {"id": "G_g", "kind": "swap", "images": ["i1", "i2"], "cells": [
        {"question_id": "G", "question": "q?", "answer": "yes"},
        {"question_id": "G_c1", "question": "p?", "answer": "no"},
        {"question_id": "G_j0", "question": "q?", "answer": "no"},
        {"question_id": "G_j1", "question": "p?", "answer": "yes"}]}
    sets = parse_contrast_sets([rec], proofs=False)  # scoring reads answers, not proofs
    ids = ("G", "G_c1", "G_j0", "G_j1")
    for answer in ("yes", "no", "", "."):
        m = group_metrics(sets, dict.fromkeys(ids, answer))["overall"]
        assert m["group_accuracy"] == 0 and m["image_accuracy"] == 0 and m["question_accuracy"] == 0
    right = group_metrics(sets, {"G": "yes", "G_c1": "no", "G_j0": "no", "G_j1": "yes"})["overall"]
    assert right["group_accuracy"] == 1
