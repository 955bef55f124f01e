"""Stopping a server a test started, as a user would: Ctrl-C (SIGINT), then a kill if it hangs."""

from __future__ import annotations

import signal
import subprocess


def interrupt(proc: subprocess.Popen, timeout: float = 15) -> None:
    """SIGINT, wait up to `timeout` seconds, then SIGKILL; the process is reaped either way."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
