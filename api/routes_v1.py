"""The `/v1` endpoints: perturb, batch perturb, verify, evaluate, templates.

Each handler only reads the body, hands it to a `service` function in the worker pool (for as
long as its client is connected: `disconnect`; a small `/v1/perturb` is worked on the event loop
instead, see `_inline`) and returns the bytes it produced; the response models below are for the OpenAPI schema (the
service serialises with sorted keys, which is what makes results byte-identical to the CLI's).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

from contrastgen.api import service
from contrastgen.api.connection import CLIENT_WATCH
from contrastgen.api.disconnect import while_connected
from contrastgen.api.errors import AUTH_RESPONSES, ERROR_RESPONSES
from contrastgen.api.models import (
    BatchRequest,
    BatchResponse,
    EvaluateReport,
    EvaluateRequest,
    PerturbRequest,
    PerturbResult,
    SceneGraph,
    TemplatesResponse,
    VerifyRequest,
    VerifyResponse,
)
from contrastgen.api.offload import Deadline, DeadlineExceeded, Overloaded, WorkerPool
from contrastgen.api.openapi import body_doc
from contrastgen.api.settings import Settings
from contrastgen.api.state import EngineState
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from starlette.requests import ClientDisconnect

from contrastgen.jsonio import dumps

NDJSON = "application/x-ndjson"
# A `/v1/perturb` body up to this size is worked on the event loop itself, not in the pool: see
# `_inline`. The sample's bodies are 1.2-5.3 KB (median 1.8); one of 8 KiB holds some 45 objects
# at most, whose question took the engine about 9 ms at worst in a search of padded sample bodies.
INLINE_BODY = 8 << 10
# Questions per slice of a streamed batch: large enough to amortise the thread hop, small
# enough that the first results arrive at once and memory stays flat.
STREAM_SLICE = 64

# SceneGraph is listed on its own because the bodies embed it unvalidated (the library validates
# scene graphs), which inlines its schema; listed, it is also a component clients can refer to.
REQUEST_MODELS = [PerturbRequest, BatchRequest, VerifyRequest, EvaluateRequest, SceneGraph]

router = APIRouter()


def _ctx(request: Request) -> tuple[EngineState, Settings, WorkerPool]:
    """The app's shared objects; refuses at once (503), before reading the body, when busy."""
    app = request.app
    pool: WorkerPool = app.state.pool
    if pool.saturated:
        raise Overloaded(pool.pending)
    return app.state.engine, app.state.settings, pool


T = TypeVar("T")


async def _run(request: Request, pool: WorkerPool, fn: Callable[..., T], *args: object,
               deadline: Deadline | None = None) -> T:
    """`fn(*args)` in the worker pool, cancelled if the client leaves first (logged 499)."""
    deadline = deadline or pool.deadline()
    return await while_connected(request.scope, request.receive, deadline,
                                 lambda: pool.run(fn, *args, deadline=deadline))


def _inline(request: Request, pool: WorkerPool, fn: Callable[..., T], *args: object) -> T:
    """`fn(*args)` on the event loop, for work far shorter than the hop to a thread.

    Why: handing a job to the pool (its queue, waking a thread, the GIL passed to it and back,
    the result posted to the loop) cost about 0.3 ms of CPU a request, more than the engine
    spends on a typical question (0.15 ms); and with the GIL a job in a thread holds up the loop
    about as much as one run on it. What the pool gives a request still holds: a saturated pool
    was refused before the body was read (`_ctx`), a client gone before the work begins is not
    worked for, and a job that ran past the time limit is answered 504. Such a short job cannot
    be stopped halfway; its client leaving during it is seen once it is done, as when it leaves
    just after.
    """
    watch = request.scope.get("extensions", {}).get(CLIENT_WATCH)
    if watch is not None and watch.gone:
        raise ClientDisconnect()
    start = time.monotonic()
    result = fn(*args)
    if time.monotonic() - start > pool.timeout_s:
        raise DeadlineExceeded(pool.timeout_s)
    return result


def _json(payload: bytes) -> Response:
    return Response(payload, media_type="application/json")


