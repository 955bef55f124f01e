"""POST /v1/verify and /v1/evaluate on records the server generated itself."""

from __future__ import annotations

import copy

import pytest

from contrastgen.evaluation.contrast import evaluate_contrast
from contrastgen.jsonio import dumps
from contrastgen.verify.checker import verify_contrast_sets


@pytest.fixture(scope="module")
def records(server, sample) -> list[dict]:
    questions, graphs = sample
    with server.client() as c:
        results = c.post("/v1/perturb/batch",
                         json={"questions": questions, "scene_graphs": graphs}).json()["results"]
    return [{k: v for k, v in r.items() if k != "reason"} for r in results if r["perturbations"]]


def _library_report(records: list[dict], graphs: dict) -> dict:
    report = verify_contrast_sets(records, graphs)
    return {"ok": report.ok, "checked": report.checked, "failed": report.failed_perturbations,
            "by_check": report.by_check(),
            "failures": [{"question_id": f.question_id, "perturbation_id": f.perturbation_id,
                          "problem": f.problem, "check": f.check} for f in report.failures]}


def test_verify_is_the_librarys_check(server, sample, records):
    _, graphs = sample
    with server.client() as c:
        body = c.post("/v1/verify", json={"records": records, "scene_graphs": graphs}).json()
    assert body["checked"] == sum(len(r["perturbations"]) for r in records) > 100
    body.pop("unannotated_prone_rules")
    assert body == _library_report(records, graphs)


def test_a_wrong_answer_fails_verification_naming_the_perturbation(server, sample, records):
    _, graphs = sample
    with server.client() as c:
        before = c.post("/v1/verify", json={"records": records, "scene_graphs": graphs}).json()
        failing = {f["perturbation_id"] for f in before["failures"]}
        bad = copy.deepcopy(records)
        record = next(r for r in bad
                      if r["perturbations"][0]["question_id"] not in failing)
        victim = record["perturbations"][0]
        victim["answer"] = victim["evidence"]["answer"] = record["answer"]  # the original answer
        after = c.post("/v1/verify", json={"records": bad, "scene_graphs": graphs}).json()
    assert after["ok"] is False
    new = [f for f in after["failures"] if f not in before["failures"]]
    assert new and {f["perturbation_id"] for f in new} == {victim["question_id"]}
    assert after["failed"] == before["failed"] + 1
    assert sum(after["by_check"].values()) == len(after["failures"])


def test_verify_rejects_an_invalid_graph_with_422(server, records):
    image = records[0]["image_id"]
    with server.client() as c:
        r = c.post("/v1/verify", json={"records": records[:1],
                                       "scene_graphs": {image: {"width": 0, "objects": {}}}})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][:3] == ["body", "scene_graphs", image]


def test_evaluate_is_the_librarys_report(server, records):
    right = {r["question_id"]: r["answer"] for r in records}
    right.update({p["question_id"]: p["answer"] for r in records for p in r["perturbations"]})
    always_yes = [{"questionId": q, "prediction": "yes"} for q in right]
    req = {"records": records, "predictions": {"right": right, "always_yes": always_yes},
           "seed": 3, "n_boot": 50}
    with server.client() as c:
        r = c.post("/v1/evaluate", json=req)
    assert r.status_code == 200, r.text[:500]
    expected = evaluate_contrast(records, {"right": right,
                                           "always_yes": {q: "yes" for q in right}},
                                 seed=3, n_boot=50, path="records")
    assert r.content == dumps(expected)
    overall = r.json()["results"]["right"]
    assert overall  # the perfect model has results for every k


def test_evaluate_errors_are_422(server, records):
    with server.client() as c:
        no_preds = c.post("/v1/evaluate", json={"records": records[:2], "predictions": {}})
        bad_list = c.post("/v1/evaluate", json={"records": records[:2],
                                                "predictions": {"m": [{"nothing": 1}]}})
        too_many_boot = c.post("/v1/evaluate", json={"records": records[:2], "n_boot": 10**6,
                                                     "predictions": {"m": {"x": "yes"}}})
    assert no_preds.status_code == 422 and no_preds.json()["detail"][0]["loc"] == ["body", "predictions"]
    assert bad_list.status_code == 422
    assert bad_list.json()["detail"][0]["loc"] == ["body", "predictions", "m"]
    assert too_many_boot.status_code == 422
    assert too_many_boot.json()["detail"][0]["loc"] == ["body", "n_boot"]


def test_clevr_records_verify_and_evaluate_over_http(server):
    """CLEVR contrast sets need nothing new of the service: the same routes, the data model."""
    from contrastgen.datasets.clevr import load_questions, load_scenes
    from contrastgen.resources import clevr_sample_dir
    from contrastgen.run.generate import generate

    sample = clevr_sample_dir()
    graphs = load_scenes(sample / "scenes")
    questions = load_questions(sample / "questions" / "superCLEVR_questions_part_5.json")
    records = generate(questions, graphs, family="clevr", max_k=3, seed=0).records[:40]
    with server.client() as c:
        body = c.post("/v1/verify", json={"records": records, "scene_graphs": graphs}).json()
        assert body["ok"] is True and body["checked"] == sum(len(r["perturbations"]) for r in records)
        bad = copy.deepcopy(records)
        bad[0]["perturbations"][0]["question"] = bad[0]["question"]
        body = c.post("/v1/verify", json={"records": bad, "scene_graphs": graphs}).json()
        assert body["ok"] is False and "text_mismatch" in body["by_check"]
        gold = {r["question_id"]: r["answer"] for r in records}
        gold |= {p["question_id"]: p["answer"] for r in records for p in r["perturbations"]}
        predictions = {"gold": gold, "yes": dict.fromkeys(gold, "yes")}
        r = c.post("/v1/evaluate", json={"records": records, "predictions": predictions, "seed": 3, "n_boot": 50})
    assert r.status_code == 200, r.text[:500]
    assert r.content == dumps(evaluate_contrast(records, predictions, seed=3, n_boot=50, path="records"))
    # the rd-/rd+ invariances: only right answers are consistent, so always-"yes" does not win them
    invariance = r.json()["invariance"]
    assert invariance["gold"]["overall"]["consistency"] == 1.0
    assert invariance["yes"]["overall"]["n_sets"] > 5 and invariance["yes"]["overall"]["consistency"] < 1
