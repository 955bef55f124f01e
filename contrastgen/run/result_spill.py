"""A run's results kept on disk as shards finish, not in the driver's memory.

Why: the driver (the parent of the local pool, or Ray's driver) receives every shard's finished
bytes. Held in lists until the writers run, they were the part of its memory that grew fastest
with the input (0.9 GB per million questions with the templates, over 4 GB with `--mode both`).
Here each shard's results go to two append-only files as they arrive:

- the contrast-set lines, one frame per question, indexed by the question's input position so
  the JSONL is written in input order;
- the views, each shard's sorted by id as one run; the runs are merged once (a heap over the
  runs, each read through a small buffer) into one sorted file that every view writer then reads.

A local worker writes its shards' frames itself (`spill_shard`), into files of its own in the
run's folder, and hands the driver only where they are (`SpilledShard`) and its outcomes
tallied (`StatsTally.merge`): the bytes are encoded once and cross no pipe, and the driver, which
shares the CPUs with the workers, neither unpickles nor writes them. A Ray worker may run on
another machine, so its results still come back whole and the driver writes them
(`ResultSpill.add`).

The statistics are tallied per shard (`StatsTally`). The files live in a temporary folder (under
`TMPDIR`) removed when the run's `Generation` is collected or the process ends. A run over loaded
questions (the library's `generate()`, the HTTP service) keeps its results in memory.
"""

from __future__ import annotations

import heapq
import marshal
import os
import shutil
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contrastgen.datasets.packing import FRAME_HEADER, append_frame
from contrastgen.files import scratch
from contrastgen.results.generation import ShardResult
from contrastgen.results.stats import StatsTally
from contrastgen.results.view_bytes import ViewEntry

# Frames are gathered this large before a write: few system calls, little memory.
_FLUSH = 1 << 20
# Each sorted run is read through a buffer this large while the runs are merged (a 22M run has
# thousands of runs).
_RUN_BUFFER = 64 << 10


class _Appender:
    """An append-only frame file and its current end."""

    def __init__(self, path: Path):
        self.path = path
        try:
            # "x": two writers given one name (a worker's pid reused within a run) must fail
            # loudly, not truncate each other's frames.
            self._fh = path.open("xb")
        except FileExistsError:
            raise RuntimeError(f"{path} already exists: two writers of one run were given one name") from None
        except OSError as exc:
            raise scratch.scratch_error(exc) from None
        self._buffer = bytearray()
        self.size = 0  # bytes written or buffered

    def append(self, item: object) -> tuple[int, int]:
        start = self.size
        before = len(self._buffer)
        append_frame(self._buffer, item)
        self.size += len(self._buffer) - before
        if len(self._buffer) >= _FLUSH:
            self.flush()
        return start, self.size

    def append_frame(self, frame: bytes) -> None:
        """Append a frame already encoded (header included), as a merge copies it."""
        self._buffer += frame
        self.size += len(frame)
        if len(self._buffer) >= _FLUSH:
            self.flush()

    def flush(self) -> None:
        """The frames appended so far handed to the OS: another process may read them now, and
        they stay when this one is ended without closing the file (a pool worker)."""
        try:
            self._fh.write(self._buffer)
            self._fh.flush()  # the file object's own buffer too: a short write may wait there
        except OSError as exc:  # a full TMPDIR is a sentence, not a traceback
            raise scratch.scratch_error(exc) from None
        self._buffer.clear()

    def close(self) -> None:
        self.flush()
        try:
            self._fh.close()
        except OSError as exc:
            raise scratch.scratch_error(exc) from None


class _Cursor:
    """Reads the frames of one stretch of a file in order, through a small buffer of its own.

    Plain reads (`os.pread`), not a memory map: the pages of a mapped file count in the reading
    process's resident size once touched, so a pass over a 4 GB spill would look like 4 GB of
    memory; read into a buffer, the file stays in the kernel's page cache, reclaimable.
    """

    def __init__(self, fd: int, start: int, end: int, buffer: int):
        self.fd, self.pos, self.end, self.size = fd, start, end, buffer
        self.buf, self.at = b"", 0

    def _need(self, n: int) -> None:
        if len(self.buf) - self.at < n:
            rest = self.buf[self.at:]
            want = max(self.size, n - len(rest))
            chunk = os.pread(self.fd, min(want, self.end - self.pos), self.pos)
            self.pos += len(chunk)
            self.buf, self.at = rest + chunk, 0
            if len(self.buf) < n:
                raise OSError("spill file ends inside a frame")

    def __iter__(self) -> Iterator[tuple]:
        for item, _ in self.frames():
            yield item

    def frames(self) -> Iterator[tuple[tuple, bytes]]:
        """(item, its frame as stored): a merge compares items and copies frames unencoded."""
        header = FRAME_HEADER.size
        while self.at < len(self.buf) or self.pos < self.end:
            self._need(header)
            (size,) = FRAME_HEADER.unpack_from(self.buf, self.at)
            self._need(header + size)
            frame = self.buf[self.at:self.at + header + size]
            self.at += header + size
            yield marshal.loads(memoryview(frame)[header:]), frame


