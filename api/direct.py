"""`POST /v1/perturb` answered without FastAPI's per-request machinery: the same endpoint function,
the same exception handlers, the same bytes.

Why: a perturbation is the one request a client sends thousands of a second, and its engine work
is a fraction of a millisecond. FastAPI's stack around it (its error, telemetry and body-limit
middleware, the router trying each route's pattern, the dependency solver, the route's exception
wrapper) cost about 0.11 ms of CPU a request more than this layer does (0.16 against 0.05 ms for
the guards, the routing and the response, measured in process), more than parsing and validating
the body now cost. This layer, in front of the app, calls the route's own function (`routes_v1.perturb`) with a
starlette `Request` and turns its exceptions into responses with the app's own handlers, looked
up as starlette looks them up; an exception no handler takes is answered by starlette's
`ServerErrorMiddleware`, as in the app.

What it takes: only what FastAPI would answer the same way with no work of its own, a POST to
exactly `/v1/perturb` whose one `Content-Length` is within the body limit, on an app without
CORS (whose headers are the CORS middleware's to add). Everything else, a chunked body or one over
the limit (FastAPI's 413), another path, the schema, goes to FastAPI. The route stays in the app
for the schema and for those requests. FastAPI's own OpenTelemetry spans and metrics (on only when
a tracer or meter provider is set up in the server process; contrastgen sets none) are not made
for the requests taken here. `tests/api/test_api_direct.py` holds both answers equal, byte for byte, for
valid and invalid requests, with and without a token.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from contrastgen.api import routes_v1
from contrastgen.api.auth import request_auth
from contrastgen.api.settings import Settings
from fastapi import FastAPI
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

PATH = "/v1/perturb"

Handler = Callable[[Request, Exception], Response | Awaitable[Response]]


def content_length(scope: Scope) -> int | None:
    """The request's `Content-Length` when it gives exactly one, in plain digits; else None."""
    found = None
    for name, value in scope["headers"]:
        if name == b"content-length":
            if found is not None or not value.isdigit():
                return None
            found = int(value)
    return found


def _lookup(handlers: Mapping[Any, Handler], exc: Exception) -> Handler | None:
    """The handler for `exc`: the first of its classes, most derived first (starlette's rule)."""
    for cls in type(exc).__mro__:
        if cls in handlers:
            return handlers[cls]
    return None


class DirectPerturb:
    """ASGI middleware: `POST /v1/perturb` straight to its endpoint; anything else to `app`."""

    def __init__(self, app: FastAPI, settings: Settings) -> None:
        self.app = app
        self.enabled = not settings.cors_origins
        self.max_body = settings.limits.max_body_bytes
        self.check_token = request_auth(settings.token) if settings.token else None
        # as FastAPI splits them: 500 and Exception to the outermost error middleware, the rest
        # to its exception middleware (which the route's own wrapper consults too)
        self.handlers = {k: v for k, v in app.exception_handlers.items() if k not in (500, Exception)}
        error_handler = app.exception_handlers.get(500) or app.exception_handlers.get(Exception)
        self.answer = ServerErrorMiddleware(self._answer, handler=error_handler, debug=app.debug)

    def _taken(self, scope: Scope) -> bool:
        if not (self.enabled and scope["type"] == "http" and scope["path"] == PATH
                and scope["method"] == "POST" and not scope.get("root_path")):
            return False
        length = content_length(scope)
        return length is not None and length <= self.max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._taken(scope):
            await self.answer(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["app"] = self.app  # what `request.app` reads, as FastAPI sets it
        request = Request(scope, receive)
        try:
            if self.check_token is not None:
                await self.check_token(request)
            response = await routes_v1.perturb(request)
        except Exception as exc:
            handler = _lookup(self.handlers, exc)
            if handler is None:
                raise
            answer = handler(request, exc)
            response = await answer if inspect.isawaitable(answer) else answer
        await response(scope, receive, send)

