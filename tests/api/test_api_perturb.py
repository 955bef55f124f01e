"""POST /v1/perturb: one question, one graph."""

from __future__ import annotations

import copy

import pytest
from server_harness import examples

from contrastgen.engine import Engine


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


def _request() -> dict:
    return copy.deepcopy(examples()["PerturbRequest"]["perturbed"]["value"])


def test_perturbations_carry_answers_and_evidence(server):
    req = _request()
    with server.client() as c:
        r = c.post("/v1/perturb", json=req)
    assert r.status_code == 200
    body = r.json()
    perts = body["perturbations"]
    assert body["template"] and body["reason"] is None
    assert [p["rank"] for p in perts] == list(range(1, len(perts) + 1))
    assert len(perts) <= req["max_k"]
    for p in perts:
        assert p["question_id"].startswith(req["question_id"] + "_")
        assert p["answer"] != req["answer"]
        assert p["evidence"]["answer"] == p["answer"] and p["evidence"]["facts"]
        assert p["question"] != req["question"]


def test_result_is_the_librarys_with_the_servers_corpus(server, engine, sample):
    """The default test server was started with the sample graphs as its corpus."""
    _, graphs = sample
    req = _request()
    question = {"question": req["question"], "answer": req["answer"], "imageId": req["image_id"],
                "semantic": req["semantic"]}
    expected = engine.perturb(req["question_id"], question, req["scene_graph"],
                              corpus=engine.build_corpus(graphs), max_k=req["max_k"], seed=req["seed"])
    with server.client() as c:
        body = c.post("/v1/perturb", json=req).json()
    assert body["perturbations"] == [p.to_dict() for p in expected.perturbations]
    assert (body["template"], body["slots"], body["reason"]) == (expected.template, expected.slots,
                                                                 expected.reason)


def test_same_request_same_bytes(server):
    req = _request()
    with server.client() as c:
        a = c.post("/v1/perturb", json=req).content
        b = c.post("/v1/perturb", json=req).content
    assert a == b


def test_unmatched_question_is_200_with_a_reason(server):
    req = examples()["PerturbRequest"]["no_match"]["value"]
    with server.client() as c:
        r = c.post("/v1/perturb", json=req)
    assert r.status_code == 200
    assert r.json()["reason"] == "no_match" and r.json()["perturbations"] == []


def _detail(r) -> list[dict]:
    assert r.status_code == 422, r.text
    return r.json()["detail"]


@pytest.mark.parametrize("mutate, loc", [
    (lambda r: r.pop("question"), ["body", "question"]),
    (lambda r: r.update(max_k=0), ["body", "max_k"]),
    (lambda r: r.update(max_k=51), ["body", "max_k"]),
    (lambda r: r.update(templates=["no_such_template"]), ["body", "templates", 0]),
    (lambda r: r.update(unknown_field=1), ["body", "unknown_field"]),
    (lambda r: r["scene_graph"]["objects"].__setitem__("9", {"name": "cat", "x": "1", "y": 0, "w": 1, "h": 1}),
     ["body", "scene_graph", "objects", "9", "x"]),
])
def test_invalid_fields_are_422_naming_the_field(server, mutate, loc):
    req = _request()
    mutate(req)
    with server.client() as c:
        detail = _detail(c.post("/v1/perturb", json=req))
    assert loc in [d["loc"] for d in detail], detail


def test_relation_to_a_missing_object_is_422_naming_graph_and_object(server):
    req = _request()
    oid, obj = next(iter(req["scene_graph"]["objects"].items()))
    obj["relations"] = [{"name": "near", "object": "nope"}]
    with server.client() as c:
        [d] = _detail(c.post("/v1/perturb", json=req))
    assert d["loc"] == ["body", "scene_graph", "objects", oid, "relations", 0, "object"]
    assert oid in d["msg"] and "nope" in d["msg"]


@pytest.mark.parametrize("body", [b"{not json", b"", b"[]", b"null"])
def test_malformed_bodies_are_422(server, body):
    with server.client() as c:
        r = c.post("/v1/perturb", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][0] == "body"


def test_perturb_through_the_program(server):
    graph = {"width": 640, "height": 480, "objects": {
        "1": {"name": "man", "x": 40, "y": 100, "w": 60, "h": 200, "relations": [{"name": "holding", "object": "2"}]},
        "2": {"name": "umbrella", "x": 45, "y": 150, "w": 50, "h": 60, "attributes": ["red"]},
        "3": {"name": "woman", "x": 500, "y": 100, "w": 60, "h": 200, "relations": [{"name": "holding", "object": "4"}]},
        "4": {"name": "bag", "x": 505, "y": 150, "w": 50, "h": 60, "attributes": ["blue"]}}}
    req = {"question": "What is the man holding?", "answer": "umbrella", "mode": "programs",
           "annotations": {"question": {"3": "1"}}, "types": {"detailed": "relO"},
           "semantic": [{"operation": "select", "argument": "man (1)", "dependencies": []},
                        {"operation": "relate", "argument": "_,holding,o (2)", "dependencies": [0]},
                        {"operation": "query", "argument": "name", "dependencies": [1]}],
           "scene_graph": graph}
    with server.client() as c:
        r = c.post("/v1/perturb", json=req)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["template"] == "program" and body["types"] == {"detailed": "relO"}
    assert [(p["question"], p["answer"]) for p in body["perturbations"]] == [("What is the woman holding?", "bag")]
