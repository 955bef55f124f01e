"""Work done only while its client is there: a request whose client leaves is cancelled, not finished.

Why: uvicorn tells an application that its client has gone only through `receive()` (an
`http.disconnect` message). A handler that awaits its work and nothing else computes a batch to
the end for nobody (up to seconds of CPU), logs it 200, and holds its place in the queue the
while, so requests sent and forgotten could fill `--max-pending`. Here the work runs beside a
task that waits for that message; when it comes, the work is cancelled (a job still waiting for
a thread leaves the queue at once), the worker thread is told through its `Deadline` to stop at
its next check, and the request ends in starlette's `ClientDisconnect`, logged 499.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from contrastgen.api.offload import Deadline
from starlette.requests import ClientDisconnect
from starlette.types import Receive

T = TypeVar("T")


async def while_connected(receive: Receive, deadline: Deadline, work: Callable[[], Awaitable[T]]) -> T:
    """`await work()`, cancelled if the client disconnects first (then `ClientDisconnect`).

    `receive` must have delivered the whole body already: what it gives next is the disconnect.
    The work's own errors are raised as they are (not inside an exception group)."""
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
        except Exception as exc:
            error = exc
        group.cancel_scope.cancel()
    if gone:
        raise ClientDisconnect()
    if error is not None:
        raise error
    return result
