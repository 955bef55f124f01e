"""Keeping Python's cyclic garbage collector off the loaded dataset.

A GQA run holds millions of acyclic dicts (questions, scene graphs). Every so many allocations
the collector walks all of them again; profiling showed that walk costing more than the work
itself when building outputs (50 us per small dict at a million questions). `no_gc` pauses it
for a burst of loading or writing; `generation.run_generation` freezes the loaded objects out of
its reach for the run. Neither changes results.
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
