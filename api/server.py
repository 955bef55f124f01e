"""Starting uvicorn with the service's settings.

One worker runs in this process with the engine loaded before uvicorn starts, so a bad
`--scene-graphs` file fails the command at once with the CLI's usual message (exit 2). Several
workers are separate processes that uvicorn starts from an import string; they receive the
settings through the environment and load the engine in their own lifespans. Every connection
runs under `connection.DeadlineProtocol` (headers and body in time), handed to the workers as a
picklable partial.
"""

from __future__ import annotations

import logging.config
import os

import uvicorn
from contrastgen.api.access_log import log_config
from contrastgen.api.app import asgi_app
from contrastgen.api.connection import deadline_protocol
from contrastgen.api.settings import SETTINGS_ENV, Settings, check_exposure
from contrastgen.api.state import load_state

FACTORY = "contrastgen.api.app:app_from_env"


def serve(settings: Settings, *, log_level: str = "info") -> None:
    """Run the service until interrupted. Raises `UnsafeBindError` for an unprotected public bind."""
    check_exposure(settings)
    common = {
        "host": settings.host, "port": settings.port, "log_config": log_config(log_level),
        "log_level": log_level, "access_log": False, "server_header": False,
        "timeout_graceful_shutdown": 10, "http": deadline_protocol(settings.limits),
    }
    if settings.workers > 1:
        os.environ[SETTINGS_ENV] = settings.to_env()
        uvicorn.run(FACTORY, factory=True, workers=settings.workers, **common)
        return
    logging.config.dictConfig(common["log_config"])  # so the engine's start-up line is logged
    state = load_state(settings)
    uvicorn.run(asgi_app(settings, state=state), **common)
