"""Outputs that appear whole or not at all: one file, one directory, or a group of files.

Why: a run over a million questions that fails (or is killed) at record 900,000 must not leave a
half-written `contrast_sets.jsonl` that a later evaluation would read, nor lose the previous
results. At every instant an output path holds the complete old result or the complete new one:

- a file is written under a temporary name beside it and renamed onto it (one step);
- a directory is built under a temporary name beside it and exchanged with the old one in one
  step (`renameat2(RENAME_EXCHANGE)` on Linux), then the old one, now under the temporary name,
  is removed. Where the exchange is not available (another system, a file system without it) the
  old directory is renamed aside first: for that moment the path is empty;
- a group of files that belong together (`augment`'s GQA and LXMERT files) is written as one
  version folder in a store beside the first file (`.NAME.versions/a` or `/b`); each file of the
  group is a symbolic link through the store's `current` link, and swapping `current` changes
  every file of the group at once.

Every temporary name carries the owner's pid and start time and is written down in its
temporary folder first (`contrastgen.files.scratch`), so whatever a killed run leaves beside an output
is removed by the next run of any command. A failed write (a full disk, a read-only folder, a
folder it may not write) becomes an `OutputError` naming the output, never a traceback.

`CONTRASTGEN_FAULT_STEP` is the fault-injection hook the tests use: set to N, the process kills
itself (SIGKILL, so no cleanup runs) just before its Nth file-system step here; set to `N:ENOSPC`
(or any errno name), that step fails with that error instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import shutil
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

from contrastgen.errors import ContrastgenError
from contrastgen.files import scratch

FAULT_ENV = "CONTRASTGEN_FAULT_STEP"
_WRITE_BUFFER = 1 << 20  # bytes buffered per output file before a write
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_steps_taken = 0
# temporary directories this process is filling: files written inside them need no note of their own
_building: set[Path] = set()


class OutputError(ContrastgenError):
    """An output could not be written; the old result, if any, is untouched."""

    def __init__(self, path: Path | str, exc: OSError):
        reason = exc.strerror or str(exc)
        hint = {errno.ENOSPC: "; free some space or write elsewhere",
                errno.EDQUOT: "; free some space or write elsewhere",
                errno.EROFS: "; the file system is read-only: write elsewhere",
                errno.EACCES: "; no permission to write there", errno.EPERM: "; no permission to write there",
                }.get(exc.errno or 0, "")
        super().__init__(f"cannot write {path}: {reason}{hint} (nothing was changed there)")
        self.path = str(path)
        self.cause = exc


def _step(label: str) -> None:
    """Count a file-system step; the fault-injection hook acts here."""
    global _steps_taken
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    _steps_taken += 1
    at, _, action = spec.partition(":")
    if not at.isdigit() or _steps_taken != int(at):
        return
    if not action or action == "KILL":
        os.kill(os.getpid(), signal.SIGKILL)
    code = getattr(errno, action, errno.EIO)
    raise OSError(code, os.strerror(code))


def _temp_name(dest: Path, suffix: str) -> Path:
    """A name beside `dest` that says whose it is (see `scratch.TAG_PATTERN`)."""
    return dest.parent / f".{dest.name}.cg-{scratch.owner_tag()}-{secrets.token_hex(4)}.{suffix}"


def _inside_building(path: Path) -> bool:
    return any(folder in path.parents for folder in _building)


def _note(path: Path) -> None:
    if not _inside_building(path):
        scratch.note_beside(path)


def _make_parent(dest: Path) -> None:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(dest, exc) from None


def _remove_any(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """A binary file open for writing under a temporary name beside `path`; renamed onto `path`
    only when the block ends without an error."""
    dest = Path(path)
    _make_parent(dest)
    tmp = _temp_name(dest, "tmp")
    try:
        _note(tmp)
        _step("create the new file")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        # the view writers write one record at a time: with the default 8 KiB buffer, a 1M-question
        # run's 1.4 GB of views took 170k system calls; 1 MiB halves the CPU time of writing them
        with os.fdopen(fd, "wb", buffering=_WRITE_BUFFER) as fh:
            yield fh
            _step("write the new file to disk")
            fh.flush()
            os.fsync(fh.fileno())
        _step("rename the new file into place")
        os.replace(tmp, dest)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError) and exc.filename in (None, str(tmp)):
            raise OutputError(dest, exc) from None
        raise


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step; False where the system cannot."""
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


_LIBC: ctypes.CDLL | None = None


def _libc() -> ctypes.CDLL | None:
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(None, use_errno=True)
        except OSError:  # pragma: no cover - a system without a C library to load
            return None
    return _LIBC


