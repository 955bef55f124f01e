"""`--workers N`: several uvicorn processes, each loading the engine from the environment."""

from __future__ import annotations

import time

from server_harness import examples, start_server

from contrastgen.engine import Engine


def test_two_worker_processes_serve_and_each_loads_the_engine_once(tmp_path):
    """Also the server without a corpus: each request's own graph gives the statistics."""
    server = start_server(tmp_path, "--workers", "2", "--max-objects", "77")
    try:
        req = examples()["PerturbRequest"]["perturbed"]["value"]
        with server.client() as c:
            results = [c.post("/v1/perturb", json=req) for _ in range(6)]
            # the settings reached the workers through the environment
            big = {**req, "scene_graph": {**req["scene_graph"], "objects": {
                str(i): {"name": "pebble", "x": 1, "y": 1, "w": 1, "h": 1} for i in range(78)}}}
            limited = c.post("/v1/perturb", json=big)
        assert {r.status_code for r in results} == {200}
        assert len({r.content for r in results}) == 1  # cached or not, either worker: same bytes
        # without a server corpus, the statistics are those of the request's own graph
        engine = Engine.load()
        question = {"question": req["question"], "answer": req["answer"],
                    "imageId": req["image_id"], "semantic": req["semantic"]}
        graph = req["scene_graph"]
        expected = engine.perturb(req["question_id"], question, graph, max_k=req["max_k"],
                                  seed=req["seed"],
                                  corpus=engine.build_corpus({req["image_id"]: graph}))
        assert expected.perturbations and results[0].json()["perturbations"] == expected.record()["perturbations"]
        assert limited.status_code == 413 and "77" in limited.json()["detail"]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            loads = [x for x in server.log_lines() if x.get("event") == "startup"]
            if len(loads) == 2:
                break
            time.sleep(0.1)
        assert len(loads) == 2
    finally:
        server.stop()
