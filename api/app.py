"""The ASGI application: FastAPI wired with settings, auth, limits, CORS and access logs.

`create_app(settings)` builds one app; `app_from_env()` is what uvicorn calls in each worker
process (settings travel through the environment, see `settings`). The engine is loaded in the
lifespan, once per process and before the first request is accepted, never per request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from contrastgen.api import routes_meta, routes_v1, service
from contrastgen.api.access_log import AccessLogMiddleware
from contrastgen.api.auth import bearer_auth
from contrastgen.api.direct import DirectPerturb
from contrastgen.api.errors import install_auth_error_handler, install_error_handlers
from contrastgen.api.guards import RequestGuards, install_guards
from contrastgen.api.offload import WorkerPool
from contrastgen.api.openapi import install_openapi
from contrastgen.api.settings import Settings
from contrastgen.api.state import EngineState, load_state
from fastapi import Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.routing import Mount
from starlette.types import ASGIApp

from contrastgen import __version__
from contrastgen.viewer.app import viewer_routes

DESCRIPTION = """\
Contrast sets for VQA, proven from scene graphs. Each question is perturbed by exactly one atom
(object, attribute or relation) so that its answer changes; the new answer is computed from the
scene graph and every perturbation carries the facts that prove it (`evidence`).

Results equal those of the `contrastgen` CLI byte for byte for the same input and seed.
"""


def create_app(settings: Settings | None = None, *, state: EngineState | None = None) -> FastAPI:
    """The FastAPI app; `state` is the engine already loaded (else the lifespan loads it)."""
    settings = settings or Settings()
    limits = settings.limits

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        loaded = state or await anyio.to_thread.run_sync(load_state, settings)
        app.state.engine = loaded
        app.state.templates_json = service.templates_json(loaded)
        yield

    app = FastAPI(
        title="contrastgen", version=__version__, description=DESCRIPTION, lifespan=lifespan,
        max_body_size=limits.max_body_bytes,
    )
    app.state.settings = settings
    app.state.pool = WorkerPool(limits.worker_threads, limits.max_pending, limits.request_timeout_s)
    install_error_handlers(app)
    install_auth_error_handler(app)
    install_guards(app)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type", "Accept", "X-Request-ID"])
    dependencies = [Depends(bearer_auth(settings.token))] if settings.token else []
    if settings.viewer_site:
        app.router.routes.append(Mount("/viewer", routes=viewer_routes(settings.viewer_site, settings.viewer_images),
                                       name="viewer"))
    app.include_router(routes_meta.router)
    app.include_router(routes_v1.router, prefix="/v1", dependencies=dependencies)
    install_openapi(app, routes_v1.REQUEST_MODELS)
    return app


def asgi_app(settings: Settings | None = None, *, state: EngineState | None = None) -> ASGIApp:
    """The app as served: `create_app` behind the request guards and the direct way to
    `/v1/perturb`, inside the access log."""
    settings = settings or Settings()
    app = create_app(settings, state=state)
    return AccessLogMiddleware(RequestGuards(DirectPerturb(app, settings), settings))


def app_from_env() -> ASGIApp:
    """uvicorn's factory (`--factory contrastgen.api.app:app_from_env`)."""
    return asgi_app(Settings.from_env())