def replace_path(new: Path, dest: Path) -> None:
    """Put `new` at `dest`, whatever `dest` holds, in one step where the system allows; the old
    `dest` is removed."""
    if not os.path.lexists(dest):
        _step("rename the new version into place")
        os.rename(new, dest)
        return
    _step("exchange the new version with the old")
    if _exchange(new, dest):
        _step("remove the old version")
        _remove_any(new)  # `new` now names the old version
        return
    aside = _temp_name(dest, "old")
    _note(aside)
    _step("move the old version aside")
    os.rename(dest, aside)
    try:
        _step("rename the new version into place")
        os.rename(new, dest)
    except OSError:
        os.rename(aside, dest)  # the old version back: the path is never left empty by an error
        raise
    _step("remove the old version")
    _remove_any(aside)


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Build a directory under a temporary name beside `path` and swap it in on success."""
    dest = Path(path)
    _make_parent(dest)
    scratch.sweep_beside(dest.parent)
    tmp = _temp_name(dest, "tmp")
    try:
        _note(tmp)
        _step("make the new directory")
        tmp.mkdir()
        _building.add(tmp)
        yield tmp
        _building.discard(tmp)
        replace_path(tmp, dest)
    except BaseException as exc:
        _building.discard(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OutputError) and Path(exc.path).is_relative_to(tmp):
            raise OutputError(dest, exc.cause) from None  # the user named `dest`, not its insides
        if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError) and (
                exc.filename is None or str(dest.parent) in str(exc.filename)):
            raise OutputError(dest, exc) from None
        raise


# --- groups of files ------------------------------------------------------------------------

STORE_SUFFIX = scratch.STORE_SUFFIX
CURRENT = scratch.STORE_CURRENT
_SLOTS = scratch.STORE_SLOTS


def store_of(first: Path) -> Path:
    """The folder that holds a group's versions, beside its first file."""
    return first.parent / f".{first.name}{STORE_SUFFIX}"


def _member(i: int, dest: Path) -> str:
    return f"{i}.{dest.name}"


def _link_target(store: Path, i: int, dest: Path) -> str:
    return os.path.relpath(store / CURRENT / _member(i, dest), dest.parent)


def _point(link: Path, target: str) -> None:
    """Make `link` a symbolic link to `target`, replacing what is there in one step."""
    tmp = _temp_name(link, "lnk")
    _note(tmp)
    _step("make a link")
    os.symlink(target, tmp)
    _step("rename the link into place")
    os.replace(tmp, link)


def _keep_showing(dest: Path, live_slot: Path, name: str) -> None:
    """Put what `dest` shows now into the live version, so `dest` can become a link to it
    without changing what it shows."""
    kept = live_slot / name
    _step("keep the old file in the live version")
    with contextlib.suppress(FileNotFoundError):
        kept.unlink()
    try:
        os.link(dest, kept, follow_symlinks=True)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        shutil.copy2(dest, kept)


@contextlib.contextmanager
def atomic_group(paths: Sequence[str | os.PathLike[str]]) -> Iterator[list[Path]]:
    """Write several files that must change together. Yields where to write each (inside a
    new version folder); on success every path switches to the new version in one step."""
    dests = [Path(p) for p in paths]
    if len({os.path.abspath(d) for d in dests}) != len(dests):
        raise ContrastgenError(f"the outputs must be different files: {', '.join(map(str, dests))}")
    for dest in dests:
        _make_parent(dest)
        if dest.is_dir() and not dest.is_symlink():
            raise OutputError(dest, IsADirectoryError(errno.EISDIR, "is a directory"))
    store = store_of(dests[0])
    try:
        _step("make the version store")
        store.mkdir(exist_ok=True)
        scratch.note_beside(store)
    except OSError as exc:
        raise OutputError(dests[0], exc) from None
    current = store / CURRENT
    live = os.readlink(current) if current.is_symlink() else None
    if live not in _SLOTS:
        live = None
    new_slot_name = _SLOTS[1] if live == _SLOTS[0] else _SLOTS[0]
    building = _temp_name(store / "version", "tmp")
    try:
        _note(building)
        _step("make the new version")
        building.mkdir()
        _building.add(building)
        yield [building / _member(i, d) for i, d in enumerate(dests)]
        _building.discard(building)
        _commit(dests, store, building, live, new_slot_name)
    except BaseException as exc:
        _building.discard(building)
        shutil.rmtree(building, ignore_errors=True)
        if live is None:
            # a first write that failed (a full disk) leaves no empty store beside the output;
            # rmdir removes it only if nothing, not even an earlier version, is in it
            with contextlib.suppress(OSError):
                store.rmdir()
        if isinstance(exc, OutputError) and Path(exc.path).is_relative_to(building):
            raise OutputError(dests[0], exc.cause) from None
        if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError):
            raise OutputError(dests[0], exc) from None
        raise


def _commit(dests: list[Path], store: Path, building: Path, live: str | None, new_slot_name: str) -> None:
    new_slot = store / new_slot_name
    if os.path.lexists(new_slot):  # a version no link shows (a run stopped before its swap)
        _step("remove a version no link shows")
        _remove_any(new_slot)
    _step("name the new version")
    os.rename(building, new_slot)
    current = store / CURRENT
    # every file of the group becomes a link through `current`, still showing the old version
    if live is None:
        live = _SLOTS[1] if new_slot_name == _SLOTS[0] else _SLOTS[0]
        live_slot = store / live
        if os.path.lexists(live_slot):
            _remove_any(live_slot)
        _step("make a version for the old files")
        live_slot.mkdir()
        for i, dest in enumerate(dests):
            if os.path.lexists(dest):
                _keep_showing(dest, live_slot, _member(i, dest))
        _point(current, live)
    live_slot = store / live
    for i, dest in enumerate(dests):
        target = _link_target(store, i, dest)
        if dest.is_symlink() and os.readlink(dest) == target:
            continue
        if os.path.lexists(dest):
            _keep_showing(dest, live_slot, _member(i, dest))
        else:
            _step("remove a file no link shows")
            with contextlib.suppress(FileNotFoundError):
                (live_slot / _member(i, dest)).unlink()
        _point(dest, target)
    # the one step that changes every file of the group
    _point(current, new_slot_name)
    _step("remove the old version")
    _remove_any(live_slot)
