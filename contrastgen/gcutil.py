"""Keeping Python's cyclic garbage collector off the loaded dataset.

A GQA run holds millions of acyclic dicts (questions, scene graphs). Every so many allocations
the collector walks all of them again; profiling showed that walk costing more than the work
itself when building outputs (50 us per small dict at a million questions). These helpers pause
it or freeze the loaded objects out of its reach; nothing here changes results.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


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


def freeze_loaded() -> None:
    """Move everything allocated so far out of the collector's reach (and, after a fork, out of
    the pages a collection would otherwise touch and copy in every worker).

    No collection first: a loaded dataset is acyclic, and a full collection over a million
    questions costs seconds while finding nothing to free.
    """
    gc.freeze()
