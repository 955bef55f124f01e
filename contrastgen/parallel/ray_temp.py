"""The session folder a Ray instance started by this process leaves in Ray's temporary folder,
removed when the run ends.

Why: a Ray instance that `ray.init()` starts writes `$TMPDIR/ray/session_<date>_<pid>/` (logs,
sockets, the object store's spill files) and points `session_latest` at it, and `ray.shutdown()`
removes neither, so every run left one behind. Which folder is this run's: one that appeared
while this process started Ray, named with this process's id (Ray names a head node's session
after the process that starts it). A cluster this process only connected to was started by
another process, so its session folders carry another id and were there before: they are never
touched. A failed start is cleaned the same way, as Ray leaves no handle on the half-made node.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

_LATEST = "session_latest"


@dataclass(frozen=True)
class Sessions:
    """Ray's temporary folder, whether it existed, the session folders in it and where its
    `session_latest` link pointed, before a start."""

    root: Path | None
    existed: bool
    before: frozenset[str]
    latest: str | None = None


def ray_temp_root() -> Path | None:
    """Where a Ray instance started here puts its session folders (RAY_TMPDIR, else TMPDIR, then
    `ray`), as Ray itself computes it; None if this Ray does not say."""
    try:
        import ray._common.utils as ray_utils

        return Path(ray_utils.get_default_ray_temp_dir())
    except (ImportError, AttributeError):  # pragma: no cover - a Ray that moved it: leave its files
        return None


def before_start(root: Path | None = None) -> Sessions:
    root = root if root is not None else ray_temp_root()
    if root is None:
        return Sessions(None, False, frozenset())
    try:
        names = frozenset(os.listdir(root))
    except OSError:
        return Sessions(root, False, frozenset())
    try:
        latest = os.readlink(root / _LATEST)
    except OSError:
        latest = None
    return Sessions(root, True, names, latest)


def remove_own(sessions: Sessions, pid: int | None = None) -> list[Path]:
    """Remove the session folders this process's Ray start made since `sessions` was taken, the
    `session_latest` link if it points at one of them (back to where it pointed before, if that
    folder is still there), and Ray's folder if the start made it and it is now empty. Returns the
    folders removed."""
    root = sessions.root
    if root is None:
        return []
    suffix = f"_{pid if pid is not None else os.getpid()}"
    try:
        names = os.listdir(root)
    except OSError:
        return []
    removed = []
    for name in sorted(names):
        path = root / name
        if (name.startswith("session_") and name != _LATEST and name.endswith(suffix)
                and name not in sessions.before and path.is_dir() and not path.is_symlink()):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    latest = root / _LATEST
    with contextlib.suppress(OSError):
        if latest.is_symlink() and Path(os.readlink(latest)).name in {p.name for p in removed}:
            latest.unlink()
            if sessions.latest is not None and (root / sessions.latest).is_dir():
                latest.symlink_to(sessions.latest)
    if not sessions.existed:
        with contextlib.suppress(OSError):
            root.rmdir()  # only if empty: another process may have started Ray meanwhile
    return removed
