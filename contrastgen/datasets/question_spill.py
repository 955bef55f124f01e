"""A run's inputs streamed into files, so the driver's memory does not grow with the questions.

Why: held in memory, even packed, a run's questions cost about 0.4 GB per million plus the list
of their ids, and its graphs their JSON; GQA's 22 million questions would need tens of GB in the
driver. Here the questions stream into one append-only file, cut into the run's shards as they
arrive (an image's shard is fixed when it first appears), and the graphs into another with an
index by image id. The driver keeps offsets, the image ids, and one 8-byte hash per question id;
a worker reads its shard's questions and its images' graphs from the files. Each question carries
its input position, so the output is written in input order without a list of every id.

The checks are the whole-file loaders' own: a question id given twice is found from the hashes
(and named by a second pass over the input, with the file of its second occurrence), and a
perturbation id can only collide with an input id that contains "_", so those few are kept.
"""

from __future__ import annotations

import os
import sys
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from contrastgen.datasets.base import QuestionItem
from contrastgen.datasets.gqa import (
    gqa_json,
    validate_question,
    validate_scene_graph,
)
from contrastgen.datasets.inputs import json_files
from contrastgen.datasets.packing import GraphJson, append_frame, read_frames
from contrastgen.datasets.streaming import stream_records
from contrastgen.errors import InputError, duplicate_id

# A shard's frames are written out once its buffer holds this much.
_FLUSH = 256 << 10


class OffsetFile:
    """An append-only file read back by offset, with one descriptor per process (forked workers
    open their own)."""

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None
        self._pid = -1

    def read(self, offset: int, length: int) -> bytes:
        if self._pid != os.getpid():
            self._fd, self._pid = os.open(self.path, os.O_RDONLY), os.getpid()
        assert self._fd is not None
        return os.pread(self._fd, length, offset)

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "_fd": None, "_pid": -1}


@dataclass
class SpilledQuestions:
    """A QuestionSource over the questions file: shards of images, each a list of file chunks."""

    store: OffsetFile
    shard_images: list[list[str]]  # per shard, its images in order of first appearance
    shard_chunks: list[list[tuple[int, int]]]  # per shard, (offset, length) of its frames
    count: int
    full: int  # questions whose whole record was kept
    suspicious_ids: set[str]  # input ids a perturbation id could equal (they contain "_")
    _shard_of: dict[str, int] = field(default_factory=dict, repr=False)
    _cached: tuple[int, dict[str, list[QuestionItem]], dict[str, int]] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return self.count

    @property
    def image_ids(self) -> list[str]:
        return [image for images in self.shard_images for image in images]

    def _shard(self, image_id: str) -> tuple[dict[str, list[QuestionItem]], dict[str, int]]:
        if not self._shard_of:
            self._shard_of = {image: s for s, images in enumerate(self.shard_images) for image in images}
        s = self._shard_of[image_id]
        if self._cached is None or self._cached[0] != s:  # a worker reads its shard once
            items: dict[str, list[QuestionItem]] = {image: [] for image in self.shard_images[s]}
            positions: dict[str, int] = {}
            data = b"".join(self.store.read(offset, length) for offset, length in self.shard_chunks[s])
            for position, image, qid, text, record in read_frames(data):
                items[image].append((qid, text, record))
                positions[qid] = position
            self._cached = (s, items, positions)
        return self._cached[1], self._cached[2]

    def questions_of(self, image_id: str) -> list[QuestionItem]:
        return self._shard(image_id)[0][image_id]

    def position_of(self, image_id: str, question_id: str) -> int:
        """The question's place in the input (the output's order)."""
        return self._shard(image_id)[1][question_id]


def spill_questions(path: str | os.PathLike[str], keep_full: Callable[[str], bool], folder: Path,
                    shard_size: int) -> SpilledQuestions:
    """Stream GQA questions into `folder`/questions.bin, each validated as `gqa.load_questions`
    validates it; `keep_full` says whose whole record a template may need."""
    shard_of: dict[str, int] = {}
    shard_images: list[list[str]] = []
    buffers: list[bytearray] = []
    chunks: list[list[tuple[int, int]]] = []
    hashes = array("q")
    suspicious: set[str] = set()
    position = full = 0
    out_path = folder / "questions.bin"
    with out_path.open("wb") as fh:
        def flush(s: int) -> None:
            chunks[s].append((fh.tell(), len(buffers[s])))
            fh.write(buffers[s])
            buffers[s].clear()

        for file in json_files(path):
            for qid, q in stream_records(file, "question"):
                hashes.append(hash(qid))
                if "_" in qid:
                    suspicious.add(qid)
                q = validate_question(qid, q, path=str(file))
                text = q["question"]
                record = gqa_json(q) if keep_full(text) else None
                full += record is not None
                image = q["imageId"]
                s = shard_of.get(image)
                if s is None:
                    s = shard_of[image] = len(shard_of) // shard_size
                    if s == len(shard_images):
                        shard_images.append([])
                        buffers.append(bytearray())
                        chunks.append([])
                    shard_images[s].append(image)
                append_frame(buffers[s], (position, image, qid, text, record))
                position += 1
                if len(buffers[s]) >= _FLUSH:
                    flush(s)
        for s in range(len(buffers)):
            if buffers[s]:
                flush(s)
    if not position:
        raise InputError("no questions found", path=str(path))
    _check_unique(hashes, path)
    return SpilledQuestions(OffsetFile(out_path), shard_images, chunks, position, full, suspicious)


