"""GQA question types travel with every contrast set: in the record, in stats.json / stats.md per
type, and as a breakdown of the evaluation report."""

from __future__ import annotations

from collections import Counter

import orjson
import pytest

from contrastgen.engine import Engine
from contrastgen.evaluation.contrast import evaluate_contrast
from contrastgen.resources import sample_dir
from contrastgen.results.stats import stats_markdown
from contrastgen.run.generate import generate


@pytest.fixture(scope="module")
def run():
    questions = orjson.loads((sample_dir() / "questions.json").read_bytes())
    graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    return questions, generate(questions, graphs, engine=Engine.load(), workers=1)


def test_every_record_carries_its_questions_types(run):
    questions, gen = run
    assert gen.records
    for rec in gen.records:
        assert rec["types"] == questions[rec["question_id"]]["types"]


def test_stats_count_matched_pairs_per_type(run):
    questions, gen = run
    stats = gen.stats
    by_type = stats["question_types"]["detailed"]
    matched = sum(t["matched"] for t in stats["templates"].values())
    assert sum(t["matched"] for t in by_type.values()) == matched
    assert sum(t["matched"] for t in stats["question_types"]["structural"].values()) == matched
    perturbed = Counter(questions[r["question_id"]]["types"]["detailed"] for r in gen.records)
    assert {name: t["perturbed"] for name, t in by_type.items() if t["perturbed"]} == dict(perturbed)
    for t in by_type.values():  # every matched pair is perturbed or refused for a reason
        assert t["perturbed"] + sum(t["reasons"].values()) == t["matched"]
    md = stats_markdown(stats)
    assert "## By GQA question type (`types.detailed`)" in md and "| relVerify |" in md


def test_the_evaluation_breaks_down_by_question_type(run):
    _, gen = run
    records = gen.records
    # a model that answers every perturbation of one type wrongly, everything else right
    victim = records[0]["types"]["detailed"]
    preds = {}
    for rec in records:
        preds[rec["question_id"]] = rec["answer"]
        for p in rec["perturbations"]:
            preds[p["question_id"]] = "wrong" if rec["types"]["detailed"] == victim else p["answer"]
    report = evaluate_contrast(records, {"m": preds}, n_boot=0)
    groups = report["results"]["m"]["5"]["by_question_type"]
    assert set(groups) == {r["types"]["detailed"] for r in records}
    assert groups[victim]["perturbed_accuracy"]["value"] == 0.0
    assert all(g["perturbed_accuracy"]["value"] == 1.0 for name, g in groups.items() if name != victim)