@router.post(
    "/perturb", response_model=PerturbResult, responses={**ERROR_RESPONSES},
    summary="Perturb one question against its scene graph",
    openapi_extra=body_doc(PerturbRequest, description="a question, its answer and its image's graph"),
    tags=["perturb"],
)
async def perturb(request: Request) -> Response:
    """Perturb the question by one atom per candidate and prove each new answer from the graph.

    A question that matches no template (or cannot be perturbed) is a 200 whose `reason` says
    why. Distractor statistics come from the server's corpus (`contrastgen serve
    --scene-graphs`) when it has one, else from the given graph.
    """
    state, settings, pool = _ctx(request)
    body = await request.body()
    if len(body) <= INLINE_BODY:
        return _json(_inline(request, pool, service.perturb, state, settings.limits, body))
    return _json(await _run(request, pool, service.perturb, state, settings.limits, body))


@router.post(
    "/perturb/batch", response_model=BatchResponse,
    responses={**ERROR_RESPONSES, 200: {"content": {NDJSON: {
        "schema": {"type": "string"},
        "example": "one BatchItem object per line; a last line {\"error\": ...} if cut short"}}}},
    summary="Perturb many questions against many scene graphs",
    openapi_extra=body_doc(BatchRequest, description="GQA questions and scene graphs, as files"),
    tags=["perturb"],
)
async def perturb_batch(request: Request) -> Response:
    """Results in question order, one per question, each with the `contrast_sets.jsonl` record
    `contrastgen generate` would write for it (same input, same seed, same bytes).

    With `Accept: application/x-ndjson` the results stream one per line as they are computed,
    so a large batch never sits in memory. A stream that runs out of time ends with a line
    `{"error": "timeout", "detail": ...}` (the status line was sent before the failure).
    """
    state, settings, pool = _ctx(request)
    body = await request.body()
    deadline = pool.deadline()
    if NDJSON not in request.headers.get("accept", "").lower():
        return _json(await _run(request, pool, service.batch_response, state, settings.limits, body,
                                deadline, deadline=deadline))
    job = await _run(request, pool, service.prepare_batch, state, settings.limits, body, deadline=deadline)

    async def lines() -> AsyncIterator[bytes]:
        # starlette's StreamingResponse stops this generator when the client leaves; the finally
        # then stops the slice under way in its thread too
        try:
            for start, stop in service.iter_slices(len(job), STREAM_SLICE):
                try:
                    yield await pool.run(service.batch_ndjson, state, job, start, stop, deadline,
                                         deadline=deadline, admit=False)
                except (DeadlineExceeded, Overloaded) as exc:
                    code = "timeout" if isinstance(exc, DeadlineExceeded) else "overloaded"
                    yield dumps({"error": code, "detail": str(exc)})
                    return
        finally:
            deadline.abandon()

    return StreamingResponse(lines(), media_type=NDJSON)


@router.post(
    "/verify", response_model=VerifyResponse, responses={**ERROR_RESPONSES},
    summary="Check perturbations against their evidence and scene graphs",
    openapi_extra=body_doc(VerifyRequest, description="contrast_sets.jsonl records and their graphs"),
    tags=["verify"],
)
async def verify(request: Request) -> Response:
    """Re-check every fact and re-execute every query, as `contrastgen verify` does; `ok` is
    true when all hold, else `failures` says which perturbation failed which check."""
    state, settings, pool = _ctx(request)
    body = await request.body()
    deadline = pool.deadline()
    return _json(await _run(request, pool, service.verify, state, settings.limits, body, deadline,
                            deadline=deadline))


@router.post(
    "/evaluate", response_model=EvaluateReport, responses={**ERROR_RESPONSES},
    summary="Score predictions on a contrast set",
    openapi_extra=body_doc(EvaluateRequest, description="contrast_sets.jsonl records and predictions"),
    tags=["evaluate"],
)
async def evaluate(request: Request) -> Response:
    """The report `contrastgen evaluate` writes (accuracy on originals and perturbations,
    consistency, bootstrap confidence intervals), as JSON."""
    state, settings, pool = _ctx(request)
    body = await request.body()
    deadline = pool.deadline()
    return _json(await _run(request, pool, service.evaluate, state, settings.limits, body, deadline,
                            deadline=deadline))


@router.get("/templates", response_model=TemplatesResponse, summary="The question templates",
            responses={**AUTH_RESPONSES}, tags=["meta"])
async def templates(request: Request) -> Response:
    """Every template id with its description and example questions it does and does not match."""
    return _json(request.app.state.templates_json)