def _check_unique(hashes: array, path: str | os.PathLike[str]) -> None:
    """A question id given twice: found from the hashes, named by a second pass over the ids."""
    values = np.frombuffer(hashes, dtype=np.int64)
    ordered = np.sort(values)
    clashes = set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())
    if not clashes:
        return
    seen: dict[str, str] = {}
    for file in json_files(path):
        for n, (qid, _) in enumerate(stream_records(file, "question"), 1):
            if hash(qid) in clashes:
                if qid in seen:
                    raise InputError(duplicate_id("question", qid, seen[qid], f"record {n} of {file}"),
                                     path=str(file), record=f"question {qid}")
                seen[qid] = f"record {n} of {file}"


class SpilledGraphs(GraphJson):
    """The graphs' JSON in `folder`/graphs.bin, found by the index of offsets."""

    def __init__(self, store: OffsetFile, index: dict[str, tuple[int, int]], names: dict[str, list[str]]):
        self.store, self.index = store, index
        self._keys, self._names = index, names

    def _json(self, image_id: str) -> bytes:
        return self.store.read(*self.index[image_id])


def spill_scene_graphs(path: str | os.PathLike[str], folder: Path,
                       each: Callable[[str, dict[str, Any]], None] | None = None) -> SpilledGraphs:
    """Stream GQA scene graphs into `folder`/graphs.bin, each validated as `gqa.load_scene_graphs`
    validates it; memory holds one parsed graph at a time. `each(image_id, graph)` is called with
    every validated graph (what else the run derives from every graph is made in this one parse)."""
    spill = GraphSpill(path, folder, each)
    for _ in spill.batches(1 << 30):
        pass
    return spill.graphs()


GraphSlice = tuple[int, int]  # (offset, length) of one graph's JSON in the spill's file


class GraphSpill:
    """GQA scene graphs streamed into `folder`/graphs.bin, given out in batches as they land.

    Why batches: a caller whose workers read graphs back can start them on the first batch while
    the rest of the file is still being read (the reading is one process's work), and a batch's
    slices are on disk, flushed, when it is given; workers forked before the spill ends know
    only what the batch tells them, so a batch is the slices themselves."""

    def __init__(self, path: str | os.PathLike[str], folder: Path,
                 each: Callable[[str, dict[str, Any]], None] | None = None):
        self.path, self.out_path, self.each = path, folder / "graphs.bin", each
        self.index: dict[str, GraphSlice] = {}
        self.names: dict[str, list[str]] = {}
        self._done = False

    def batches(self, size: int) -> Iterator[list[GraphSlice]]:
        """The slices of every `size` graphs, in input order, each batch readable once given."""
        index, names, path = self.index, self.names, self.path
        seen_in: dict[str, tuple[Path, int]] = {}  # image id -> where it was first given
        batch: list[GraphSlice] = []
        with self.out_path.open("wb") as fh:
            for file in json_files(path):
                for n, (image_id, g) in enumerate(stream_records(file, "image"), 1):
                    if image_id in seen_in:
                        first, m = seen_in[image_id]
                        raise InputError(duplicate_id("image", image_id, f"record {m} of {first}", f"record {n} of {file}"),
                                         path=str(file), record=f"image {image_id}")
                    seen_in[image_id] = (file, n)
                    g = validate_scene_graph(image_id, g, path=str(file))
                    data = orjson.dumps(g)
                    where = index[image_id] = (fh.tell(), len(data))
                    fh.write(data)
                    names[image_id] = [sys.intern(o["name"]) for o in g["objects"].values()]
                    if self.each is not None:
                        self.each(image_id, g)
                    batch.append(where)
                    if len(batch) >= size:
                        fh.flush()
                        yield batch
                        batch = []
            if not index:
                raise InputError("no scene graphs found", path=str(path))
            fh.flush()
            if batch:
                yield batch
        self._done = True

    def graphs(self) -> SpilledGraphs:
        """Every graph by image id; once `batches` has run to its end."""
        assert self._done, "the spill has not been read to its end"
        return SpilledGraphs(OffsetFile(self.out_path), self.index, self.names)


def read_graph_slices(store_path: Path, slices: list[GraphSlice]) -> Iterator[dict[str, Any]]:
    """The graphs at `slices` of a spill's file, parsed, in the slices' order (one read for a
    batch: its slices are contiguous in the file)."""
    with store_path.open("rb") as fh:
        start = slices[0][0]
        end = slices[-1][0] + slices[-1][1]
        fh.seek(start)
        data = memoryview(fh.read(end - start))
    for offset, length in slices:
        yield orjson.loads(data[offset - start:offset - start + length])