def _frames(path: Path) -> Iterator[tuple]:
    """Every frame of `path`, in order."""
    fd = os.open(path, os.O_RDONLY)
    try:
        yield from _Cursor(fd, 0, os.fstat(fd).st_size, 1 << 20)
    finally:
        os.close(fd)


class SpilledLines:
    """contrast_sets.jsonl's lines in input order, read back from the spill (re-iterable)."""

    def __init__(self, paths: list[Path], entries: list[tuple[int, int, str]]):
        # (file, offset, question id), in input order; `file` indexes `paths`
        self._paths, self._entries = paths, entries

    def question_ids(self) -> list[str]:
        """The questions that have lines, in input order."""
        return [qid for _, _, qid in self._entries]

    def __iter__(self) -> Iterator[bytes]:
        if not self._entries:
            return
        fds = [os.open(path, os.O_RDONLY) for path in self._paths]
        try:
            for file, offset, _ in self._entries:
                fd = fds[file]
                (size,) = FRAME_HEADER.unpack(os.pread(fd, FRAME_HEADER.size, offset))
                yield from marshal.loads(os.pread(fd, size, offset + FRAME_HEADER.size))
        finally:
            for fd in fds:
                os.close(fd)


class SpilledViews:
    """The views sorted by question id, read back from the merged file (re-iterable)."""

    def __init__(self, path: Path):
        self._path = path

    def __iter__(self) -> Iterator[ViewEntry]:
        for item in _frames(self._path):
            yield ViewEntry(*item)


def _append_shard(line_file: _Appender, view_file: _Appender, lines: Iterable[tuple[str, tuple[bytes, ...]]],
                  views: list[ViewEntry], positions: list[int]
                  ) -> tuple[list[tuple[int, int, str]], tuple[int, int] | None]:
    """One shard's lines (a frame per question) and views (sorted, one run) appended to the two
    files: (input position, offset, question id) of each question's frame, and the run's (start,
    end), None without views."""
    entries = [(position, line_file.append(qlines)[0], qid)
               for (qid, qlines), position in zip(lines, positions, strict=True)]
    run = None
    if views:
        start = view_file.size
        for entry in sorted(views, key=_key):
            view_file.append(tuple(entry))
        run = (start, view_file.size)
    return entries, run


@dataclass
class SpilledShard:
    """Where a worker wrote one shard's results (`spill_shard`): the driver keeps only this."""

    name: str  # the worker's files: lines-<name>.bin, views-<name>.bin in the run's folder
    lines: list[tuple[int, int, str]]  # (input position, offset, question id) of each question's frame
    views: tuple[int, int] | None  # the shard's sorted run of views: (start, end) in the views file


class _ShardWriter:
    """One process's two frame files in a run's folder, appended shard after shard."""

    def __init__(self, folder: Path, name: str):
        self.name = name
        self.lines = _Appender(folder / f"lines-{name}.bin")
        self.views = _Appender(folder / f"views-{name}.bin")

    def write(self, shard: ShardResult) -> SpilledShard:
        lines, run = _append_shard(self.lines, self.views, shard.lines, shard.views, shard.positions)
        # on disk before the driver hears of the shard: a pool worker is ended, not closed
        self.lines.flush()
        self.views.flush()
        return SpilledShard(self.name, lines, run)

    def close(self) -> None:
        self.lines.close()
        self.views.close()


# This process's writer per run folder (a forked worker inherits its parent's, so each is keyed
# by the process too).
_WRITERS: dict[tuple[Path, int], _ShardWriter] = {}


