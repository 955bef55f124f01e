"""Fixtures: real servers (one per configuration, per test worker) and the data they serve."""

from __future__ import annotations

from typing import Any

import pytest
from server_harness import CORS_ORIGIN, TOKEN, Server, sample_dir, start_server

from contrastgen.gqa import load_questions, load_scene_graphs


def _serve(tmp_path_factory: pytest.TempPathFactory, name: str, *args: str,
           token: str | None = None):
    server = start_server(tmp_path_factory.mktemp(name), *args, token=token)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Server:
    """Default settings (loopback, no auth, default limits) with the sample's graphs as corpus."""
    yield from _serve(tmp_path_factory, "default", "--scene-graphs",
                      str(sample_dir() / "scene_graphs.json"))


@pytest.fixture(scope="session")
def secured_server(tmp_path_factory: pytest.TempPathFactory) -> Server:
    """Bearer auth and CORS on; small limits, one thread, one waiting request, 0.1 s per request."""
    yield from _serve(tmp_path_factory, "secured", "--max-body-mib", "1", "--max-objects", "40",
                      "--threads", "1", "--max-pending", "1", "--timeout", "0.1",
                      "--cors-origin", CORS_ORIGIN, token=TOKEN)


@pytest.fixture(scope="session")
def sample() -> tuple[dict[str, Any], dict[str, Any]]:
    """The bundled sample, restricted to questions whose image has a scene graph (the API
    rejects the others with 422, where the CLI records reason no_scene_graph)."""
    graphs = load_scene_graphs(sample_dir() / "scene_graphs.json")
    questions = {qid: q for qid, q in load_questions(sample_dir() / "questions.json").items()
                 if q["imageId"] in graphs}
    return questions, graphs
