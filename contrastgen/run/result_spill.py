"""A run's results kept on disk as shards finish, not in the driver's memory.

Why: the driver (the parent of the local pool, or Ray's driver) receives every shard's finished
bytes. Held in lists until the writers run, they were the part of its memory that grew fastest
with the input (0.9 GB per million questions with the templates, over 4 GB with `--mode both`).
Here each shard's results go to two append-only files as they arrive:

- the contrast-set lines, one frame per question, indexed by the question's input position so
  the JSONL is written in input order;
- the views, each shard's sorted by id as one run; the runs are merged once (a heap over the
  runs, each read through a small buffer) into one sorted file that every view writer then reads.

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
from collections.abc import Iterable, Iterator
from pathlib import Path

from contrastgen.datasets.packing import FRAME_HEADER, append_frame
from contrastgen.files import scratch
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
        self._fh = path.open("wb")
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
        try:
            self._fh.write(self._buffer)
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

    def __init__(self, path: Path, entries: list[tuple[int, str]]):
        self._path, self._entries = path, entries  # (offset, question id), in input order

    def question_ids(self) -> list[str]:
        """The questions that have lines, in input order."""
        return [qid for _, qid in self._entries]

    def __iter__(self) -> Iterator[bytes]:
        if not self._entries:
            return
        fd = os.open(self._path, os.O_RDONLY)
        try:
            for offset, _ in self._entries:
                (size,) = FRAME_HEADER.unpack(os.pread(fd, FRAME_HEADER.size, offset))
                yield from marshal.loads(os.pread(fd, size, offset + FRAME_HEADER.size))
        finally:
            os.close(fd)


class SpilledViews:
    """The views sorted by question id, read back from the merged file (re-iterable)."""

    def __init__(self, path: Path):
        self._path = path

    def __iter__(self) -> Iterator[ViewEntry]:
        for item in _frames(self._path):
            yield ViewEntry(*item)


class ResultSpill:
    """Where the driver puts each shard's lines and views as they arrive."""

    def __init__(self) -> None:
        self.folder = scratch.make_dir("run-")
        self._finalizer = weakref.finalize(self, _remove, self.folder)
        self._lines = _Appender(self.folder / "lines.bin")
        self._views = _Appender(self.folder / "views.bin")
        self._runs: list[tuple[int, int]] = []
        self.line_index: dict[int, tuple[int, str]] = {}  # input position -> (offset, question id)

    def add(self, lines: Iterable[tuple[str, tuple[bytes, ...]]], views: list[ViewEntry],
            positions: list[int]) -> None:
        """One shard's results: its (question id, lines) pairs with each question's input
        position, and its views (any order)."""
        for (qid, qlines), position in zip(lines, positions, strict=True):
            self.line_index[position] = (self._lines.append(qlines)[0], qid)
        if views:
            start = self._views.size
            for entry in sorted(views, key=_key):
                self._views.append(tuple(entry))
            self._runs.append((start, self._views.size))

    def finish(self) -> tuple[SpilledLines, SpilledViews, Iterator[ViewEntry]]:
        """Close the files and merge the view runs into one sorted file. Returns the lines, the
        views, and an iterator over the merged views as they are written (for checks that
        must see every view once, without a second pass)."""
        self._lines.close()
        self._views.close()
        merged = _Appender(self.folder / "views.sorted.bin")

        def merging() -> Iterator[ViewEntry]:
            if self._runs:  # one descriptor, a cursor with a small buffer per run
                fd = os.open(self._views.path, os.O_RDONLY)
                try:
                    runs = [_Cursor(fd, start, end, _RUN_BUFFER).frames() for start, end in self._runs]
                    for item, frame in heapq.merge(*runs, key=_key_of_frame):
                        merged.append_frame(frame)
                        yield ViewEntry(*item)
                finally:
                    os.close(fd)
            merged.close()
            self._views.path.unlink()

        entries = [self.line_index[position] for position in sorted(self.line_index)]
        self.line_index = {}
        return SpilledLines(self._lines.path, entries), SpilledViews(merged.path), merging()


def _key(entry: ViewEntry) -> str:
    return entry.key


def _key_of_frame(pair: tuple[tuple, bytes]) -> str:
    return pair[0][0]


def _remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
