"""Questions streamed from disk and packed per image: what a large generation run holds of them.

Why: parsed with `gqa.load_questions`, a GQA question record takes about 6 KB of memory, so a
million of them cost 6 GiB before any work starts, and the worker processes forked from that
parent copy every page they touch. A generation run needs, per image, the text of every question
(to recognise duplicates) and the whole record only of questions a template may match. This
module streams the files (ijson's C backend, so memory does not grow with the file), validates
every record exactly as `gqa` does, and keeps one compact blob per image: question ids and texts,
plus the JSON of the records worth keeping. A worker unpacks the blob of the image it works on.

The packed records are serialised as the views hold them (`datasets.gqa.gqa_json`), so a worker writes
an original into `original.json` and the other views without serialising it again.

Scene graphs are packed the same way (`pack_scene_graphs`): a parsed graph costs about ten times
its JSON (75k synthetic graphs, 0.5 GB of JSON, take 5 GiB as dicts), and every image's graph is
read by one worker once. So each validated graph is kept as its JSON bytes and parsed by the
worker that works on the image; the corpus needs only the objects' names, kept apart.
"""

from __future__ import annotations

import marshal
import os
import struct
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ijson
import orjson

from contrastgen.datasets.gqa import gqa_json, json_files, validate_question, validate_scene_graph
from contrastgen.errors import InputError

# (question id, question text, the record as sorted-key JSON or None if no template may match)
PackedQuestion = tuple[str, str, bytes | None]


@dataclass
class PackedQuestions:
    order: list[str]  # every question id, in input order
    blobs: dict[str, bytes]  # image id -> its PackedQuestions as frames (`append_frame`), in input order
    full: int  # questions whose whole record was kept

    def __len__(self) -> int:
        return len(self.order)

    @property
    def image_ids(self) -> list[str]:
        """In order of first appearance."""
        return list(self.blobs)

    def questions_of(self, image_id: str) -> list[PackedQuestion]:
        return read_frames(self.blobs[image_id])


# Each packed question is appended to its image's buffer as it streams past, so the loader never
# holds a million (id, text, record) tuples: they cost three objects each, and at 1M questions
# the tuples, not the records' bytes, were most of the packing process's 2.4 GiB. marshal is the
# fastest encoder of a tuple of str and bytes; a blob never leaves the run's Python version.
FRAME_HEADER = struct.Struct("<I")  # a frame's length, before it


def append_frame(buffer: bytearray, item: Any) -> None:
    """Append `item` (str, bytes, int and tuples of them) to `buffer` as one length-prefixed frame."""
    data = marshal.dumps(item)
    buffer += FRAME_HEADER.pack(len(data))
    buffer += data


def read_frames(blob: bytes | memoryview) -> list[Any]:
    """Every frame `append_frame` wrote into `blob`, in order."""
    return list(iter_frames(blob))


def iter_frames(blob: bytes | memoryview) -> Iterator[Any]:
    """The frames of `blob` one at a time (a spill file read without holding all of it)."""
    view, pos, end = memoryview(blob), 0, len(blob)
    while pos < end:
        (size,) = FRAME_HEADER.unpack_from(view, pos)
        pos += FRAME_HEADER.size
        yield marshal.loads(view[pos:pos + size])
        pos += size


def pack_questions(path: str | os.PathLike[str], keep_full: Callable[[str], bool]) -> PackedQuestions:
    """Stream GQA questions (one file or a directory of shards) into a PackedQuestions."""
    groups: dict[str, bytearray] = defaultdict(bytearray)
    order: list[str] = []
    seen: set[str] = set()
    full = 0
    for file in json_files(Path(path)):
        for qid, q in stream_records(file, "question"):
            if qid in seen:
                raise InputError("question id appears twice", path=str(file), record=f"question {qid}")
            seen.add(qid)
            q = validate_question(qid, q, path=str(file))
            text = q["question"]
            record = gqa_json(q) if keep_full(text) else None
            full += record is not None
            append_frame(groups[q["imageId"]], (qid, text, record))
            order.append(qid)
    if not order:
        raise InputError("no questions found", path=str(path))
    del seen
    blobs = {image: bytes(groups.pop(image)) for image in list(groups)}  # one copy alive at a time
    return PackedQuestions(order=order, blobs=blobs, full=full)


