"""Authentication, CORS, and every limit: 401, 413, 503, 504; refusing an unprotected public bind."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import orjson
import pytest
from server_harness import CORS_ORIGIN, TOKEN, auth, examples
from synth import CLEAN, make_dataset

MIB = 1024 * 1024
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def slow_batch() -> bytes:
    """A batch under the secured server's 1 MiB limit that takes far longer than its 0.1 s.

    The questions are cut to their text, answer and image (about a tenth of their size with
    programs), so 4,000 of them fit: about 0.35 s of work on this machine, over three times the
    limit, where 800 full questions took 0.1-0.2 s and sometimes finished in time.
    """
    full, graphs = make_dataset(60, 4000, seed=11, noise=CLEAN)  # GQA's noise makes graphs denser
    questions = {qid: {k: q[k] for k in ("question", "answer", "imageId")} for qid, q in full.items()}
    body = orjson.dumps({"questions": questions, "scene_graphs": graphs})
    assert len(body) < MIB
    assert max(len(g["objects"]) for g in graphs.values()) <= 40
    return body


def _perturb_request() -> dict:
    return examples()["PerturbRequest"]["perturbed"]["value"]


def test_v1_needs_the_bearer_token(secured_server):
    with secured_server.client() as c:
        missing = c.get("/v1/templates")
        wrong = c.get("/v1/templates", headers=auth("not-the-token"))
        right = c.get("/v1/templates", headers=auth())
        post = c.post("/v1/perturb", json=_perturb_request())
    assert missing.status_code == wrong.status_code == post.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert missing.json()["error"] == "unauthorized"
    assert right.status_code == 200


def test_probes_and_schema_stay_open_and_the_schema_declares_bearer_auth(secured_server):
    with secured_server.client() as c:
        for path in ("/healthz", "/readyz", "/version"):
            assert c.get(path).status_code == 200, path
        schema = c.get("/openapi.json").json()
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    assert schema["paths"]["/v1/perturb"]["post"]["security"] == [{"HTTPBearer": []}]


def test_auth_is_off_by_default(server):
    with server.client() as c:
        assert c.post("/v1/perturb", json=_perturb_request()).status_code == 200


def test_cors_only_for_the_configured_origin(secured_server, server):
    preflight = {"Origin": CORS_ORIGIN, "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization,content-type"}
    with secured_server.client() as c:
        allowed = c.options("/v1/perturb", headers=preflight)
        other = c.options("/v1/perturb", headers={**preflight, "Origin": "https://evil.example"})
    with server.client() as c:
        off = c.options("/v1/perturb", headers=preflight)
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == CORS_ORIGIN
    assert "access-control-allow-origin" not in other.headers
    assert "access-control-allow-origin" not in off.headers


def test_body_over_the_limit_is_413_before_it_is_read(secured_server):
    body = b'{"question": "' + b"x" * (MIB + 10) + b'"}'
    with secured_server.client() as c:
        r = c.post("/v1/perturb", content=body, headers={**auth(), "Content-Type": "application/json"})
    assert r.status_code == 413


def test_graph_with_too_many_objects_is_413(secured_server):
    req = dict(_perturb_request())
    graph = req["scene_graph"]
    objects = dict(graph["objects"])
    for i in range(41 - len(objects)):
        objects[f"extra{i}"] = {"name": "pebble", "x": 1, "y": 1, "w": 1, "h": 1}
    req["scene_graph"] = {**graph, "objects": objects}
    with secured_server.client() as c:
        r = c.post("/v1/perturb", json=req, headers=auth())
    assert r.status_code == 413
    assert r.json()["error"] == "limit_exceeded" and "41" in r.json()["detail"]


def test_request_over_the_time_limit_is_504(secured_server, slow_batch):
    with secured_server.client() as c:
        r = c.post("/v1/perturb/batch", content=slow_batch, headers={**auth(), **JSON})
        assert r.status_code == 504
        assert r.json() == {"error": "timeout", "detail": "request exceeded the time limit of 0.1 s"}
        # the server is still fine afterwards, with nothing left waiting
        assert c.get("/v1/templates", headers=auth()).status_code == 200
        assert c.get("/readyz").json()["status"] == "ready"


def test_stream_over_the_time_limit_ends_with_an_error_line(secured_server, slow_batch):
    headers = {**auth(), **JSON, "Accept": "application/x-ndjson"}
    with secured_server.client() as c:
        r = c.post("/v1/perturb/batch", content=slow_batch, headers=headers)
    if r.status_code == 200:  # the status line went out before time ran out
        last = orjson.loads(r.content.splitlines()[-1])
        assert last["error"] == "timeout"
    else:
        assert r.status_code == 504


def test_burst_beyond_the_queue_is_refused_with_503(secured_server, slow_batch):
    def post(_: int) -> httpx.Response:
        with secured_server.client() as c:
            return c.post("/v1/perturb/batch", content=slow_batch, headers={**auth(), **JSON})

    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(post, range(8)))
    codes = [r.status_code for r in responses]
    assert set(codes) <= {503, 504}, codes
    assert 503 in codes and 504 in codes, codes
    refused = next(r for r in responses if r.status_code == 503)
    assert refused.headers["retry-after"] == "1" and refused.json()["error"] == "overloaded"


def test_public_bind_without_token_is_refused(monkeypatch):
    from click.testing import CliRunner

    from contrastgen.cli import cli

    monkeypatch.delenv("CONTRASTGEN_API_TOKEN", raising=False)
    r = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "0"])
    assert r.exit_code == 2
    assert "CONTRASTGEN_API_TOKEN" in r.output and "--insecure" in r.output


def test_exposure_rules():
    from contrastgen.api.settings import Settings, UnsafeBindError, check_exposure

    for host in ("127.0.0.1", "127.8.0.1", "::1", "localhost"):
        check_exposure(Settings(host=host))
    check_exposure(Settings(host="0.0.0.0", token=TOKEN))
    check_exposure(Settings(host="0.0.0.0", insecure=True))
    with pytest.raises(UnsafeBindError):
        check_exposure(Settings(host="0.0.0.0"))
    with pytest.raises(UnsafeBindError):
        check_exposure(Settings(host="192.168.1.5"))
