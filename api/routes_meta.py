"""Liveness, readiness and version: the endpoints orchestrators and humans probe.

Why readiness differs from liveness: `/healthz` only says the process answers (restart it if
not); `/readyz` says it should get traffic now, and turns 503 while the worker pool is
saturated, so a load balancer steers new requests to a sibling instead of queueing them here.
"""

from __future__ import annotations

import platform

import fastapi
from contrastgen.api.models import Health, Readiness, Version
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from contrastgen import __version__

API_VERSION = "v1"
EVIDENCE_SCHEMA = 1

router = APIRouter(tags=["meta"])


@router.get("/healthz", response_model=Health, summary="Liveness")
async def healthz() -> JSONResponse:
    return JSONResponse({"status": "ok"})


@router.get("/readyz", response_model=Readiness, summary="Readiness",
            responses={503: {"model": Readiness, "description": "busy: the worker pool is saturated"}})
async def readyz(request: Request) -> JSONResponse:
    state = request.app.state
    busy = state.pool.saturated
    body = {"status": "busy" if busy else "ready", "templates": len(state.engine.templates),
            "corpus_images": state.engine.corpus_images}
    return JSONResponse(body, status_code=503 if busy else 200)


@router.get("/version", response_model=Version, summary="Versions of the service and its schema")
async def version() -> JSONResponse:
    return JSONResponse({"contrastgen": __version__, "api": API_VERSION,
                         "evidence_schema": EVIDENCE_SCHEMA,
                         "python": platform.python_version(), "fastapi": fastapi.__version__})
