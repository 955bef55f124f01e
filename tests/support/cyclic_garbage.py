"""What a run leaves for the collector (test helper): the types of the objects only a reference
cycle kept alive. Runs that pause the collector for a shard, or for a whole pass, rely on there
being none."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable


def cyclic_garbage(run: Callable[[], object]) -> Counter:
    """`run` twice (the first fills the caches), then what a collection finds after the second."""
    run()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds stays in gc.garbage
    try:
        assert run(), "the run produced nothing, so it shows nothing about its garbage"
        gc.collect()
        return Counter(type(o).__qualname__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
