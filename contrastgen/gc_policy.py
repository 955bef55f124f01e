"""When Python's cyclic garbage collector may run during a large run.

Why a module of its own: a run at GQA scale allocates millions of small containers (parsed
records, scene indexes, results), and the collector's passes over them can cost more than the
work. The loaders, the writers and the shard loop each say here which of two policies they
follow; both leave the results unchanged, only when memory of cyclic garbage is reclaimed.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


# Why: a GQA run holds millions of acyclic dicts; the collector's walks over them cost more than
# the work itself (50 us per small dict at a million questions). Results do not change.
@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause the collector for a burst of allocation of acyclic data."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_in_batch = False  # inside `one_collection`: the process is one of the run's own


@contextlib.contextmanager
def one_collection() -> Iterator[None]:
    """Run a batch of work (a shard) with the collector paused, then collect once and freeze what
    is left alive.

    Why: a worker allocates thousands of containers per image (a parsed graph, its index, the
    results), which set off the collector's passes over every object the worker holds, its
    caches included: 8% of a worker's time. Paused, the batch's cyclic garbage waits until the
    batch ends; one collection then walks only what the batch made (the objects of earlier
    batches are frozen), and freezing the survivors keeps later collections from walking them
    again. Frozen objects are still freed when their last reference goes, but a cycle among them
    never is: so this is for the run's own processes (its forked workers, or the driver running
    shards itself, which unfreezes at the end), not for a Ray worker that outlives the run.
    """
    global _in_batch
    was, outer = gc.isenabled(), _in_batch
    gc.disable()
    _in_batch = True
    try:
        yield
    finally:
        _in_batch = outer
        gc.collect()
        gc.freeze()
        if was:
            gc.enable()


def freeze_in_batch() -> None:
    """Within a batch (`one_collection`), freeze what is alive now, so that no collection walks a
    long-kept acyclic structure just built: a group search's cached candidate scene (a few hundred
    containers; the cache turns over every few batches). Elsewhere, nothing: in a Ray worker or a
    library caller's process a frozen cycle would never be freed."""
    if _in_batch:
        gc.freeze()
