"""Worker processes that end with the process that made them.

Why: a forked pool's workers wait on a pipe whose writing end they inherited themselves, so when
the parent is killed (`kill -9`, the out-of-memory killer) they never see it close and wait
forever, each holding its copy of the run's memory. Linux can send a child a signal when its
parent dies (`PR_SET_PDEATHSIG`); each worker asks for SIGKILL as it starts. Elsewhere this does
nothing.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Ask the kernel to kill this process when its parent dies (Linux; a no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - no C library to load
        return
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
