"""One function over a stream of tasks, in this process, in forked workers or as Ray tasks: the one
way contrastgen spreads work (the shards of `generate`, the batches of an OOD build).

Why one mechanism: every heavy pass is a pure function of a task (a shard of images, a batch of
samples) and of a state made once (the run's options and corpus, the fitted MI statistics), so
what a backend must get right is the same for all: the state reaches each worker once (forked
workers inherit it copy-on-write, never pickled; on Ray it goes to the object store once and each
worker process reads it once); a window of tasks in flight, not the whole input, so the driver
reads the input only as the workers need it and its memory stays bounded; each task's one result
is taken, so a Ray task retried after its worker died (`ray_session.MAX_RETRIES`), being pure,
is neither lost nor doubled; and the results come back in the tasks' order (`ordered`), or as
they finish, for a caller that merges them order-free.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing as mp
import queue
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from contrastgen.parallel.backend import LOCAL, Backend
from contrastgen.parallel.lifetime import die_with_parent
from contrastgen.parallel.ray_session import (
    MAX_RETRIES,
    crash_on_first_attempt,
    in_flight_limit,
    ray_session,
)

State = TypeVar("State")
Task = TypeVar("Task")
Result = TypeVar("Result")

# A pool worker's function and state, set by the pool's initializer (with fork, never pickled).
_WORKER: tuple[Callable[[Any, Any], Any], Any] | None = None
# A Ray worker process's states by object id, each fetched by its first task.
_RAY_STATES: dict[str, Any] = {}


def map_tasks(fn: Callable[[State, Task], Result], state: State, tasks: Iterable[Task], *,
              backend: Backend = LOCAL, workers: int = 1, ordered: bool = True) -> Iterator[Result]:
    """`fn(state, task)` for each task: in the tasks' order, or with `ordered=False` as they
    finish. `fn` must be a module-level function: Ray pickles it by name (the pool's forked
    workers inherit it). With one worker the tasks run here, one after another."""
    if backend.name == "ray":
        return _on_ray(fn, state, tasks, backend.address, ordered)
    if workers <= 1:
        return (fn(state, task) for task in tasks)
    return _on_pool(fn, state, tasks, workers, ordered)


@contextlib.contextmanager
def one_session(backend: Backend) -> Iterator[None]:
    """Around several maps on `backend`: with Ray, one connection (or one local instance) for all
    of them, not one each."""
    if backend.name != "ray":
        yield
        return
    with ray_session(backend.address):
        yield


def _adopt(fn: Callable[[Any, Any], Any], state: Any) -> None:
    global _WORKER
    die_with_parent()
    _WORKER = (fn, state)


def _forked_call(task: Any) -> Any:
    assert _WORKER is not None, "a pool worker started without its function"
    fn, state = _WORKER
    return fn(state, task)


class _Failed:
    """A task's exception, carried back to the driver to be raised there."""

    def __init__(self, error: BaseException):
        self.error = error


def _on_pool(fn: Callable[[State, Task], Result], state: State, tasks: Iterable[Task], workers: int,
             ordered: bool) -> Iterator[Result]:
    window = 2 * workers
    with mp.get_context("fork").Pool(workers, initializer=_adopt, initargs=(fn, state)) as pool:
        if ordered:
            pending: collections.deque = collections.deque()
            for task in tasks:
                pending.append(pool.apply_async(_forked_call, (task,)))
                if len(pending) >= window:
                    yield pending.popleft().get()
            while pending:
                yield pending.popleft().get()
            return
        finished: queue.SimpleQueue = queue.SimpleQueue()
        in_flight = 0

        def take() -> Any:
            out = finished.get()
            if isinstance(out, _Failed):
                raise out.error
            return out

        for task in tasks:
            pool.apply_async(_forked_call, (task,), callback=finished.put,
                             error_callback=lambda e: finished.put(_Failed(e)))
            in_flight += 1
            if in_flight >= window:
                in_flight -= 1
                yield take()
        while in_flight:
            in_flight -= 1
            yield take()


def _ray_call(fn: Callable[[Any, Any], Any], state_ref: list[Any], index: int, task: Any) -> Any:
    """What a Ray worker runs: `fn` on one task, with the state this process fetched once. The
    state's reference comes inside a list so that Ray does not fetch it for every task."""
    import ray

    crash_on_first_attempt(index)
    key = state_ref[0].hex()
    if key not in _RAY_STATES:
        _RAY_STATES.clear()  # one run's state at a time
        _RAY_STATES[key] = ray.get(state_ref[0])
    return fn(_RAY_STATES[key], task)


def _on_ray(fn: Callable[[State, Task], Result], state: State, tasks: Iterable[Task], address: str | None,
            ordered: bool) -> Iterator[Result]:
    with ray_session(address) as ray:
        remote = ray.remote(max_retries=MAX_RETRIES)(_ray_call)
        state_ref = [ray.put(state)]
        window = in_flight_limit(ray.cluster_resources().get("CPU", 1))
        queued = enumerate(tasks)
        pending: dict[Any, int] = {}  # in flight: object ref -> task index
        order: collections.deque = collections.deque()  # refs in task order (ordered results)
        done: set[int] = set()

        def submit() -> bool:
            item = next(queued, None)
            if item is None:
                return False
            index, task = item
            ref = remote.remote(fn, state_ref, index, task)
            pending[ref] = index
            order.append(ref)
            return True

        while len(pending) < window and submit():
            pass
        while pending:
            if ordered:
                ready = [order[0]]
            else:
                ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                index = pending.pop(ref)
                order.remove(ref)
                result = ray.get(ref)
                if index not in done:  # one result per task, whatever Ray retried
                    done.add(index)
                    yield result
                submit()
