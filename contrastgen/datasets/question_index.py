"""What a streamed OOD build remembers of each question: its id, its file, and where its record
was spilled to disk. About 30-40 bytes a question, so 22 million fit in well under a gigabyte.

Why this shape: the outputs are keyed by question id, and `jsonio.dumps` sorts keys, so a streamed
build must write its records in id order though it reads them in file order. Ids are kept at a
fixed width in one numpy array, sorted once (`argsort`); records go to a spill file as they stream
by and are read back one by one in id order (`os.pread`), so their pages are the system's cache,
not the process's memory. The same sort finds an id given twice: two equal ids are neighbours.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import numpy as np

from contrastgen.errors import InputError, duplicate_id
from contrastgen.jsonio import keyed_object

ROWS_AT_ONCE = 1 << 16  # rows turned into Python objects at a time
_MAX_FILES = int(np.iinfo(np.uint16).max)


class QuestionIndex:
    """Question ids in reading order, at a fixed width that grows with the longest id seen, with
    the number of the file (in `files`) each was read from."""

    def __init__(self, files: list[Path]):
        if len(files) > _MAX_FILES + 1:
            raise InputError(f"more than {_MAX_FILES + 1} question files", path=str(files[0].parent))
        self.paths = files
        self.width = 8
        self._ids = bytearray()
        self._files = array("H")

    def add(self, qid: str, file: int) -> None:
        raw = qid.encode("utf-8")
        if len(raw) > self.width:
            self._widen(len(raw))
        self._ids += raw.ljust(self.width, b"\0")
        self._files.append(file)

    def _widen(self, needed: int) -> None:
        # doubling keeps re-padding rare: at most a few times per build
        width = max(needed, 2 * self.width)
        old = np.frombuffer(self._ids, dtype=f"S{self.width}")
        self._ids = bytearray(old.astype(f"S{width}").tobytes())
        self.width = width

    def __len__(self) -> int:
        return len(self._files)

    def freeze(self) -> None:
        """The columns as arrays, and the rows in id order (stable: the first of two equal ids
        stays first)."""
        self.ids = np.frombuffer(self._ids, dtype=f"S{self.width}")
        self.files = np.frombuffer(self._files, dtype=np.uint16)
        self.order = np.argsort(self.ids, kind="stable")

    def no_id_twice(self) -> None:
        """An id given twice is refused, naming the file of its second occurrence; of several, the
        one read first."""
        ids = self.ids[self.order]
        same = np.flatnonzero(ids[1:] == ids[:-1])
        if same.size:
            k = int(np.argmin(self.order[same + 1]))
            first, second = sorted((int(self.order[same[k]]), int(self.order[same[k] + 1])))
            raise InputError(duplicate_id("question", self.qid(second), f"in {self.paths[int(self.files[first])]}",
                                          f"in {self.paths[int(self.files[second])]}"),
                             path=str(self.paths[int(self.files[second])]), record=f"question {self.qid(second)}")

    def qid(self, row: int) -> str:
        return bytes(self.ids[row]).rstrip(b"\0").decode("utf-8")

    def qids(self, rows: np.ndarray) -> Iterator[tuple[int, str]]:
        """(row, id) for `rows`, in their order."""
        for block in range(0, len(rows), ROWS_AT_ONCE):
            chunk = rows[block:block + ROWS_AT_ONCE]
            for row, raw in zip(chunk.tolist(), self.ids[chunk].tolist(), strict=True):
                yield row, raw.rstrip(b"\0").decode("utf-8")


class RecordSpill:
    """Records written to a temporary file in reading order, one slot per index row (None: no
    record kept), and read back by row."""

    def __init__(self, fh: IO[bytes]):
        self._fh = fh
        self._offsets = array("q")
        self._sizes = array("q")
        self._end = 0

    def add(self, record: bytes | None) -> None:
        if record is None:
            self._offsets.append(-1)
            self._sizes.append(0)
            return
        self._fh.write(record)
        self._offsets.append(self._end)
        self._sizes.append(len(record))
        self._end += len(record)

    def freeze(self) -> None:
        self._fh.flush()
        self.offsets = np.frombuffer(self._offsets, dtype=np.int64)
        self.sizes = np.frombuffer(self._sizes, dtype=np.int64)

    def read(self, row: int) -> bytes:
        return os.pread(self._fh.fileno(), int(self.sizes[row]), int(self.offsets[row]))


def keyed_records(index: QuestionIndex, spill: RecordSpill, rows: np.ndarray) -> Iterator[bytes]:
    """`{id: record}` over `rows` (given in id order) as `jsonio.dumps` writes it."""
    return keyed_object((qid, spill.read(row)) for row, qid in index.qids(rows))
