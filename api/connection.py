"""Deadlines on a connection's bytes: a request's headers, and then its whole body, must arrive in time.

Why a subclass of uvicorn's httptools protocol: uvicorn arms no timer while a request is being
received (its keep-alive timer only runs between requests, and any byte cancels it), so a client
that sends its headers a line a minute, or trickles a body to a route that never reads it, holds
a connection and a file descriptor for as long as it likes; 800 such connections were all still
open after 47 s. The application can only time what it reads (`guards.RequestGuards` answers a
late body it is reading with a JSON 408); headers that never end, and a body the application has
already answered without reading, are seen only here.

The deadlines:
- headers: `header_timeout` from the connection's opening, or from the first byte of each later
  request on it. Missed: the connection is closed, after a 408 (`header_timeout`) when part of a
  request had come (a connection that sent nothing is closed as an idle keep-alive one is).
- body: `body_timeout` after the headers for the whole body (not for each piece of it). The
  application's own 408 comes at that moment for a body it is reading; this protocol closes the
  connection `GRACE_S` later whatever the application did, answering 408 itself only when no
  response has begun.

It also tells the application at once when a client goes before its answer: each request's
scope carries a `ClientWatch` under `extensions[CLIENT_WATCH]`, marked gone and its hooks called
when the connection is lost (see `disconnect`; cheaper than a task per request that waits on
`receive()` for the same news).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from contrastgen.api.access_log import ACCESS_LOGGER
from contrastgen.api.settings import Limits
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

# The scope extension that carries a request's `ClientWatch`.
CLIENT_WATCH = "contrastgen.client_watch"


@dataclass
class ClientWatch:
    """Whether a request's client has gone before its answer, and whom to call when it goes
    (`gone` stays set for work that begins to listen only after the connection was lost);
    and whether its whole body has come (`body_whole`: `receive()` then returns the rest at
    once, so the application need not time it)."""

    gone: bool = False
    hooks: list[Callable[[], None]] = field(default_factory=list)
    body_whole: bool = False

    def lost(self) -> None:
        self.gone = True
        for hook in list(self.hooks):
            hook()


class HeldWrites:
    """A connection's transport whose writes made within one turn of the event loop go out as one.

    Why: uvicorn writes a response's status line and headers, then its body, each straight to
    the socket: two system calls and two TCP segments for every response, which the kernel
    delivers (and the client reads) one by one. Held until the end of the turn, the two are one
    write. Nothing waits longer than the turn in which it was written, and closing the
    connection writes what is held first; everything but `write` and `close` is the transport's.
    """

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._held:
            self._loop.call_soon(self.flush)
        self._held.append(data)

    def flush(self) -> None:
        held = self._held
        if held:
            self._held = []
            if not self._transport.is_closing():
                self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


# How much later than the application's body deadline the connection is closed regardless, so
# that the application's own 408 (which names the request in the log) goes first.
GRACE_S = 1.0


class DeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline on the headers and one on the whole body."""

    def __init__(self, *args: Any, header_timeout: float, body_timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self._timer: asyncio.TimerHandle | None = None
        self._since = 0.0  # when the running deadline's wait began (for the log line)
        self._begun = False  # a byte of a request has come whose message is not yet whole
        self._refusals = logging.getLogger(ACCESS_LOGGER)

    # -- the timer ----------------------------------------------------------------------------

    def _arm(self, seconds: float, late: Callable[[], None]) -> None:
        self._disarm()
        self._since = self.loop.time()
        self._timer = self.loop.call_later(seconds, late)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _between_requests(self) -> bool:
        return self.cycle is None or (self.cycle.response_complete and not self.pipeline)

    # -- uvicorn's callbacks ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = HeldWrites(transport, self.loop)  # type: ignore[assignment]
        self._arm(self.header_timeout, self._headers_late)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        waiting = [cycle for cycle in (self.cycle, *(c for c, _ in self.pipeline))
                   if cycle is not None and not cycle.response_complete]
        super().connection_lost(exc)
        for cycle in waiting:
            watch = cycle.scope.get("extensions", {}).get(CLIENT_WATCH)
            if watch is not None:
                watch.lost()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing() or self.transport.get_protocol() is not self:  # refused, or upgraded
            self._disarm()
        elif self._timer is None and self._between_requests():
            # bytes that begin no request (stray line ends) cancelled the keep-alive timer
            self._arm(self.header_timeout, self._headers_late)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.scope.setdefault("extensions", {})[CLIENT_WATCH] = ClientWatch()  # type: ignore[typeddict-item]
        self._begun = True
        if self._timer is None:  # the first request keeps the deadline counted from the connection
            self._arm(self.header_timeout, self._headers_late)

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()
        self._arm(self.body_timeout + GRACE_S, self._body_late)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.scope["extensions"][CLIENT_WATCH].body_whole = True  # type: ignore[typeddict-item]
        self._begun = False
        self._disarm()
        # uvicorn pauses reading while a body is buffered and resumes it only when the
        # application calls receive(); the body whole, reading on is how a client's leaving
        # (its EOF) is seen while its request is being worked on
        self.flow.resume_reading()

    # -- deadlines missed ---------------------------------------------------------------------

    def _headers_late(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        if self._begun and self._between_requests():  # no earlier response is being written
            self._refuse("header_timeout", f"the request headers did not arrive within {self.header_timeout:g} s")
        self.transport.close()

    def _body_late(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_started and not self.pipeline:
            self._refuse("body_timeout", f"the request body did not arrive within {self.body_timeout:g} s")
        self.transport.close()

    def _refuse(self, code: str, detail: str) -> None:
        """Write a 408 with the service's error body, and log it as the application logs a request."""
        body = orjson.dumps({"error": code, "detail": detail})
        head = [STATUS_LINE[408]]
        for name, value in self.server_state.default_headers:
            head += [name, b": ", value, b"\r\n"]
        head += [b"content-type: application/json\r\ncontent-length: ", str(len(body)).encode(),
                 b"\r\nconnection: close\r\n\r\n"]
        self.transport.write(b"".join(head) + body)
        scope = self.scope or {}
        client = self.client
        self._refusals.info("", extra={
            "event": "request", "method": scope.get("method"), "path": scope.get("path"), "status": 408,
            "ms": round((self.loop.time() - self._since) * 1000, 3), "bytes": len(body),
            "client": f"{client[0]}:{client[1]}" if client else None, "request_id": None, "error": code,
        })


def deadline_protocol(limits: Limits) -> Callable[..., DeadlineProtocol]:
    """What uvicorn's `http=` takes: the protocol with `limits`' deadlines (a partial of a
    module-level class, so `--workers N` can hand it to its worker processes)."""
    return functools.partial(DeadlineProtocol, header_timeout=limits.header_timeout_s,
                             body_timeout=limits.body_timeout_s)
