"""Where a process keeps its temporary files, and how a later process removes what a killed one left.

Why one folder per process, named with its owner: a run over a large split spills hundreds of
megabytes (its inputs, its results, the VQA-VS records), and a run killed with `kill -9`, by the
kernel's out-of-memory killer or by a lost machine runs no cleanup at all. Every temporary thing
a process makes therefore lives in `$TMPDIR/contrastgen-<pid>-<start>/`, where `<start>` is the
process's start time (so a pid the kernel gives to a later process does not look alive), and a
temporary that must sit beside an output (the new version of a directory, before it is swapped
in) is written down in that folder's `beside` list first. At its start, every command looks for
such folders whose owner is gone (`sweep`) and removes them with everything their list names.
The owner itself removes its folder on every exit it controls: a normal end, an error, Ctrl-C,
SIGTERM and SIGHUP.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

from contrastgen.errors import ContrastgenError

PREFIX = "contrastgen-"
_OWNED = re.compile(r"^contrastgen-(\d+)-(\d+)$")
# what a temporary beside an output is called: `.<name>.cg-<pid>-<start>-<random>.<suffix>`
TAG_PATTERN = re.compile(r"\.cg-(\d+)-(\d+)-")
# an old result moved aside while its new version is renamed in (where paths cannot be exchanged)
_ASIDE = re.compile(r"^\.(.+)\.cg-\d+-\d+-[0-9a-f]+\.old$")
BESIDE_LIST = "beside"
STORE_SUFFIX = ".versions"  # a group store beside its outputs (see `contrastgen.files.atomic`)
# A group store's layout, here because the sweep of a dead owner's leftovers cleans stores too:
# the link to the live version, and the two version slots it swaps between.
STORE_CURRENT = "current"
STORE_SLOTS = ("a", "b")

_root: Path | None = None
_root_owner: int | None = None


class ScratchError(ContrastgenError):
    """The temporary folder cannot be written (full, read-only, not ours)."""


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), or "0" where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return "0"
    # the command name (field 2) may hold spaces and parentheses: count fields after its end
    fields = stat[stat.rfind(b")") + 2:].split()
    return fields[19].decode() if len(fields) > 19 else "0"


def owner_tag() -> str:
    """`<pid>-<start time>` of this process."""
    pid = os.getpid()
    return f"{pid}-{_start_time(pid)}"


def owner_alive(pid: int, start: str) -> bool:
    """Whether the process that made a temporary still runs (a pid reused since does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive, and its files are not ours anyway
    return start == "0" or _start_time(pid) in (start, "0")


def temp_base() -> Path:
    return Path(tempfile.gettempdir())


def root() -> Path:
    """This process's folder under TMPDIR (made on first use; forked workers share their
    parent's)."""
    global _root, _root_owner
    if _root is None:
        path = temp_base() / f"{PREFIX}{owner_tag()}"
        try:
            path.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            raise ScratchError(f"cannot make a temporary folder in {path.parent} ({exc.strerror}); "
                               "set TMPDIR to a writable folder") from None
        _root, _root_owner = path, os.getpid()
        atexit.register(remove_root)
    return _root


def make_dir(prefix: str) -> Path:
    """A new folder inside this process's temporary folder."""
    try:
        return Path(tempfile.mkdtemp(prefix=prefix, dir=root()))
    except OSError as exc:
        raise ScratchError(f"cannot make a temporary folder in {root()} ({exc.strerror}); "
                           "set TMPDIR to a folder with room") from None


@contextlib.contextmanager
def folder(prefix: str) -> Iterator[Path]:
    """A new folder inside this process's temporary folder, removed when the block ends."""
    path = make_dir(prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def remove_root() -> None:
    """Remove this process's folder (only its owner does: forked workers leave it)."""
    global _root
    if _root is not None and _root_owner == os.getpid():
        _remove_beside(_root)
        shutil.rmtree(_root, ignore_errors=True)
        _root = None


def note_beside(path: Path) -> None:
    """Write down a temporary made beside an output before making it, so that if this process
    dies, the next run finds it (its name also carries the owner's tag, see `TAG_PATTERN`)."""
    try:
        with (root() / BESIDE_LIST).open("a", encoding="utf-8") as fh:
            fh.write(os.fsdecode(path.absolute()) + "\n")
    except OSError as exc:
        raise ScratchError(f"cannot write in {root()} ({exc.strerror}); set TMPDIR to a folder with room") from None


def _remove_beside(folder: Path) -> None:
    """Remove the temporaries a process listed beside its outputs (only names that carry its
    tag: a list is no licence to remove anything else)."""
    listed = folder / BESIDE_LIST
    try:
        names = listed.read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    tag = f".cg-{folder.name[len(PREFIX):]}-"
    for name in names:
        path = Path(name)
        if path.name.endswith(STORE_SUFFIX) and path.is_dir():
            clean_store(path)
            continue
        if tag not in path.name:
            continue
        put_aside = _ASIDE.match(path.name)
        if put_aside and not os.path.lexists(path.parent / put_aside.group(1)):
            # an old result moved aside for a swap that never happened: it goes back
            with contextlib.suppress(OSError):
                os.rename(path, path.parent / put_aside.group(1))
                continue
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink()


def sweep(base: Path | None = None) -> list[Path]:
    """Remove what processes that are gone left in TMPDIR (and beside their outputs); returns
    the folders removed. Folders of live processes and of other users are left alone."""
    base = base or temp_base()
    removed = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    for entry in entries:
        match = _OWNED.match(entry.name)
        if not match or int(match.group(1)) == os.getpid():
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or (uid is not None and entry.stat().st_uid != uid):
                continue
        except OSError:
            continue
        if owner_alive(int(match.group(1)), match.group(2)):
            continue
        folder = Path(entry.path)
        _remove_beside(folder)
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def sweep_beside(directory: Path) -> None:
    """Remove temporaries of dead processes found beside an output (for a run whose list in
    TMPDIR was lost, e.g. TMPDIR changed between the two runs)."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith("."):
            continue
        match = TAG_PATTERN.search(entry.name)
        if match is None or owner_alive(int(match.group(1)), match.group(2)):
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)


_CLEANUP_SIGNALS = ("SIGTERM", "SIGHUP")


_handler_owner: int | None = None  # the process that installed `_exit_on_signal`


def _exit_on_signal(signum: int, frame) -> None:
    if os.getpid() != _handler_owner:
        # a forked worker dies of the signal at once, as it would have without this handler:
        # raised as SystemExit inside it, its exit would wait on pipes its pool no longer reads
        # (Pool.terminate would hang)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    raise SystemExit(128 + signum)


def _cleanup_signals() -> set[int]:
    return {getattr(signal, name) for name in _CLEANUP_SIGNALS if hasattr(signal, name)}


def _block_before_fork() -> None:
    # A signal that reached the child between fork() and the reset below would be caught by
    # Python's handler, then dropped by the interpreter's after-fork clean-up: the worker would
    # live on, and Pool.terminate wait for it forever. Blocked, it waits in the kernel instead.
    signal.pthread_sigmask(signal.SIG_BLOCK, _cleanup_signals())


def _unblock_in_parent() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _cleanup_signals())


def _default_signals_in_child() -> None:
    """Forked children get the default action back, then any signal held while they forked."""
    for signum in _cleanup_signals():
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _cleanup_signals())


_installed = False


def install_signal_cleanup() -> None:
    """Turn SIGTERM and SIGHUP into a normal exit, so `finally` blocks and `atexit` run and the
    temporary folder goes (SIGINT already does this as KeyboardInterrupt). Forked children get the
    default action back."""
    global _installed, _handler_owner
    _handler_owner = os.getpid()
    for name in _CLEANUP_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) in (signal.SIG_DFL, None):
            signal.signal(signum, _exit_on_signal)
    if not _installed and hasattr(os, "register_at_fork") and hasattr(signal, "pthread_sigmask"):
        os.register_at_fork(before=_block_before_fork, after_in_parent=_unblock_in_parent,
                            after_in_child=_default_signals_in_child)
        _installed = True


@contextlib.contextmanager
def writing(into: Path) -> Iterator[None]:
    """Writes into `into` (a temporary folder) that fail become a `ScratchError`."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None and not os.fsdecode(exc.filename).startswith(os.fsdecode(into)):
            raise
        raise scratch_error(exc) from None


def scratch_error(exc: OSError) -> ScratchError:
    """A write into the temporary folder failed: say where, and what to do."""
    reason = exc.strerror or str(exc)
    hint = ("set TMPDIR to a folder with room" if exc.errno in (errno.ENOSPC, errno.EDQUOT)
            else "set TMPDIR to a writable folder")
    return ScratchError(f"cannot write temporary files in {temp_base()} ({reason}); {hint}")


__all__ = ["ScratchError", "clean_store", "folder", "install_signal_cleanup", "make_dir", "note_beside",
           "owner_alive", "owner_tag", "root", "scratch_error", "sweep", "sweep_beside"]


def clean_store(store: Path) -> None:
    """Remove the versions of a group store that no link shows (what a killed run left)."""
    current = store / STORE_CURRENT
    live = os.readlink(current) if current.is_symlink() else None
    try:
        entries = list(os.scandir(store))
    except OSError:
        return
    for entry in entries:
        if entry.name in (STORE_CURRENT, live):
            continue
        if entry.name in STORE_SLOTS or TAG_PATTERN.search(entry.name):
            match = TAG_PATTERN.search(entry.name)
            if match and owner_alive(int(match.group(1)), match.group(2)):
                continue
            _remove_path(Path(entry.path))


def _remove_path(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
