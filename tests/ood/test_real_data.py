"""The constructions on the real data in ../shared (skipped when it is absent)."""

import json
from collections import Counter
from pathlib import Path

import pytest

from contrastgen.ood import evaluate_ood
from contrastgen.ood.gqa_ood import GqaOodConfig
from contrastgen.ood.pipeline import run_gqa_ood, run_vqavs
from contrastgen.ood.vqavs import VqaVsConfig

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
VQAVS = SHARED / "data" / "vqa-vs"
GQA = SHARED / "data" / "gqa" / "val_balanced_questions_sample.json"

pytestmark = pytest.mark.shared


def test_real_vqavs_language_shortcuts(tmp_path):
    """One build (it is the slow part), then its sizes, its tails re-derived independently of the
    builder from the written groups, and the scoring of the crowd's own answer."""
    if not (VQAVS / "Val-Ques.json").exists():
        pytest.skip("../shared/data/vqa-vs absent")
    out = tmp_path / "out"
    stats = run_vqavs(VQAVS / "Val-Ques.json", out, annotations=VQAVS / "Val-Ans.json",
                      config=VqaVsConfig(shortcuts=("QT", "KW", "KWP", "QT+KW")))
    assert stats["samples"] == 32723
    assert stats["shortcuts"]["QT"]["groups"] == 65  # VQA's 65 question types
    for name in ("QT", "KW", "KWP", "QT+KW"):
        s = stats["shortcuts"][name]
        assert 0 < s["imbalanced_groups"] < s["groups"]
        assert 0 < s["tail"] < s["head"]  # OOD sets are the rare part of the imbalanced groups
        assert s["head"] + s["tail"] + s["unlabelled"] <= 32723

    groups = json.loads((out / "groups.json").read_text())
    answers = json.loads((out / "answers.json").read_text())
    splits = json.loads((out / "splits.json").read_text())
    concepts = {json.loads(x)["question_id"]: json.loads(x) for x in (out / "concepts.jsonl").open()}
    for name in ("QT", "KW"):
        for qid in splits["ood"][name][:500]:
            g = groups[name][concepts[qid]["concepts"][name]]
            counts = Counter(g["counts"])
            assert g["entropy"] < 0.9
            assert counts[answers[qid]["answer"]] < 1.2 * sum(counts.values()) / len(counts)
        assert not set(splits["ood"][name]) & set(splits["head"][name])

    report = evaluate_ood(out, {"mc": {q: a["answer"] for q, a in answers.items()}})
    assert report["models"]["mc"]["accuracy"]["IID"] > 0.9  # the crowd's answer agrees with most humans
    assert report["sets"] == ["IID", "QT", "KW", "KWP", "QT+KW"]


def test_real_gqa_ood_both_rules(tmp_path):
    if not GQA.exists():
        pytest.skip("../shared/data/gqa absent")
    for rule in ("paper", "released"):
        stats = run_gqa_ood(GQA, tmp_path / rule, GqaOodConfig(rule=rule))
        q = stats["questions"]
        assert q["all"] == q["head"] + q["tail"] > 0
        assert stats["input"]["questions"] == 1358
        tail = json.loads((tmp_path / rule / "tail.json").read_text())
        groups = json.loads((tmp_path / rule / "groups.json").read_text())
        for record in tail.values():
            assert record["answer"] in groups[record["groups"]["local"]]["tail"]
    # The released rule's threshold (mean - std of entropies) is looser on this rare-answer sample.
    paper = json.loads((tmp_path / "paper" / "stats.json").read_text())
    released = json.loads((tmp_path / "released" / "stats.json").read_text())
    assert released["groups_kept"] > paper["groups_kept"]
