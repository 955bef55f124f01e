"""Health, readiness, version, templates, the OpenAPI schema and the access log."""

from __future__ import annotations

import time

import pytest
from server_harness import examples

from contrastgen.templates.patterns import load_templates

PATHS = {"PerturbRequest": "/v1/perturb", "BatchRequest": "/v1/perturb/batch",
         "VerifyRequest": "/v1/verify", "EvaluateRequest": "/v1/evaluate"}


def test_health_readiness_and_version(server):
    with server.client() as c:
        assert c.get("/healthz").json() == {"status": "ok"}
        ready = c.get("/readyz").json()
        assert ready["status"] == "ready"
        assert ready["templates"] == len(load_templates())
        assert ready["corpus_images"] > 0  # started with --scene-graphs
        version = c.get("/version").json()
        assert version["api"] == "v1" and version["evidence_schema"] == 1


def test_templates_are_the_engines(server):
    with server.client() as c:
        body = c.get("/v1/templates").json()
    assert [t["id"] for t in body["templates"]] == [t.id for t in load_templates()]
    for t in body["templates"]:
        assert t["description"]
        assert t["examples"]["match"], t["id"]


def test_openapi_documents_every_endpoint_with_bodies_and_examples(server):
    with server.client() as c:
        schema = c.get("/openapi.json").json()
        docs = c.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    assert {"/healthz", "/readyz", "/version", "/v1/templates", *PATHS.values()} <= set(schema["paths"])
    components = schema["components"]["schemas"]
    for model, path in PATHS.items():
        body = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        assert body["schema"] == {"$ref": f"#/components/schemas/{model}"}
        assert body["examples"], model
        assert model in components
        assert "422" in schema["paths"][path]["post"]["responses"]
    # nested request models are resolvable too
    assert "SceneGraph" in components and "ProgramStep" in components
    assert "securitySchemes" not in schema.get("components", {})  # auth is off on this server


@pytest.mark.parametrize("model", sorted(PATHS))
def test_every_documented_example_is_accepted(server, model):
    named = examples()[model]
    with server.client() as c:
        for name, ex in named.items():
            r = c.post(PATHS[model], json=ex["value"])
            assert r.status_code == 200, (name, r.text[:500])


def test_the_perturb_example_shows_perturbations(server):
    ex = examples()["PerturbRequest"]["perturbed"]["value"]
    with server.client() as c:
        body = c.post("/v1/perturb", json=ex).json()
    assert body["perturbations"] and body["reason"] is None


def test_access_log_is_one_json_object_per_request(server):
    with server.client() as c:
        r = c.get("/healthz", headers={"X-Request-ID": "trace-42"})
    assert r.headers["x-request-id"] == "trace-42"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = [x for x in server.log_lines() if x.get("request_id") == "trace-42"]
        if lines:
            break
        time.sleep(0.05)
    [line] = lines
    assert line["event"] == "request" and line["method"] == "GET" and line["path"] == "/healthz"
    assert line["status"] == 200 and line["ms"] >= 0 and line["level"] == "info"
