"""The pieces a large run's loader is made of: frames, and graphs held as JSON.

Why: parsed with `gqa.load_questions`, a GQA question record takes about 6 KB of memory and a
scene graph about ten times its JSON (75k synthetic graphs, 0.5 GB of JSON, take 5 GiB as dicts),
so a million questions cost gigabytes before any work starts, and forked workers copy every page
they touch. A generation run streams its files instead (`streaming.stream_records`, so memory
does not grow with the file), validates every record exactly as `gqa` does, and keeps
what it needs as bytes: questions as length-prefixed `marshal` frames, graphs as their JSON
(`GraphJson`), parsed by the worker that works on the image. `spilled` builds the run's inputs
from these pieces, on disk.
"""

from __future__ import annotations

import marshal
import struct
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

# Questions are appended as frames as they stream past, so the loader never holds a million
# (id, text, record) tuples: they cost three objects each, and at 1M questions the tuples, not the
# records' bytes, made the loading process 2.4 GiB. marshal is the fastest encoder of tuples of
# str, bytes and int; a frame never leaves the run's Python version.
FRAME_HEADER = struct.Struct("<I")  # a frame's length, before it


def append_frame(buffer: bytearray, item: Any) -> None:
    """Append `item` (str, bytes, int and tuples of them) to `buffer` as one length-prefixed frame."""
    data = marshal.dumps(item)
    buffer += FRAME_HEADER.pack(len(data))
    buffer += data


def read_frames(blob: bytes) -> list[Any]:
    """Every frame `append_frame` wrote into `blob`, in order."""
    view, pos, end, out = memoryview(blob), 0, len(blob), []
    while pos < end:
        (size,) = FRAME_HEADER.unpack_from(view, pos)
        pos += FRAME_HEADER.size
        out.append(marshal.loads(view[pos:pos + size]))
        pos += size
    return out


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
