"""A connection's deadlines, and clients that leave, against a real server on loopback.

Headers that never end and bodies that trickle are answered 408 and the connection closed by
their deadlines (`api/connection.py`, `api/guards.py`), not held for as long as the client
likes; work whose client has gone is cancelled and logged 499 (`api/disconnect.py`). The server
here has a 1 s header deadline and a 0.5 s body deadline, so each test is over in seconds.
"""

from __future__ import annotations

import asyncio
import select
import socket
import time
import uuid
from urllib.parse import urlparse

import anyio
import orjson
import pytest
import uvicorn
from contrastgen.api.connection import deadline_protocol
from contrastgen.api.disconnect import while_connected
from contrastgen.api.offload import Deadline
from contrastgen.api.settings import Limits
from server_harness import Server
from starlette.requests import ClientDisconnect
from uvicorn.server import ServerState


def _connect(server: Server) -> socket.socket:
    url = urlparse(server.url)
    return socket.create_connection((url.hostname, url.port), timeout=10)


def _one_response(s: socket.socket) -> bytes:
    """One whole response (its headers and its content-length body), however the bytes arrive."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += s.recv(65536)
    return head + b"\r\n\r\n" + body


def _until_closed(s: socket.socket, limit: float) -> tuple[bytes, float]:
    """All the server sends until it closes the connection, and how long that took; fails if the
    connection is still open after `limit` seconds."""
    start = time.monotonic()
    data = b""
    while True:
        left = limit - (time.monotonic() - start)
        if left <= 0 or not select.select([s], [], [], left)[0]:
            raise AssertionError(f"the connection is still open after {limit} s; it sent {data[:200]!r}")
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return data, time.monotonic() - start
        data += chunk


def _trickle(s: socket.socket, every: float, limit: float) -> tuple[bytes, float]:
    """Send a byte every `every` seconds until the server answers and closes (within `limit`)."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if select.select([s], [], [], every)[0]:
            data, _ = _until_closed(s, limit)
            return data, time.monotonic() - start
        try:
            s.sendall(b" ")
        except OSError:  # closed between two reads
            return b"", time.monotonic() - start
    raise AssertionError(f"a body trickled a byte every {every} s is still being taken after {limit} s")


def _body_of(answer: bytes) -> dict:
    return orjson.loads(answer.split(b"\r\n\r\n", 1)[1])


def test_headers_that_never_end_are_answered_408_and_the_connections_closed(impatient_server):
    sockets = [_connect(impatient_server) for _ in range(20)]
    try:
        for s in sockets:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line: the headers go on
        start = time.monotonic()
        answers = [_until_closed(s, 10)[0] for s in sockets]
        took = time.monotonic() - start
    finally:
        for s in sockets:
            s.close()
    for answer in answers:
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert _body_of(answer)["error"] == "header_timeout"
    assert took < 5, took  # the deadline is 1 s
    with impatient_server.client() as client:
        assert client.get("/healthz").status_code == 200  # the server goes on


def test_the_next_request_on_a_kept_alive_connection_has_the_same_header_deadline(impatient_server):
    with _connect(impatient_server) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = _one_response(s)  # whole, so the next bytes read are the next response's
        assert first.startswith(b"HTTP/1.1 200 "), first
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        answer, took = _until_closed(s, 10)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert took < 4, took  # well before uvicorn's keep-alive timer (5 s), which the bytes cancelled


def test_a_connection_that_says_nothing_is_closed_without_an_answer(impatient_server):
    with _connect(impatient_server) as s:
        answer, took = _until_closed(s, 10)
    assert answer == b""
    assert took < 5, took


def test_a_body_trickled_in_small_pieces_meets_one_deadline_for_the_whole(impatient_server):
    """Every piece arrives well within 0.5 s, so only a deadline on the whole body ends it."""
    url = urlparse(impatient_server.url)
    with _connect(impatient_server) as s:
        s.sendall((f"POST /v1/perturb HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
                   "Content-Length: 1000\r\n\r\n{").encode())
        answer, took = _trickle(s, every=0.1, limit=8)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
    assert _body_of(answer)["error"] == "body_timeout"
    # the application's own 408 (logged with the request), not the connection's later one
    assert b"\r\nx-request-id: " in answer.lower(), answer[:300]
    assert took < 4, took


