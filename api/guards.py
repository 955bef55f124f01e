"""What a request must be before the service reads it: from a name this server answers to, JSON,
and a body that arrives in time.

Why each:
- A tokenless server on loopback is reachable by any web page the operator opens: a cross-site
  form post (which can only send `text/plain`, `multipart/form-data` or
  `application/x-www-form-urlencoded` without a preflight) or a DNS-rebinding page (which sends
  its own host name in `Host`). So a body must be `application/json` (415 otherwise), and, when
  no token is set and the server listens on loopback, `Host` must be a loopback name (400).
- `--timeout` bounds the work, not the upload: a client that sends its headers and then stalls,
  or trickles its body a byte at a time, would hold a connection and a slot forever. The whole
  body must arrive within `body_timeout_s` of the request's start (408 otherwise); a deadline
  for each piece alone would let a byte every few seconds go on for ever. (Headers that never
  end, and bodies the application never reads, are held to their deadlines by
  `connection.DeadlineProtocol`.)
- A client that goes away mid-upload is the client's business, not a server error: 499 (as
  nginx logs it), logged without a traceback.
"""

from __future__ import annotations

import functools
import ipaddress
import time

import anyio
from contrastgen.api.connection import CLIENT_WATCH
from contrastgen.api.errors import error_response
from contrastgen.api.settings import Settings, is_loopback
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

JSON = "application/json"
CLIENT_CLOSED = 499  # nginx's status for a request its client abandoned


class BodyTimeout(Exception):
    """The client stopped sending its body."""

    def __init__(self, seconds: float):
        super().__init__(f"the request body did not arrive within {seconds:g} s")


@functools.lru_cache(maxsize=256)
def loopback_host(header: str) -> bool:
    """Whether a `Host` header names this machine by a loopback name (port ignored).

    Cached: a client sends the same few values with every request, and reading an address
    costs about as much as the rest of the guards."""
    host = header.strip().lower()
    if host.startswith("["):  # [::1]:8000
        host = host[1:host.find("]")] if "]" in host else host
    elif host.count(":") == 1:
        host = host.rsplit(":", 1)[0]
    if host in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host.endswith(".localhost")


def _media_type(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            if value == b"application/json":  # what nearly every client sends, read at once
                return JSON
            return value.decode("latin-1").split(";", 1)[0].strip().lower()
    return None


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == wanted:
            return value.decode("latin-1")
    return None


_ONLY_LOOPBACK = "this server answers only to loopback names (localhost, 127.0.0.1, [::1])"


def bad_host(scope: Scope, detail: str) -> Response | None:
    """The 400 for a request whose `Host` is not a loopback name, else None."""
    if loopback_host(_header(scope, b"host") or ""):
        return None
    return error_response(400, "bad_host", detail)


class LoopbackHostsOnly:
    """ASGI middleware: only requests whose `Host` is a loopback name (the DNS-rebinding check
    alone, for a tokenless server on loopback that takes no bodies: `contrastgen view`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = bad_host(scope, _ONLY_LOOPBACK) if scope["type"] == "http" else None
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


class RequestGuards:
    """ASGI middleware: the Host and Content-Type checks, and the body's time limit."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.check_host = settings.token is None and is_loopback(settings.host)
        self.body_timeout = settings.limits.body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.check_host and (refusal := bad_host(scope, f"{_ONLY_LOOPBACK} unless it has a token")) is not None:
            await refusal(scope, receive, send)
            return
        if (scope.get("method") == "POST" and scope.get("path", "").startswith("/v1/")
                and _media_type(scope) != JSON):
            response = error_response(415, "unsupported_media_type",
                                      f"the body must be sent as {JSON} (Content-Type: {JSON})")
            await response(scope, receive, send)
            return
        seconds = self.body_timeout
        # the deadline counts from now; anyio's clock is read only for a body that needs a timer
        # (reading it costs more than the rest of the guards)
        began = time.monotonic()
        body_done = False
        watch = scope.get("extensions", {}).get(CLIENT_WATCH)

        async def timed_receive() -> Message:
            """The body's pieces, all by one deadline; after the last, what comes (a disconnect)
            untimed. A body the connection holds whole already comes at once: no timer for it
            (a cancel scope costs more than the rest of the guards)."""
            nonlocal body_done
            if body_done or (watch is not None and watch.body_whole):
                return await receive()
            deadline = anyio.current_time() + seconds - (time.monotonic() - began)
            with anyio.CancelScope(deadline=deadline) as window:
                message = await receive()
            if window.cancelled_caught:
                raise BodyTimeout(seconds)
            body_done = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        await self.app(scope, timed_receive, send)


def install_guards(app: FastAPI) -> None:
    """The handlers that turn the guards' exceptions into responses."""

    @app.exception_handler(BodyTimeout)
    async def _timeout(_: Request, exc: BodyTimeout) -> JSONResponse:
        return error_response(408, "body_timeout", str(exc), headers={"Connection": "close"})

    @app.exception_handler(ClientDisconnect)
    async def _gone(_: Request, exc: ClientDisconnect) -> Response:
        return Response(status_code=CLIENT_CLOSED)
