"""Where a run's heavy work goes: this machine's worker processes, or a Ray cluster."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Backend:
    """The local worker pool, or a Ray cluster (`address`: "auto", HOST:PORT, ray://HOST:PORT; None
    starts a Ray instance on this machine)."""

    name: str = "local"
    address: str | None = None


BACKENDS = ("local", "ray")
LOCAL = Backend()


def default_workers() -> int:
    """Worker processes when the user names none: the CPUs, at most eight (past that, reading the
    input in the one driver process is the limit)."""
    return max(1, min(os.cpu_count() or 1, 8))
