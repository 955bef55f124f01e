"""CLEVR contrast sets: what a perturbation must be, that the verifier confirms it, and that it
fails when the proof is tampered with."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from contrastgen.datasets.clevr import load_scenes
from contrastgen.datasets.clevr_reading import Reading, read_question
from contrastgen.datasets.clevr_vocab import part_display
from contrastgen.records import load_contrast_records
from contrastgen.verify.checker import verify_contrast_sets


def _words(program):
    """Raw part names by their words: the same part name is spelt as each object's part list spells it."""
    return [{**n, "value_inputs": [part_display(v) for v in n["value_inputs"]]}
            if n["type"] == "partfilter_partname" else n for n in program]


@pytest.fixture(scope="module")
def records(generated):
    return load_contrast_records(generated)


@pytest.fixture(scope="module")
def scenes(sample):
    return load_scenes(sample / "scenes")


def test_most_questions_get_contrasts_and_all_of_them_verify(records, scenes):
    assert len(records) >= 350  # of 463: a drop means edits were lost
    contrasts = [p for r in records for p in r["perturbations"] if p.get("kind") != "invariance"]
    assert len(contrasts) >= 350
    assert {p["change"]["kind"] for p in contrasts} == {"attribute", "object", "relation"}
    report = verify_contrast_sets(records, scenes)
    assert report.ok, report.failures[:3]
    assert report.checked == sum(len(r["perturbations"]) for r in records)


def test_a_contrast_changes_one_value_and_the_answer_and_reads_back(records):
    for r in records:
        assert r["dataset"] == "clevr" and isinstance(r["program"], list)
        for p in r["perturbations"]:
            if p.get("kind") == "invariance":
                continue
            assert p["answer"] != r["answer"]
            changed = [i for i, (a, b) in enumerate(zip(_words(r["program"]), _words(p["program"]), strict=True))
                       if a != b]
            assert len(changed) == 1, p["question_id"]
            reading = read_question({"question": p["question"], **r["family"]})
            assert isinstance(reading, Reading)
            assert p["change"]["to"] in p["question"]


def test_redundancy_edits_keep_the_answer_and_only_add_or_drop_filters(records):
    inv = [(r, p) for r in records for p in r["perturbations"] if p.get("kind") == "invariance"]
    assert {p["change"]["edit"] for _, p in inv} == {"rd-", "rd+"}
    for r, p in inv:
        assert p["answer"] == r["answer"]
        shorter = len(p["program"]) < len(r["program"])
        assert shorter == (p["change"]["edit"] == "rd-"), p["question_id"]
        assert p["question"] != r["question"]


def _tampered(records, edit):
    out = json.loads(json.dumps(records))
    edit(out)
    return out


@pytest.mark.parametrize("name, edit, check", [
    ("answer", lambda rs: rs[0]["perturbations"][0].update(answer="maybe"), "answer"),
    ("words", lambda rs: rs[0]["perturbations"][0].update(question=rs[0]["question"]), "text_mismatch"),
    ("trace", lambda rs: rs[0]["perturbations"][0]["evidence"]["trace"].__setitem__(0, [0]), "query"),
    ("fact", lambda rs: rs[0]["perturbations"][0]["evidence"]["facts"].__setitem__(
        0, {"fact": "object_count", "count": 99}), "fact"),
    ("two values", lambda rs: rs[1]["perturbations"][0].update(program=[
        {**n, "value_inputs": ["left"]} if n["type"] == "relate" else n for n in rs[0]["program"]]), "program"),
])
def test_verifier_catches_tampering(records, scenes, name, edit, check):
    report = verify_contrast_sets(_tampered(records, edit), scenes)
    assert not report.ok, name
    assert check in report.by_check(), (name, report.by_check())


def test_same_inputs_same_bytes(sample, generated, tmp_path):
    from contrastgen.run.pipeline import RunRequest, run_generate

    again = tmp_path / "again"
    run_generate(RunRequest(sample / "questions", sample / "scenes", "clevr", workers=1), again)
    for name in ("contrast_sets.jsonl", "augmented.json", "stats.json"):
        assert (again / name).read_bytes() == (generated / name).read_bytes(), name


def test_cli_generate_detects_clevr_and_verify_passes(sample, tmp_path):
    out = tmp_path / "cli"
    cmd = [sys.executable, "-m", "contrastgen"]
    done = subprocess.run([*cmd, "generate", "--questions", str(sample / "questions" / "superCLEVR_questions_5.json"),
                           "--scene-graphs", str(sample / "scenes"), "--out", str(out), "--max-k", "1"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    first = json.loads((out / "contrast_sets.jsonl").read_text().splitlines()[0])
    assert first["question_id"].isdigit() and all(p["rank"] == 1 for p in first["perturbations"])
    done = subprocess.run([*cmd, "verify", str(out), "--scene-graphs", str(sample / "scenes")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK" in done.stdout


def test_evaluate_scores_contrast_and_invariance_apart(generated, tmp_path):
    from contrastgen.evaluation.contrast import evaluate_contrast

    records = load_contrast_records(generated)
    gold = {r["question_id"]: r["answer"] for r in records}
    gold |= {p["question_id"]: p["answer"] for r in records for p in r["perturbations"]}
    shortcut = {q: records[0]["answer"] for q in gold}
    report = evaluate_contrast(records, {"gold": gold, "shortcut": shortcut}, seed=0, n_boot=50, examples=1)
    assert "invariance" in report
    assert report["invariance"]["gold"]["overall"]["consistency"] == 1.0
    text = json.dumps(report)
    assert "one_hop" in text and "part" in text