class GraphJson(Mapping[str, dict]):
    """Validated scene graphs by image id, each held as its JSON and parsed when looked up.

    A Mapping, so everything that reads `graphs.get(image_id)` works unchanged; `object_names`
    gives the corpus what it needs without parsing every graph again. Subclasses say where the
    JSON is: in memory (`PackedGraphs`) or in a file (`spilled.SpilledGraphs`).
    """

    _keys: Mapping[str, Any]  # image id -> where its JSON is, in input order
    _names: dict[str, list[str]]  # image id -> its objects' names, as written

    def _json(self, image_id: str) -> bytes:
        raise NotImplementedError

    def __getitem__(self, image_id: str) -> dict[str, Any]:
        return orjson.loads(self._json(image_id))

    def __contains__(self, image_id: object) -> bool:
        return image_id in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def object_names(self) -> Iterable[tuple[str, list[str]]]:
        """(image id, its objects' names) for every graph, in input order."""
        return self._names.items()

    def subset(self, image_ids: Iterable[str]) -> PackedGraphs:
        """The graphs of some images (those present), in memory: what a remote task is sent."""
        blobs = {i: self._json(i) for i in image_ids if i in self._keys}
        return PackedGraphs(blobs, {i: self._names[i] for i in blobs})


class PackedGraphs(GraphJson):
    """The graphs' JSON in memory."""

    def __init__(self, blobs: dict[str, bytes], names: dict[str, list[str]]):
        self.blobs = self._keys = blobs
        self._names = names

    def _json(self, image_id: str) -> bytes:
        return self.blobs[image_id]


def pack_scene_graphs(path: str | os.PathLike[str]) -> PackedGraphs:
    """Stream GQA scene graphs (one file or a directory of them) into a PackedGraphs, validating
    each exactly as `gqa.load_scene_graphs` does; memory holds one parsed graph at a time."""
    blobs: dict[str, bytes] = {}
    names: dict[str, list[str]] = {}
    for file in json_files(Path(path)):
        for image_id, g in stream_records(file, "image"):
            g = validate_scene_graph(image_id, g, path=str(file))
            blobs[image_id] = orjson.dumps(g)
            # interned: the same few thousand names recur across every image
            names[image_id] = [sys.intern(o["name"]) for o in g["objects"].values()]
    if not blobs:
        raise InputError("no scene graphs found", path=str(path))
    return PackedGraphs(blobs, names)


def stream_records(file: Path, what: str) -> Iterator[tuple[str, Any]]:
    """(id, record) pairs of one file's top-level object, read incrementally; `what` the records
    are keyed by ("question", "image"), for the errors."""
    try:
        fh = file.open("rb")
    except FileNotFoundError:
        raise InputError("file not found", path=str(file)) from None
    except IsADirectoryError:
        raise InputError("expected a file, got a directory", path=str(file)) from None
    with fh:
        first = _first_byte(fh)
        if first is None:
            raise InputError("file is empty", path=str(file))
        if first != b"{":
            raise InputError(f"expected an object keyed by {what} id", path=str(file))
        fh.seek(0)
        last = None
        try:
            for qid, q in ijson.kvitems(fh, "", use_float=True):
                last = str(qid)
                yield last, q
        except ijson.JSONError as exc:
            after = f" after {what} {last}" if last is not None else ""
            raise InputError(f"malformed JSON{after} ({exc})", path=str(file)) from None


def _first_byte(fh) -> bytes | None:
    while chunk := fh.read(4096):
        stripped = chunk.lstrip()
        if stripped:
            return stripped[:1]
    return None
