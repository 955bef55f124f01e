"""What a request must be before the service reads it: JSON, from a loopback name when the server
has no token, a body that arrives in time, a question of sane length, JSON within the limits.
Each guard is tried against a real server, and each refusal is a 4xx a client can act on."""

from __future__ import annotations

import socket
import time
import uuid
from urllib.parse import urlparse

import httpx
import orjson
import pytest
from contrastgen.api.guards import loopback_host
from server_harness import Server


@pytest.fixture(scope="module")
def body(sample) -> dict:
    questions, graphs = sample
    qid, q = next(iter(questions.items()))
    return {"question_id": qid, "question": q["question"], "answer": q["answer"], "image_id": q["imageId"],
            "scene_graph": graphs[q["imageId"]]}


def _raw(server: Server, request: bytes, wait: float = 5.0) -> bytes:
    """Send bytes as they are (what httpx would not send) and read the answer."""
    url = urlparse(server.url)
    with socket.create_connection((url.hostname, url.port), timeout=wait) as s:
        s.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return data


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x"])
def test_a_body_that_is_not_declared_json_is_refused(server, body, content_type):
    import orjson
    headers = {"content-type": content_type} if content_type else {}
    with server.client() as client:
        response = client.post("/v1/perturb", content=orjson.dumps(body), headers=headers)
        declared = client.post("/v1/perturb", content=orjson.dumps(body),
                               headers={"content-type": "application/json; charset=utf-8"})
    assert response.status_code == 415, response.text
    assert response.json()["error"] == "unsupported_media_type"
    assert declared.status_code == 200  # the same bytes, declared as JSON, are served


def test_a_tokenless_loopback_server_answers_only_loopback_host_names(server, body):
    with server.client() as client:
        foreign = client.post("/v1/perturb", json=body, headers={"host": "attacker.example"})
        rebound = client.post("/v1/perturb", json=body, headers={"host": "192.168.1.5:8000"})
        local = client.post("/v1/perturb", json=body, headers={"host": "localhost:1234"})
    assert foreign.status_code == rebound.status_code == 400
    assert foreign.json()["error"] == "bad_host"
    assert local.status_code == 200


def test_a_server_with_a_token_takes_any_host_name(secured_server):
    from server_harness import TOKEN
    with secured_server.client(headers={"authorization": f"Bearer {TOKEN}"}) as client:
        response = client.get("/v1/templates", headers={"host": "contrastgen.internal.example"})
    assert response.status_code == 200


@pytest.mark.parametrize("host,ok", [("localhost", True), ("127.0.0.1:80", True), ("[::1]:8000", True),
                                     ("127.9.9.9", True), ("app.localhost", True), ("localhost.evil.com", False),
                                     ("10.0.0.1", False), ("", False), ("[::2]", False)])
def test_loopback_host_names(host, ok):
    assert loopback_host(host) is ok


def test_a_stalled_body_is_answered_408_and_the_server_goes_on(impatient_server, body):
    url = urlparse(impatient_server.url)
    head = (f"POST /v1/perturb HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
            "Content-Length: 1000\r\n\r\n").encode()
    start = time.monotonic()
    answer = _raw(impatient_server, head + b'{"question": ', wait=10)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert time.monotonic() - start < 5
    with impatient_server.client() as client:
        assert client.post("/v1/perturb", json=body).status_code == 200


def test_a_client_that_leaves_is_logged_499_without_a_traceback(impatient_server):
    url = urlparse(impatient_server.url)
    before = len(impatient_server.log_lines())
    ids = [f"leaves-{uuid.uuid4().hex}" for _ in range(3)]
    for request_id in ids:  # by id: a line of another test's request may still be landing in the log
        with socket.create_connection((url.hostname, url.port)) as s:
            s.sendall((f"POST /v1/verify HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
                       f"X-Request-ID: {request_id}\r\nContent-Length: 5000\r\n\r\n{{\"records\": [").encode())

    def ours() -> list[dict]:
        return [line for line in impatient_server.log_lines()[before:]
                if line.get("event") == "request" and line.get("request_id") in ids]

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(ours()) < 3:
        time.sleep(0.1)
    assert sorted((r["request_id"], r["status"]) for r in ours()) == sorted((i, 499) for i in ids)
    lines = impatient_server.log_lines()[before:]
    assert not any("exc" in line or line.get("level") == "error" for line in lines), lines


