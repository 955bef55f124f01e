"""GQA-OOD from question files of any size, in two passes that never hold the questions parsed.

Why: `build_gqa_ood` takes every question parsed (about 6 KB each): 6.2 GiB for a million, well
over 100 GB for GQA's 22 million. The construction needs much less. The first pass needs only each
local group's answer counts, which decide the kept groups and their tail answers. The second pass
places each question in head or tail as it streams by. A kept question is written at once to a
spill file, serialised as the output holds it. The output files are then put together in
question-id order from an index: each id at a fixed width, an offset, a length and a split (about
40 bytes a question). That order is what the in-memory writer's sorted keys give, so the files are
byte-identical to `write_gqa_ood(build_gqa_ood(load_questions(...)))`.

The same index finds an id given twice: two equal ids are neighbours once the index is sorted. So a
duplicate is reported after the second pass, not as the file is read, naming the file of its second
occurrence as `load_questions` does.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from contrastgen.datasets.gqa import gqa_json, json_files, validate_question
from contrastgen.datasets.streaming import stream_records
from contrastgen.errors import InputError
from contrastgen.jsonio import atomic_dir, keyed_object, write_chunks, write_json
from contrastgen.ood.gqa_ood import (
    GROUPS_FILE,
    NOTHING_KEPT,
    STATS_FILE,
    GqaOodConfig,
    local_group,
    select_groups,
)

PathLike = str | os.PathLike[str]
_NONE, _HEAD, _TAIL = 0, 1, 2  # where a question goes
_SPLITS = (("all", (_HEAD, _TAIL)), ("head", (_HEAD,)), ("tail", (_TAIL,)))
_ROWS_AT_ONCE = 1 << 16  # index rows turned into Python integers at a time


def run_gqa_ood_streamed(questions: PathLike, out_dir: PathLike, config: GqaOodConfig | None = None) -> dict[str, Any]:
    """Build GQA-OOD from a GQA question file (or directory of shards) into `out_dir`, atomically;
    return its stats."""
    config = config or GqaOodConfig()
    files = json_files(Path(questions))
    histograms, total, ungrouped, width = _count(files, str(questions))
    split = select_groups(histograms, config, total=total, ungrouped=ungrouped)
    tails = split.tails()
    with tempfile.TemporaryFile(prefix="contrastgen-gqa-ood-") as spill:
        index = _place(files, tails, width, spill)
        _no_id_twice(index, files)
        places = index.places
        n_all, n_head, n_tail = (int(np.isin(places, wanted).sum()) for _, wanted in _SPLITS)
        if not n_all:
            raise InputError(NOTHING_KEPT)
        split.question_counts = (n_all, n_head, n_tail)
        spill.flush()
        with atomic_dir(out_dir) as tmp:
            for name, wanted in _SPLITS:
                write_chunks(tmp / f"{name}.json", _object(index, wanted, spill.fileno()))
            write_json(tmp / GROUPS_FILE, {k: g.to_json() for k, g in split.groups.items() if g.imbalanced},
                       indent=True)
            write_json(tmp / STATS_FILE, split.stats(), indent=True)
    return split.stats()


def _count(files: list[Path], given: str) -> tuple[dict[str, Counter], int, int, int]:
    """Pass one: each local group's answer counts, the questions, those without a group, and the
    widest id (in UTF-8 bytes)."""
    histograms: dict[str, Counter] = {}
    total = ungrouped = 0
    width = 1
    for file in files:
        for qid, q in stream_records(file, "question"):
            q = validate_question(qid, q, path=str(file))
            answer = q.get("answer")
            if not isinstance(answer, str):
                raise InputError("question has no answer", path=given, record=f"question {qid}")
            total += 1
            width = max(width, len(qid.encode("utf-8")))
            group = local_group(q)
            if group is None:
                ungrouped += 1
            else:
                histograms.setdefault(group, Counter())[answer] += 1
    if not total:
        raise InputError("no questions found", path=given)
    return histograms, total, ungrouped, width


class _Index:
    """Every question's id (fixed width), file, split and, if kept, its record's place in the spill."""

    def __init__(self, width: int):
        self.width = width
        self._ids = bytearray()
        self._files = array("H")
        self._places = array("b")
        self._offsets = array("q")
        self._sizes = array("q")

    def add(self, qid: str, file: int, place: int, offset: int, size: int) -> None:
        self._ids += qid.encode("utf-8").ljust(self.width, b"\0")
        self._files.append(file)
        self._places.append(place)
        self._offsets.append(offset)
        self._sizes.append(size)

    def freeze(self) -> None:
        """The columns as arrays, and the questions in id order (stable: the first of two equal
        ids stays first)."""
        self.ids = np.frombuffer(self._ids, dtype=f"S{self.width}")
        self.files = np.frombuffer(self._files, dtype=np.uint16)
        self.places = np.frombuffer(self._places, dtype=np.int8)
        self.offsets = np.frombuffer(self._offsets, dtype=np.int64)
        self.sizes = np.frombuffer(self._sizes, dtype=np.int64)
        self.order = np.argsort(self.ids, kind="stable")


def _place(files: list[Path], tails: dict[str, set[str]], width: int, spill: Any) -> _Index:
    """Pass two: each question's split, and each kept one's record written to `spill`."""
    if len(files) > np.iinfo(np.uint16).max:
        raise InputError(f"more than {np.iinfo(np.uint16).max} question files", path=str(files[0].parent))
    index = _Index(width)
    offset = 0
    for n, file in enumerate(files):
        for qid, q in stream_records(file, "question"):
            q = validate_question(qid, q, path=str(file))
            group = local_group(q)
            if group not in tails:
                index.add(qid, n, _NONE, -1, 0)
                continue
            record = gqa_json(q)
            spill.write(record)
            index.add(qid, n, _TAIL if q["answer"] in tails[group] else _HEAD, offset, len(record))
            offset += len(record)
    index.freeze()
    return index


def _no_id_twice(index: _Index, files: list[Path]) -> None:
    """An id given twice is refused, naming the file of its second occurrence; of several, the one
    read first."""
    ids = index.ids[index.order]
    same = np.flatnonzero(ids[1:] == ids[:-1])
    if same.size:
        second = int(index.order[same + 1].min())
        qid = bytes(index.ids[second]).rstrip(b"\0").decode("utf-8")
        raise InputError("question id appears twice", path=str(files[int(index.files[second])]),
                         record=f"question {qid}")


def _object(index: _Index, wanted: tuple[int, ...], spill: int) -> Iterator[bytes]:
    """One split's questions as `jsonio.dumps` writes {id: record}. The records are read back one
    by one (`os.pread`), so the spill's pages are the system's cache, not this process's memory."""
    return keyed_object(_records(index, index.order[np.isin(index.places[index.order], wanted)], spill))


def _records(index: _Index, rows: np.ndarray, spill: int) -> Iterator[tuple[str, bytes]]:
    """(id, record) of the index's `rows`, in their order."""
    for block in range(0, len(rows), _ROWS_AT_ONCE):
        for row in rows[block:block + _ROWS_AT_ONCE].tolist():
            qid = bytes(index.ids[row]).rstrip(b"\0").decode("utf-8")
            yield qid, os.pread(spill, int(index.sizes[row]), int(index.offsets[row]))
