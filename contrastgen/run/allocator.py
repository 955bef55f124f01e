"""glibc's allocator set for one long batch run: large buffers reused, not mapped and unmapped.

A generation run allocates and frees many large buffers (a shard's packed questions, a worker's
result bytes, pickles between processes). By default glibc serves each one above 128 KB (a
threshold that adapts up to 32 MB) with its own `mmap` and returns it with `munmap`, so every
such buffer costs fresh zeroed pages and their faults. With one high threshold and a large
trim threshold, freed buffers stay in the heap and are reused: on the 1M benchmark, system time
fell from 17.4 to 10.9 s and wall time from 59 to 52 s, with the same peak RSS and the same
output (docs/performance.md). Only the CLI's run calls this: it changes the whole
process, which a library caller should decide for itself. Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

# mallopt parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3

SETTINGS = ((_M_MMAP_THRESHOLD, 32 << 20),  # glibc's largest allowed (64-bit)
            (_M_TRIM_THRESHOLD, 1 << 30),
            (_M_TOP_PAD, 64 << 20))


def tune_for_batch() -> bool:
    """Apply SETTINGS to this process (and the workers it forks later); True if glibc took them."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
        gnu_libc_version = libc.gnu_get_libc_version  # absent on musl, whose mallopt does nothing
    except (OSError, AttributeError):
        return False
    del gnu_libc_version
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return all(mallopt(param, value) == 1 for param, value in SETTINGS)