def test_a_body_the_application_never_reads_is_held_to_the_deadline_too(impatient_server):
    """/healthz answers without reading the body; the bytes that follow still meet their deadline."""
    with _connect(impatient_server) as s:
        s.sendall(b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n")
        answer, took = _trickle(s, every=0.1, limit=8)
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    assert took < 5, took  # the body deadline (0.5 s) and the protocol's grace (1 s)


def test_work_whose_client_left_is_cancelled_and_logged_499(impatient_server, sample):
    """A batch whose client closes the connection once its body is sent is logged 499 and
    stops: with one worker thread, a batch sent after four abandoned ones waits for none of them."""
    questions, graphs = sample
    # the whole sample, so a batch's work outlasts the moment its client leaves even on a quick
    # idle host (120 questions could finish first, and rightly be logged 200)
    body = orjson.dumps({"questions": questions, "scene_graphs": graphs, "mode": "both"})
    url = urlparse(impatient_server.url)

    def batch_took() -> float:
        start = time.monotonic()
        with impatient_server.client() as client:
            response = client.post("/v1/perturb/batch", content=body, headers={"content-type": "application/json"})
        assert response.status_code == 200, response.text[:300]
        return time.monotonic() - start

    alone = batch_took()
    before = len(impatient_server.log_lines())
    ids = [f"gone-{uuid.uuid4().hex}" for _ in range(4)]
    for n, request_id in enumerate(ids):
        with _connect(impatient_server) as s:
            s.sendall((f"POST /v1/perturb/batch HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
                       f"X-Request-ID: {request_id}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
            # gone at once (its leaving may come in with the end of its body), or once the work is
            # under way or queued
            time.sleep(0.05 * (n % 2))
    after = batch_took()

    def ours() -> dict[str, dict]:
        return {line["request_id"]: line for line in impatient_server.log_lines()[before:]
                if line.get("event") == "request" and line.get("request_id") in ids}

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(ours()) < len(ids):
        time.sleep(0.1)
    assert {i: line["status"] for i, line in ours().items()} == {i: 499 for i in ids}
    # finished, they would be (4 + 1) x `alone` of work on one thread
    assert after < 2.5 * alone + 0.5, (after, alone)


def test_under_another_server_the_work_is_cancelled_by_receive_s_disconnect():
    """Without the protocol's hooks in the scope (another ASGI server), the disconnect message
    that `receive()` gives is what cancels the work; its errors still come out as themselves."""
    async def leaves() -> dict:
        await anyio.sleep(0.1)
        return {"type": "http.disconnect"}

    async def stays() -> dict:
        await anyio.sleep(60)
        return {"type": "http.disconnect"}

    async def long_work() -> int:
        await anyio.sleep(30)
        return 1

    async def failing_work() -> int:
        raise ValueError("the work's own error")

    async def main() -> None:
        deadline = Deadline.after(60)
        start = time.monotonic()
        with pytest.raises(ClientDisconnect):
            await while_connected({}, leaves, deadline, long_work)
        assert time.monotonic() - start < 5
        assert deadline.gone.is_set()  # the worker thread's next check stops it
        with pytest.raises(ValueError, match="own error"):
            await while_connected({}, stays, Deadline.after(60), failing_work)

    anyio.run(main)


@pytest.mark.parametrize("runner", ["asyncio", "uvloop"])
def test_a_client_leaving_with_the_end_of_a_large_body_is_seen_while_its_work_runs(runner):
    """uvicorn stops reading while a large body is buffered and reads on only when the application
    asks for more; once the body is whole, the protocol reads on by itself, so the end of a
    connection that came with the body's last bytes reaches the work (which waits on no receive())."""
    outcome: dict[str, object] = {}

    async def app(scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        try:
            await while_connected(scope, receive, Deadline.after(30), lambda: anyio.sleep(30))
            outcome["result"] = "finished"
        except ClientDisconnect:
            outcome["result"] = "client gone"

    async def main() -> None:
        config = uvicorn.Config(app, http=deadline_protocol(Limits()), log_level="critical")
        config.load()
        state = ServerState()
        loop = asyncio.get_running_loop()
        server_end, client_end = socket.socketpair()
        await loop.connect_accepted_socket(
            lambda: config.http_protocol_class(config=config, server_state=state, app_state={}), server_end)
        body = b"x" * 1_000_000  # far past uvicorn's 64 KiB high-water mark
        client_end.setblocking(False)
        await loop.sock_sendall(client_end, b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                            b"Content-Length: %d\r\n\r\n" % len(body) + body)
        client_end.close()
        for _ in range(100):
            await asyncio.sleep(0.05)
            if outcome:
                break
        for task in list(state.tasks):
            task.cancel()

    if runner == "uvloop":
        uvloop = pytest.importorskip("uvloop")
        uvloop.run(main())
    else:
        asyncio.run(main())
    assert outcome == {"result": "client gone"}
