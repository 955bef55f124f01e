"""POST /v1/perturb/batch: byte-for-byte parity with the CLI, streaming, and its errors."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest
from server_harness import CLI_HASH_SEED

from contrastgen.jsonio import dumps

NDJSON = "application/x-ndjson"


def _jsonl_lines(results: list[dict]) -> bytes:
    """What contrast_sets.jsonl holds: results with perturbations, without `reason`."""
    return b"".join(dumps({k: v for k, v in r.items() if k != "reason"})
                    for r in results if r["perturbations"])


@pytest.mark.parametrize("mode", ["templates", "both"])
def test_batch_equals_contrastgen_generate_byte_for_byte(server, sample, tmp_path, mode):
    questions, graphs = sample
    (tmp_path / "q.json").write_bytes(orjson.dumps(questions))
    (tmp_path / "g.json").write_bytes(orjson.dumps(graphs))
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "contrastgen", "generate", "--questions",
                    str(tmp_path / "q.json"), "--scene-graphs", str(tmp_path / "g.json"),
                    "--out", str(out), "--seed", "5", "--max-k", "3", "--no-progress", "--mode", mode],
                   check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": CLI_HASH_SEED})
    with server.client() as c:
        r = c.post("/v1/perturb/batch",
                   json={"questions": questions, "scene_graphs": graphs, "seed": 5, "max_k": 3, "mode": mode})
    assert r.status_code == 200, r.text[:500]
    body = r.json()
    cli = (out / "contrast_sets.jsonl").read_bytes()
    assert cli.count(b"\n") > 50
    assert (b'"template":"program"' in cli) == (mode == "both")
    assert _jsonl_lines(body["results"]) == cli
    assert body["stats"] == orjson.loads((out / "stats.json").read_bytes())


def test_results_follow_question_order_one_per_matched_template(server, sample):
    questions, graphs = sample
    with server.client() as c:
        results = c.post("/v1/perturb/batch",
                         json={"questions": questions, "scene_graphs": graphs}).json()["results"]
    order = list(dict.fromkeys(r["question_id"] for r in results))
    assert order == list(questions)
    assert {r["reason"] for r in results if r["template"] is None} == {"no_match"}


def test_stream_sends_the_same_results_line_by_line(server, sample):
    questions, graphs = sample
    req = {"questions": questions, "scene_graphs": graphs, "seed": 1}
    with server.client() as c:
        whole = c.post("/v1/perturb/batch", json=req).json()["results"]
        with c.stream("POST", "/v1/perturb/batch", json=req, headers={"Accept": NDJSON}) as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith(NDJSON)
            assert r.headers.get("transfer-encoding") == "chunked"
            lines = [orjson.loads(line) for line in r.iter_lines() if line]
    assert len(whole) > 64  # more than one slice of the stream
    assert lines == whole


def test_server_corpus_equals_the_same_graphs_sent_along(server, sample):
    """The test server's corpus is the sample's graphs, so both choices must agree."""
    questions, graphs = sample
    with server.client() as c:
        own = c.post("/v1/perturb/batch", json={"questions": questions, "scene_graphs": graphs})
        srv = c.post("/v1/perturb/batch",
                     json={"questions": questions, "scene_graphs": graphs, "corpus": "server"})
    assert own.status_code == srv.status_code == 200
    assert own.content == srv.content


def test_question_whose_image_has_no_graph_is_422(server, sample):
    questions, graphs = sample
    qid = next(iter(questions))
    bad = {**questions, "extra": {**questions[qid], "imageId": "no-such-image"}}
    with server.client() as c:
        r = c.post("/v1/perturb/batch", json={"questions": bad, "scene_graphs": graphs})
    assert r.status_code == 422
    [d] = r.json()["detail"]
    assert d["loc"] == ["body", "questions", "extra", "imageId"] and d["type"] == "unknown_image"


def test_too_many_questions_is_413(server):
    questions = {str(i): {"question": "Is it?", "imageId": "1"} for i in range(20_001)}
    with server.client() as c:
        r = c.post("/v1/perturb/batch", json={"questions": questions, "scene_graphs": {}})
    assert r.status_code == 413
    assert r.json()["error"] == "limit_exceeded" and "20001" in r.json()["detail"]
