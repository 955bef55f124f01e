"""The short ways of a small `POST /v1/perturb`: worked on the event loop (`routes_v1._inline`), its
response written in one piece (`connection.HeldWrites`), its whole body read without a timer
(`guards.RequestGuards` trusting `ClientWatch.body_whole`). Each keeps the answers of the long
way: the same bytes, the same 499 and 504, the same 408 for a body that is late.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import socket
import time
from typing import Any

import anyio
import orjson
import pytest
import uvicorn
from contrastgen.api import routes_v1, service
from contrastgen.api.app import asgi_app
from contrastgen.api.connection import CLIENT_WATCH, ClientWatch, HeldWrites, deadline_protocol
from contrastgen.api.guards import RequestGuards
from contrastgen.api.offload import WorkerPool
from contrastgen.api.settings import Limits, Settings
from contrastgen.api.state import EngineState, load_state
from server_harness import examples, posted_in_process
from starlette.requests import ClientDisconnect, Request
from uvicorn.server import ServerState

HEADERS = {"Content-Type": "application/json", "X-Request-ID": "same-id"}


@pytest.fixture(scope="module")
def state() -> EngineState:
    return load_state(Settings())


def _request() -> dict:
    return copy.deepcopy(examples()["PerturbRequest"]["perturbed"]["value"])


def _large(request: dict) -> bytes:
    """The same question in a body past `INLINE_BODY` (GQA's types are echoed, not read)."""
    body = orjson.dumps({**request, "types": {"note": "x" * routes_v1.INLINE_BODY}})
    assert len(body) > routes_v1.INLINE_BODY
    return body


def test_a_small_body_is_worked_on_the_loop_and_a_large_one_in_the_pool(state, monkeypatch):
    handed: list[Any] = []
    run = WorkerPool.run

    async def counted(self, fn, *args, **kw):
        handed.append(fn)
        return await run(self, fn, *args, **kw)

    monkeypatch.setattr(WorkerPool, "run", counted)
    small = orjson.dumps(_request())
    (status, _, answer), (large_status, _, large_answer) = posted_in_process(
        asgi_app(Settings(), state=state), [small, _large(_request())], HEADERS)
    assert handed == [service.perturb]  # the large body only
    assert status == large_status == 200
    small_result, large_result = orjson.loads(answer), orjson.loads(large_answer)
    assert small_result["perturbations"]
    assert {**large_result, "types": {}} == small_result  # the same work either way


def test_work_on_the_loop_past_the_time_limit_is_the_pool_s_504(state, monkeypatch):
    perturb = service.perturb

    def slow(*args):
        time.sleep(0.2)
        return perturb(*args)

    monkeypatch.setattr(service, "perturb", slow)
    settings = dataclasses.replace(Settings(), limits=Limits(request_timeout_s=0.05))
    small, large = orjson.dumps(_request()), _large(_request())
    on_loop, in_pool = posted_in_process(asgi_app(settings, state=state), [small, large], HEADERS)
    assert on_loop == in_pool
    assert on_loop[0] == 504
    assert orjson.loads(on_loop[2]) == {"error": "timeout", "detail": "request exceeded the time limit of 0.05 s"}


def test_work_on_the_loop_is_not_begun_for_a_client_already_gone(state, monkeypatch):
    calls = []
    monkeypatch.setattr(service, "perturb", lambda *args: calls.append(args))
    pool = WorkerPool(1, 1, 30)
    for gone in (True, False):
        scope = {"type": "http", "extensions": {CLIENT_WATCH: ClientWatch(gone=gone)}}
        if gone:
            with pytest.raises(ClientDisconnect):
                routes_v1._inline(Request(scope), pool, service.perturb, state)
        else:
            routes_v1._inline(Request(scope), pool, service.perturb, state)
    assert len(calls) == 1


# --- writes held for the turn of the loop -----------------------------------------------------


class _Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str) -> str:
        return f"info:{name}"


def test_writes_in_one_turn_go_out_as_one_at_its_end():
    async def main() -> None:
        transport = _Transport()
        held = HeldWrites(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
        held.write(b"HTTP/1.1 200 OK\r\n\r\n")
        held.write(b"body")
        assert transport.writes == []
        await asyncio.sleep(0)
        assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
        held.write(b"next")
        await asyncio.sleep(0)
        assert transport.writes[1:] == [b"next"]
        held.write(b"last words")
        held.close()  # what is held goes first
        assert transport.writes[2:] == [b"last words"] and transport.closed
        held.write(b"too late")
        await asyncio.sleep(0)  # nothing is written to a closing transport
        assert len(transport.writes) == 3
        assert held.get_extra_info("peername") == "info:peername"  # the rest is the transport's

    asyncio.run(main())


@pytest.mark.parametrize("runner", ["asyncio", "uvloop"])
def test_a_response_leaves_the_protocol_in_one_write(runner):
    """Through uvicorn's protocol: status line, headers and body reach the socket as one write
    (uvicorn alone writes the head and the body apart), whole and in order."""
    writes: list[bytes] = []
    protocols: list[Any] = []

    async def app(scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        await receive()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain"), (b"content-length", b"5")]})
        await send({"type": "http.response.body", "body": b"hello"})

    class Counting:
        def __init__(self, transport: Any) -> None:
            self.transport = transport

        def write(self, data: bytes) -> None:
            writes.append(data)
            self.transport.write(data)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.transport, name)

    async def main() -> bytes:
        config = uvicorn.Config(app, http=deadline_protocol(Limits()), log_level="critical")
        config.load()
        state = ServerState()
        loop = asyncio.get_running_loop()
        server_end, client_end = socket.socketpair()

        def protocol() -> Any:
            made = config.http_protocol_class(config=config, server_state=state, app_state={})
            protocols.append(made)
            return made

        await loop.connect_accepted_socket(protocol, server_end)
        held = protocols[0].transport
        assert isinstance(held, HeldWrites)
        held._transport = Counting(held._transport)
        client_end.setblocking(False)
        await loop.sock_sendall(client_end, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = b""
        with anyio.fail_after(10):
            while not answer.endswith(b"hello"):
                answer += await loop.sock_recv(client_end, 65536)
        client_end.close()
        await asyncio.sleep(0.05)
        return answer

    if runner == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        answer = uvloop.run(main())
    else:
        answer = asyncio.run(main())
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n") and answer.endswith(b"\r\n\r\nhello")
    assert writes == [answer]


# --- a body the connection holds whole --------------------------------------------------------


@pytest.mark.parametrize("whole", [True, False])
def test_a_body_the_connection_holds_whole_is_read_without_the_deadline(whole):
    """`body_whole` is set by the protocol once the body is in; then `receive()` returns at once,
    so the guards set no timer. A body not yet whole keeps its deadline (408)."""
    statuses: list[int] = []

    async def inner(scope, receive, send) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def slow_receive() -> dict:
        await anyio.sleep(0.3)  # past the deadline: only a receive that is timed notices
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    settings = dataclasses.replace(Settings(), limits=Limits(body_timeout_s=0.05))
    guards = RequestGuards(inner, settings)
    scope = {"type": "http", "method": "POST", "path": "/v1/perturb",
             "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")],
             "extensions": {CLIENT_WATCH: ClientWatch(body_whole=whole)}}
    if whole:
        anyio.run(guards, scope, slow_receive, send)
        assert statuses == [200]
    else:
        with pytest.raises(Exception, match="did not arrive within 0.05 s"):
            anyio.run(guards, scope, slow_receive, send)
