"""One function over a stream of batches, in this process, in forked workers or as Ray tasks, with
the results given back in the batches' order.

Why: the heavy passes of an OOD build (VQA-VS's MI counts and concept labels) are pure functions
of a batch of samples and of a state fitted once (the MI statistics). Giving the results back in
input order keeps every output byte-identical whatever runs them. A window of batches in flight,
not the whole input: the driver reads the input as the workers need it, so its memory stays
bounded however large the input. Local workers are forked after the state exists, so it is shared
copy-on-write, never pickled; on Ray it goes to the object store once, and each worker process
reads it once. A Ray task whose worker dies is retried (`ray_session.MAX_RETRIES`) and, being pure,
gives the same result; each batch's one result is taken, so nothing is lost or doubled.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing as mp
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
Batch = TypeVar("Batch")
Result = TypeVar("Result")

# A pool worker's function and state, set by the pool's initializer (with fork, never pickled).
_WORKER: tuple[Callable[[Any, Any], Any], Any] | None = None
# A Ray worker process's states by object id, each fetched by its first task.
_RAY_STATES: dict[str, Any] = {}


def map_in_order(fn: Callable[[State, Batch], Result], state: State, batches: Iterable[Batch], *,
                 backend: Backend = LOCAL, workers: int = 1) -> Iterator[Result]:
    """`fn(state, batch)` for each batch, in the batches' order. `fn` must be a module-level
    function: Ray pickles it by name (the pool's forked workers inherit it)."""
    if backend.name == "ray":
        return _on_ray(fn, state, batches, backend.address)
    if workers <= 1:
        return (fn(state, batch) for batch in batches)
    return _on_pool(fn, state, batches, workers)


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


def _forked_call(batch: Any) -> Any:
    assert _WORKER is not None, "a pool worker started without its function"
    fn, state = _WORKER
    return fn(state, batch)


def _on_pool(fn: Callable[[State, Batch], Result], state: State, batches: Iterable[Batch],
             workers: int) -> Iterator[Result]:
    with mp.get_context("fork").Pool(workers, initializer=_adopt, initargs=(fn, state)) as pool:
        pending: collections.deque = collections.deque()
        for batch in batches:
            pending.append(pool.apply_async(_forked_call, (batch,)))
            if len(pending) >= 2 * workers:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def _ray_call(fn: Callable[[Any, Any], Any], state_ref: list[Any], index: int, batch: Any) -> Any:
    """What a Ray worker runs: `fn` on one batch, with the state this process fetched once. The
    state's reference comes inside a list so that Ray does not fetch it for every task."""
    import ray

    crash_on_first_attempt(index)
    key = state_ref[0].hex()
    if key not in _RAY_STATES:
        _RAY_STATES.clear()  # one run's state at a time
        _RAY_STATES[key] = ray.get(state_ref[0])
    return fn(_RAY_STATES[key], batch)


def _on_ray(fn: Callable[[State, Batch], Result], state: State, batches: Iterable[Batch],
            address: str | None) -> Iterator[Result]:
    with ray_session(address) as ray:
        task = ray.remote(max_retries=MAX_RETRIES)(_ray_call)
        state_ref = [ray.put(state)]
        window = in_flight_limit(ray.cluster_resources().get("CPU", 1))
        pending: collections.deque = collections.deque()
        for index, batch in enumerate(batches):
            pending.append(task.remote(fn, state_ref, index, batch))
            if len(pending) >= window:
                yield ray.get(pending.popleft())
        while pending:
            yield ray.get(pending.popleft())
