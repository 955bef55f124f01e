"""Structured (JSON-lines) logs, and one access-log line per HTTP request.

Why JSON lines: a service that runs inside someone else's pipeline is read by log collectors,
not by eyes; one object per line with fixed keys (`method`, `path`, `status`, `ms`,
`request_id`) can be filtered and aggregated without regexes. Why an outermost ASGI wrapper
rather than a FastAPI middleware: it then also sees the responses FastAPI produces outside the
user middleware stack (the 413 of the body limit, the 500 of the error handler).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

ACCESS_LOGGER = "contrastgen.api.access"
_REQUEST_ID_HEADER = b"x-request-id"
_MAX_REQUEST_ID = 128

# Attributes every LogRecord has; anything else was passed through `extra=` and is logged.
_STANDARD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message", "asctime", "color_message",
}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any `extra=` fields."""

    # The time to the second, written once a second: `strftime` cost more than the rest of a line.
    _second: tuple[int, str] = (-1, "")

    def _stamp(self, record: logging.LogRecord) -> str:
        second = int(record.created)
        if self._second[0] != second:
            self._second = (second, self.formatTime(record, "%Y-%m-%dT%H:%M:%S"))
        return self._second[1]

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": self._stamp(record) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        message = record.getMessage()
        if message:
            out["msg"] = message
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS:
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()


JsonFormatter.converter = time.gmtime  # type: ignore[assignment]


def log_config(level: str = "info") -> dict[str, Any]:
    """A `logging.config.dictConfig` mapping for uvicorn: everything as JSON lines on stderr.

    uvicorn's own access log is switched off by the caller; ours replaces it.
    """
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    lvl = level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {"stderr": handler},
        "loggers": {
            "uvicorn": {"handlers": ["stderr"], "level": lvl, "propagate": False},
            "uvicorn.error": {"handlers": ["stderr"], "level": lvl, "propagate": False},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
            "contrastgen": {"handlers": ["stderr"], "level": lvl, "propagate": False},
        },
    }


class _RandomIds(threading.local):
    """`uuid.uuid4().hex`, from random bytes read 256 ids at a time (one reserve per thread).

    Why: one read of the system's randomness per request, and a `UUID` object to format it, cost
    about a tenth of what the rest of the access log does. The bytes are the same kind
    (`os.urandom`) with the same version and variant bits; they are read again in a new process
    (a forked worker must not repeat its parent's ids)."""

    BATCH = 256

    def __init__(self) -> None:
        self._pid = -1
        self._pool = b""
        self._at = 0

    def next(self) -> str:
        if self._at >= len(self._pool) or self._pid != os.getpid():
            self._pid, self._pool, self._at = os.getpid(), os.urandom(16 * self.BATCH), 0
        raw = bytearray(self._pool[self._at:self._at + 16])
        self._at += 16
        raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
        raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
        return raw.hex()


_random_ids = _RandomIds()


def _request_id(scope: Scope) -> str:
    """The caller's X-Request-ID when it is short and printable, else a fresh one."""
    for name, value in scope.get("headers", ()):
        if name == _REQUEST_ID_HEADER:
            text = value.decode("latin-1")
            if 0 < len(text) <= _MAX_REQUEST_ID and text.isprintable():
                return text
    return _random_ids.next()


class AccessLogMiddleware:
    """Log every HTTP request once it is answered, and echo its request id in a header."""

    def __init__(self, app: ASGIApp, logger_name: str = ACCESS_LOGGER) -> None:
        self.app = app
        self.logger = logging.getLogger(logger_name)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        request_id = _request_id(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        status = 500
        sent = 0

        async def send_logged(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.append((_REQUEST_ID_HEADER, request_id.encode("latin-1")))
                message = {**message, "headers": headers}
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, send_logged)
        finally:
            client = scope.get("client")
            self.logger.info(
                "",
                extra={
                    "event": "request",
                    "method": scope.get("method"),
                    "path": scope.get("path"),
                    "status": status,
                    "ms": round((time.perf_counter() - start) * 1000, 3),
                    "bytes": sent,
                    "client": f"{client[0]}:{client[1]}" if client else None,
                    "request_id": request_id,
                },
            )
