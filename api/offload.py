"""Running CPU-bound engine work off the event loop, with admission control and a deadline.

Why: generating, verifying and bootstrapping are pure Python and hold the CPU; run on the event
loop they would stall every other connection, health checks included. Each call goes to a small
thread pool instead. Two limits keep the service predictable under load: a request that would
wait behind more than `max_pending` others is refused at once (503, retry later), and one that
runs past `request_timeout_s` is answered with 504. Python threads cannot be killed, so long
jobs also receive a `Deadline` and check it between units of work (questions, records); an
abandoned job therefore stops soon after its client was told it timed out, or soon after its
client left (`Deadline.abandon`, see `disconnect`).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


class Overloaded(Exception):
    """Too many requests are already waiting for a worker thread."""

    def __init__(self, pending: int):
        super().__init__(f"server busy: {pending} requests already waiting; retry shortly")
        self.pending = pending


class DeadlineExceeded(Exception):
    """The request ran past its time limit."""

    def __init__(self, seconds: float):
        super().__init__(f"request exceeded the time limit of {seconds:g} s")
        self.seconds = seconds


class Abandoned(Exception):
    """The client of this work has gone; nobody waits for its result."""


@dataclass(frozen=True)
class Deadline:
    """A point in monotonic time; `check()` raises once it has passed, or once the work's client
    has gone (`abandon`)."""

    at: float
    seconds: float
    # set from the event loop, read by the worker thread between units of work
    gone: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds, seconds)

    def expired(self) -> bool:
        return time.monotonic() > self.at

    def abandon(self) -> None:
        """Tell the work to stop at its next `check`: its client has gone."""
        self.gone.set()

    def check(self) -> None:
        if self.gone.is_set():
            raise Abandoned()
        if self.expired():
            raise DeadlineExceeded(self.seconds)

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())


class WorkerPool:
    """A bounded thread pool shared by all requests of one server process.

    Why a plain executor rather than `anyio.to_thread`: a `/v1/perturb` job is a fraction of a
    millisecond, and anyio's hop (a cancel scope, a capacity limiter and its own deadline scope
    around each call) cost about 20 us of CPU more than the executor's queue, which already holds
    jobs to `threads` at a time in arrival order. The deadline is one timer that cancels the
    job's future; a job cancelled before it began leaves the queue, one that began is abandoned
    (its thread stops at its next `Deadline.check`).
    """

    def __init__(self, threads: int, max_pending: int, timeout_s: float):
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="contrastgen-api")
        self.max_pending = max_pending
        self.timeout_s = timeout_s
        self.pending = 0

    def deadline(self) -> Deadline:
        return Deadline.after(self.timeout_s)

    @property
    def saturated(self) -> bool:
        return self.pending >= self.max_pending

    async def run(self, fn: Callable[..., T], *args: object, deadline: Deadline | None = None,
                  admit: bool = True) -> T:
        """Run `fn(*args)` in a worker thread, within `deadline` (default: a new one).

        `admit=False` skips admission control: the next slice of a stream already under way
        waits its turn rather than being refused halfway through. Cancelling the calling task
        cancels the job as the deadline does (and raises `CancelledError`).
        """
        if admit and self.saturated:
            raise Overloaded(self.pending)
        deadline = deadline or self.deadline()
        loop = asyncio.get_running_loop()
        self.pending += 1
        job = loop.run_in_executor(self.executor, fn, *args)
        late = False

        def expire() -> None:
            nonlocal late
            late = True
            job.cancel()

        timer = loop.call_later(deadline.remaining(), expire)
        try:
            return await job
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if late and not (task is not None and task.cancelling()):
                raise DeadlineExceeded(deadline.seconds) from None
            raise
        finally:
            timer.cancel()
            self.pending -= 1
