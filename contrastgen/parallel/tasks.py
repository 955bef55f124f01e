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

A state too large to send whole to a worker that shares no memory with this process (a run's
questions and graphs) says how it travels apart (`Apart`): on Ray its small shared part goes to
the object store once and each task carries its own slice, rejoined on the worker; forked workers
still inherit it whole. So a caller writes one task function for every backend.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing as mp
import queue
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.pool import AsyncResult
from typing import Any, Protocol, TypeVar, runtime_checkable

from contrastgen.gc_policy import no_gc, one_collection
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
_WORKER: tuple[Callable[..., Any], Any, bool] | None = None
# A Ray worker process's states by object id, each fetched by its first task.
_RAY_STATES: dict[str, Any] = {}


@runtime_checkable
class Apart(Protocol):
    """A state that travels to workers sharing no memory with this process in two parts: what
    every task reads (`shared`, sent once) and what one task reads (`carried(task)`, sent with
    it); `rejoin(shared, carried)`, a module-level function, makes the (state, task) that the
    task function takes from the two, on the worker."""

    def shared(self) -> Any: ...

    def carried(self, task: Any) -> Any: ...

    @property
    def rejoin(self) -> Callable[[Any, Any], tuple[Any, Any]]: ...


def map_tasks(fn: Callable[[State, Task], Result], state: State, tasks: Iterable[Task], *,
              backend: Backend = LOCAL, workers: int = 1, ordered: bool = True,
              batch_gc: bool = False) -> Iterator[Result]:
    """`fn(state, task)` for each task: in the tasks' order, or with `ordered=False` as they
    finish. `fn` must be a module-level function: Ray pickles it by name (the pool's forked
    workers inherit it). With one worker the tasks run here, one after another.

    `batch_gc`: the tasks allocate much acyclic data and return acyclic results. In this run's
    own processes each task then runs with the collector paused and collects once at its end
    (`gc_policy.one_collection`), and this process's collector stays paused while it takes the
    results; a Ray worker outlives the run (a frozen cycle there would never be freed) and Ray's
    machinery runs in this process too, so on Ray the collector is left alone."""
    if backend.name == "ray":
        return _on_ray(fn, state, tasks, backend.address, ordered)
    if batch_gc:
        return _collected(fn, state, tasks, workers, ordered)
    if workers <= 1:
        return (fn(state, task) for task in tasks)
    return _on_pool(fn, state, tasks, workers, ordered)


def _collected(fn: Callable[[State, Task], Result], state: State, tasks: Iterable[Task], workers: int,
               ordered: bool) -> Iterator[Result]:
    # forked inside `no_gc`, the pool's workers start with the collector paused too
    with no_gc():
        if workers <= 1:
            for task in tasks:
                yield _one_batch(fn, state, task)
        else:
            yield from _on_pool(_one_batch, (fn, state), tasks, workers, ordered, unpack=True)


def _one_batch(fn: Callable[[Any, Any], Any], state: Any, task: Any) -> Any:
    with one_collection():
        return fn(state, task)


class Helper:
    """One forked process beside this one, holding a state it inherited (never pickled), to which
    this process hands calls while it works on something else: `submit(fn, *args)` runs
    `fn(state, *args)` there. Why not `map_tasks`: a map is pulled by its consumer, while here the
    driver is busy with work of its own (a run's loading: the questions read there while the graphs
    are read here) and hands over work as that work makes it."""

    def __init__(self, pool: Any):
        self._pool = pool

    def submit(self, fn: Callable[..., Result], *args: Any) -> AsyncResult:
        return self._pool.apply_async(_helper_call, (fn, *args))


@contextlib.contextmanager
def helper(state: Any) -> Iterator[Helper]:
    """A `Helper` holding `state`, which dies with this process and is gone when the block ends."""
    with mp.get_context("fork").Pool(1, initializer=_adopt, initargs=(None, state, False)) as pool:
        yield Helper(pool)


def _helper_call(fn: Callable[..., Any], *args: Any) -> Any:
    assert _WORKER is not None, "a helper started without its state"
    return fn(_WORKER[1], *args)


@contextlib.contextmanager
def one_session(backend: Backend) -> Iterator[None]:
    """Around several maps on `backend`: with Ray, one connection (or one local instance) for all
    of them, not one each."""
    if backend.name != "ray":
        yield
        return
    with ray_session(backend.address):
        yield


def _adopt(fn: Callable[..., Any], state: Any, unpack: bool) -> None:
    global _WORKER
    die_with_parent()
    _WORKER = (fn, state, unpack)


def _forked_call(task: Any) -> Any:
    assert _WORKER is not None, "a pool worker started without its function"
    fn, state, unpack = _WORKER
    return fn(*state, task) if unpack else fn(state, task)


class _Failed:
    """A task's exception, carried back to the driver to be raised there."""

    def __init__(self, error: BaseException):
        self.error = error


def _on_pool(fn: Callable[..., Result], state: Any, tasks: Iterable[Task], workers: int,
             ordered: bool, *, unpack: bool = False) -> Iterator[Result]:
    """`unpack`: `state` is a tuple of `fn`'s leading arguments."""
    window = 2 * workers
    with mp.get_context("fork").Pool(workers, initializer=_adopt, initargs=(fn, state, unpack)) as pool:
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


def _ray_call(fn: Callable[[Any, Any], Any], state_ref: list[Any], index: int, task: Any,
              rejoin: Callable[[Any, Any], tuple[Any, Any]] | None) -> Any:
    """What a Ray worker runs: `fn` on one task, with the state this process fetched once (an
    `Apart` state's shared part, rejoined with the task's own). The state's reference comes
    inside a list so that Ray does not fetch it for every task."""
    import ray

    crash_on_first_attempt(index)
    key = state_ref[0].hex()
    if key not in _RAY_STATES:
        _RAY_STATES.clear()  # one run's state at a time
        _RAY_STATES[key] = ray.get(state_ref[0])
    state = _RAY_STATES[key]
    if rejoin is not None:
        state, task = rejoin(state, task)
    return fn(state, task)


def _on_ray(fn: Callable[[State, Task], Result], state: State, tasks: Iterable[Task], address: str | None,
            ordered: bool) -> Iterator[Result]:
    rejoin = None
    if isinstance(state, Apart):
        apart = state
        rejoin, state, tasks = apart.rejoin, apart.shared(), (apart.carried(task) for task in tasks)
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
            ref = remote.remote(fn, state_ref, index, task, rejoin)
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