def test_a_question_longer_than_the_cap_is_refused_before_any_work(server, body):
    with server.client() as client:
        response = client.post("/v1/perturb", json={**body, "question": "is the cat " * 200_000})
    assert response.status_code == 413
    assert "characters in the question" in response.json()["detail"]


def test_json_nested_past_the_limit_is_a_422_naming_the_limit(server):
    deep = b'{"question": "a", "scene_graph": {"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    with server.client() as client:
        response = client.post("/v1/perturb", content=deep, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert "nested deeper than 64 levels" in response.json()["detail"][0]["msg"]


def test_a_relation_to_an_object_that_is_not_an_id_is_a_422_on_every_endpoint(server, body, sample):
    graph = body["scene_graph"]
    broken = {**graph, "objects": {k: dict(v) for k, v in graph["objects"].items()}}
    first = next(iter(broken["objects"].values()))
    first["relations"] = [{"name": "near", "object": {}}]
    questions, _ = sample
    qid = body["question_id"]
    with server.client() as client:
        answers = [client.post("/v1/perturb", json={**body, "scene_graph": broken}),
                   client.post("/v1/perturb/batch", json={"questions": {qid: questions[qid]},
                                                           "scene_graphs": {body["image_id"]: broken}}),
                   client.post("/v1/verify", json={"records": [], "scene_graphs": {body["image_id"]: broken}})]
    for response in answers:
        assert response.status_code == 422, response.text
        assert response.json()["detail"][0]["loc"][-1] == "object"


def test_every_v1_operation_documents_401(server):
    schema = httpx.get(f"{server.url}/openapi.json").json()
    for path, operations in schema["paths"].items():
        if path.startswith("/v1/"):
            for method, operation in operations.items():
                assert "401" in operation["responses"], (method, path)
                if method == "post":
                    assert {"408", "415", "400"} <= set(operation["responses"]), (method, path)


def _with_duplicate(payload: dict, placeholder: str, key: str) -> bytes:
    """`payload` as JSON text in which the key `placeholder` is written as `key`, a key it already has."""
    text = orjson.dumps(payload)
    assert text.count(orjson.dumps(placeholder)) == 1
    return text.replace(orjson.dumps(placeholder), orjson.dumps(key))


def test_a_key_given_twice_is_a_422_naming_it_on_every_endpoint(server, body, sample):
    """A parser keeps the last copy, so a request giving an object id (or any key) twice says two
    things; it is refused as the file readers refuse it."""
    questions, graphs = sample
    graph = body["scene_graph"]
    first_id, first = next(iter(graph["objects"].items()))
    changed = {**first, "attributes": ["green"]}
    qid = body["question_id"]
    cases = {
        "/v1/perturb": (_with_duplicate({**body, "scene_graph": {**graph, "objects": {**graph["objects"], "DUP": changed}}},
                                        "DUP", first_id), ["body", "scene_graph", "objects", first_id]),
        "/v1/perturb/batch": (_with_duplicate({"questions": {qid: questions[qid], "DUP": questions[qid]},
                                               "scene_graphs": {body["image_id"]: graph}}, "DUP", qid),
                              ["body", "questions", qid]),
        "/v1/verify": (_with_duplicate({"records": [{"question_id": "a"}, {"question_id": "b", "DUP": "c"}],
                                        "scene_graphs": {}}, "DUP", "question_id"),
                       ["body", "records", 1, "question_id"]),
        "/v1/evaluate": (_with_duplicate({"records": [], "predictions": {"m": {}}, "seed": 0, "DUP": 1}, "DUP", "seed"),
                         ["body", "seed"]),
    }
    with server.client() as client:
        for path, (content, loc) in cases.items():
            response = client.post(path, content=content, headers={"content-type": "application/json"})
            assert response.status_code == 422, (path, response.text)
            problem = response.json()["detail"][0]
            assert problem["type"] == "duplicate_key", (path, problem)
            assert problem["loc"] == loc, (path, problem)
            assert f"key {loc[-1]!r} is given twice" in problem["msg"], (path, problem)
        # the same body with the copy under a new id is served
        fresh = _with_duplicate({**body, "scene_graph": {**graph, "objects": {**graph["objects"], "DUP": changed}}},
                                "DUP", "fresh-id")
        assert client.post("/v1/perturb", content=fresh, headers={"content-type": "application/json"}).status_code == 200
