"""Fixtures: real servers (one per configuration, per test worker) and the data they serve."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from server_harness import CORS_ORIGIN, TOKEN, Server, sample_dir, shared_server

from contrastgen.datasets.gqa import load_questions, load_scene_graphs


@pytest.fixture(scope="session")
def servers_root(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """A directory all test workers of this run share (the per-worker temp dirs' parent)."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


@pytest.fixture(scope="session")
def server(servers_root: Path) -> Server:
    """Default settings (loopback, no auth, default limits) with the sample's graphs as corpus."""
    yield from shared_server(servers_root, "api-default", "--scene-graphs",
                             str(sample_dir() / "scene_graphs.json"))


@pytest.fixture(scope="session")
def secured_server(servers_root: Path) -> Server:
    """Bearer auth and CORS on; small limits, one thread, one waiting request, 0.1 s per request."""
    yield from shared_server(servers_root, "api-secured", "--max-body-mib", "1", "--max-objects",
                             "40", "--threads", "1", "--max-pending", "1", "--timeout", "0.1",
                             "--cors-origin", CORS_ORIGIN, token=TOKEN)


@pytest.fixture(scope="session")
def impatient_server(servers_root: Path) -> Server:
    """Short deadlines: a second for a request's headers, half a second for its whole body; one
    worker thread, so work left running for a client that has gone would hold up the next."""
    yield from shared_server(servers_root, "api-impatient", "--header-timeout", "1", "--body-timeout", "0.5",
                             "--threads", "1")


@pytest.fixture(scope="session")
def sample() -> tuple[dict[str, Any], dict[str, Any]]:
    """The bundled sample, restricted to questions whose image has a scene graph (the API
    rejects the others with 422, where the CLI records reason no_scene_graph)."""
    graphs = load_scene_graphs(sample_dir() / "scene_graphs.json")
    questions = {qid: q for qid, q in load_questions(sample_dir() / "questions.json").items()
                 if q["imageId"] in graphs}
    return questions, graphs
