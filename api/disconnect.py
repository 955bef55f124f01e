"""Work done only while its client is there: a request whose client leaves is cancelled, not finished.

Why: a handler that awaits its work and nothing else computes a batch to the end for nobody (up
to seconds of CPU), logs it 200, and holds its place in the queue the while, so requests sent and
forgotten could fill `--max-pending`. When the client goes, the work is cancelled (a job still
waiting for a thread leaves the queue at once), the worker thread is told through its `Deadline`
to stop at its next check, and the request ends in starlette's `ClientDisconnect`, logged 499.

How the news comes: under `contrastgen serve` the connection's protocol marks the request's
`connection.ClientWatch` gone and calls its hooks, which costs a cancel scope (the mark covers a
client that left before the work began, e.g. right after sending its body). Under
another server (`uvicorn --factory contrastgen.api.app:app_from_env`) only `receive()` says so
(an `http.disconnect` message), so a task waits on it beside the work, which costs a task group
(about 50-100 microseconds a request).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from contrastgen.api.connection import CLIENT_WATCH
from contrastgen.api.offload import Deadline
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope

T = TypeVar("T")


async def while_connected(scope: Scope, receive: Receive, deadline: Deadline,
                          work: Callable[[], Awaitable[T]]) -> T:
    """`await work()`, cancelled if the client disconnects first (then `ClientDisconnect`).

    `receive` must have delivered the whole body already: what it gives next is the disconnect.
    The work's own errors are raised as they are."""
    watch = scope.get("extensions", {}).get(CLIENT_WATCH)
    if watch is None:
        return await _watching_receive(receive, deadline, work)
    if watch.gone:
        raise ClientDisconnect()
    with anyio.CancelScope() as cancel:

        def gone() -> None:
            deadline.abandon()
            cancel.cancel()

        watch.hooks.append(gone)
        try:
            return await work()
        finally:
            watch.hooks.remove(gone)
    raise ClientDisconnect()  # only reached when `gone` cancelled the work


async def _watching_receive(receive: Receive, deadline: Deadline, work: Callable[[], Awaitable[T]]) -> T:
    gone = False
    error: Exception | None = None
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            deadline.abandon()
            group.cancel_scope.cancel()

        group.start_soon(watch)
        try:
            result = await work()
        except Exception as exc:  # raised after the group as itself, not inside an exception group
            error = exc
        group.cancel_scope.cancel()
    if gone:
        raise ClientDisconnect()
    if error is not None:
        raise error
    return result