def spill_shard(state: tuple[Callable[[Any, list[str]], ShardResult], Any, Path, int], images: list[str]
                ) -> ShardResult:
    """`shard(context, images)` for `state` = (shard, context, folder, max_k), its lines and views
    written here into this process's files in `folder` and its outcomes tallied here: the result
    carries only where they are (`spilled`), the tally and its counts. A module-level function,
    for the pool."""
    shard, context, folder, max_k = state
    result = shard(context, images)
    result.tally = StatsTally(None, max_k)
    result.tally.add(result.outcomes)
    result.outcomes = []
    key = (folder, os.getpid())
    writer = _WRITERS.get(key)
    if writer is None:
        writer = _WRITERS[key] = _ShardWriter(folder, str(os.getpid()))
    result.spilled = writer.write(result)
    result.lines, result.views, result.positions = [], [], []
    return result


class ResultSpill:
    """Where the driver puts each shard's lines and views as they arrive, or notes where a worker
    put them."""

    def __init__(self) -> None:
        self.folder = scratch.make_dir("run-")
        self._finalizer = weakref.finalize(self, _remove, self.folder)
        self._lines = _Appender(self.folder / "lines.bin")
        self._views = _Appender(self.folder / "views.bin")
        # file 0 is this process's own; then one pair per worker that wrote shards (`spill_shard`)
        self._line_paths: list[Path] = [self._lines.path]
        self._view_paths: list[Path] = [self._views.path]
        self._file_of: dict[str, int] = {}
        self._runs: list[tuple[int, int, int]] = []  # (file, start, end) of each sorted run
        self.line_index: dict[int, tuple[int, int, str]] = {}  # input position -> (file, offset, question id)

    def add(self, lines: Iterable[tuple[str, tuple[bytes, ...]]], views: list[ViewEntry],
            positions: list[int]) -> None:
        """One shard's results: its (question id, lines) pairs with each question's input
        position, and its views (any order)."""
        entries, run = _append_shard(self._lines, self._views, lines, views, positions)
        for position, offset, qid in entries:
            self.line_index[position] = (0, offset, qid)
        if run is not None:
            self._runs.append((0, *run))

    def add_spilled(self, shard: SpilledShard) -> None:
        """One shard whose results a worker wrote into its own files."""
        file = self._file_of.get(shard.name)
        if file is None:
            file = self._file_of[shard.name] = len(self._line_paths)
            self._line_paths.append(self.folder / f"lines-{shard.name}.bin")
            self._view_paths.append(self.folder / f"views-{shard.name}.bin")
        for position, offset, qid in shard.lines:
            self.line_index[position] = (file, offset, qid)
        if shard.views is not None:
            self._runs.append((file, *shard.views))

    def finish(self) -> tuple[SpilledLines, SpilledViews, Iterator[ViewEntry]]:
        """Close the files and merge the view runs into one sorted file. Returns the lines, the
        views, and an iterator over the merged views as they are written (for checks that
        must see every view once, without a second pass)."""
        self._lines.close()
        self._views.close()
        writer = _WRITERS.pop((self.folder, os.getpid()), None)  # shards run in this process
        if writer is not None:
            writer.close()
        merged = _Appender(self.folder / "views.sorted.bin")

        def merging() -> Iterator[ViewEntry]:
            if self._runs:  # one descriptor per file, a cursor with a small buffer per run
                fds = [os.open(path, os.O_RDONLY) for path in self._view_paths]
                try:
                    runs = [_Cursor(fds[file], start, end, _RUN_BUFFER).frames() for file, start, end in self._runs]
                    for item, frame in heapq.merge(*runs, key=_key_of_frame):
                        merged.append_frame(frame)
                        yield ViewEntry(*item)
                finally:
                    for fd in fds:
                        os.close(fd)
            merged.close()
            for path in self._view_paths:
                path.unlink(missing_ok=True)

        entries = [self.line_index[position] for position in sorted(self.line_index)]
        self.line_index = {}
        return SpilledLines(self._line_paths, entries), SpilledViews(merged.path), merging()


def _key(entry: ViewEntry) -> str:
    return entry.key


def _key_of_frame(pair: tuple[tuple, bytes]) -> str:
    return pair[0][0]


def _remove(folder: Path) -> None:
    writer = _WRITERS.pop((folder, os.getpid()), None)  # a run that failed before `finish`
    try:
        if writer is not None:
            writer.close()
    except (OSError, scratch.ScratchError):  # the failure the run is ending on, likely a full TMPDIR
        pass
    finally:
        shutil.rmtree(folder, ignore_errors=True)
