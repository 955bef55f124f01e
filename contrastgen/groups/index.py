"""An inverted index over the corpus: object kind, attribute and relation -> the images that have one.

Why: a group needs an image J on which the pair's programs can be executed with a definite
answer, and a program whose words say "the white cat on the table" can only be executed where a
cat, something white and an `on` edge are annotated. Intersecting those postings leaves the few
images worth executing, instead of every image of the corpus. The postings are sorted numpy
arrays of image positions (4 bytes per entry), built once per run before the workers fork, so
they are shared copy-on-write; the graphs themselves stay where the run keeps them.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from contrastgen.datasets.packing import GraphJson
from contrastgen.datasets.question_spill import OffsetFile
from contrastgen.language.lexicon import Lexicon
from contrastgen.scene.index import SceneIndex

NAME, ATTRIBUTE, RELATION = "n", "a", "r"  # the three kinds of key
# What a builder made, handed between processes (`IndexBuilder.take_made`): each image's keys, and
# where in the builder's records file each image's lookup record is (offset, length)
RecordsMade = tuple[dict[str, tuple[str, ...]], dict[str, tuple[int, int]]]
WINDOW_ENTRIES = 64  # of the leading postings in a walk's first window (fewer, wider windows cost less)
MERGED_KEPT = 4096  # requirements of several keys whose merged postings a process keeps
_NONE = np.zeros(0, dtype=np.int32)


def key(kind: str, value: str) -> str:
    return f"{kind}:{value}"


@dataclass
class GroupIndex:
    """Postings of one corpus, and the graphs the candidates are read from (or, made as the run
    read them, their lookup records: `SceneIndex.lookup_record`)."""

    image_ids: list[str]  # sorted: a posting's entries are positions in this list
    postings: dict[str, np.ndarray]  # key -> sorted int32 positions
    graphs: Mapping[str, dict[str, Any]]
    records: Mapping[str, bytes] | None = None
    _shifts: dict[int, int] = field(default_factory=dict, repr=False, compare=False)
    _merged: dict[frozenset[str], np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, graphs: Mapping[str, dict[str, Any]], lex: Lexicon) -> GroupIndex:
        builder = IndexBuilder(lex)
        for image_id in graphs:
            builder.add(image_id, graphs[image_id])
        return builder.finish(graphs)

    def walk(self, required: frozenset[frozenset[str]], start: int) -> Iterator[int]:
        """Positions of the images that have, for every requirement, at least one of its keys (a
        name may be said by any kind it denotes), ascending from `start` to the corpus's end,
        then from its beginning up to `start`: each once.

        Lazy, because a pair executes at most a few candidates: the requirement with the shortest
        postings leads, read window by window from `start` (each window twice as wide as the one
        before), and its entries in a window are kept where every other requirement's postings
        hold them, found by binary search. A walk that stops early costs a few windows whatever
        the corpus size; one that reads to the end (no image has everything) costs the leading
        postings' length times a logarithm, never the merging of a common name's long postings.
        """
        size = len(self.image_ids)
        if not size:
            return
        start %= size
        if not required:
            yield from range(start, size)
            yield from range(start)
            return
        sets = [self._any_of(alternatives) for alternatives in required]
        if not all(len(p) for p in sets):
            return
        sets.sort(key=len)
        lead, others = sets[0], sets[1:]
        # a first window that holds about WINDOW_ENTRIES of the leading postings' entries
        width = max(1, WINDOW_ENTRIES * size // len(lead))
        for low, high in ((start, size), (0, start)):
            while low < high:
                end = min(high, low + width)
                found = lead[lead.searchsorted(low):lead.searchsorted(end)]
                for postings in others:
                    if not len(found):
                        break
                    at = postings.searchsorted(found)
                    at[at == len(postings)] = 0  # past the end: held only if equal, which it is not
                    found = found[postings[at] == found]
                yield from found.tolist()
                low, width = end, 2 * width

    def _any_of(self, alternatives: frozenset[str]) -> np.ndarray:
        """The images that have at least one of the keys: one key's postings as they are, several
        keys' merged once per process and remembered (a name's kinds, a relation and its
        opposite: requirements recur across pairs, and merging them per window was most of a
        walk's cost)."""
        if len(alternatives) == 1:
            return self.postings.get(next(iter(alternatives)), _NONE)
        merged = self._merged.get(alternatives)
        if merged is None:
            parts = [self.postings[k] for k in alternatives if k in self.postings]
            merged = np.unique(np.concatenate(parts)) if parts else _NONE
            if len(self._merged) >= MERGED_KEPT:
                self._merged.clear()
            self._merged[alternatives] = merged
        return merged

    def candidates(self, required: frozenset[frozenset[str]], image_id: str, seed: int,
                   limit: int) -> tuple[list[str], int]:
        """The first `limit` images other than `image_id` on its walk (from `start_of`), and how
        many images the walk met to find them (the image itself included: a count of at most one
        says the corpus has no image but that one with everything asked)."""
        # the image itself is met at most once, so limit + 1 images hold every candidate
        met = [self.image_ids[p] for p in itertools.islice(self.walk(required, self.start_of(image_id, seed)),
                                                              limit + 1)]
        return [j for j in met if j != image_id][:limit], len(met)

    def start_of(self, image_id: str, seed: int) -> int:
        """Where an image's walk over its candidates begins: its own place in the corpus, shifted
        by an amount drawn from the seed (the same for every image of a run)."""
        shift = self._shifts.get(seed)
        if shift is None:
            shift = self._shifts[seed] = random.Random(f"{seed}/groups").randrange(max(1, len(self.image_ids)))
        return (bisect.bisect_left(self.image_ids, image_id) + shift) % max(1, len(self.image_ids))

    def __reduce__(self):
        # graphs kept in a file by this machine's run travel as their JSON (a Ray task may run
        # in another process or node); dicts travel as they are; records in a file stay here
        # (a candidate's scene is then built from its graph, to the same index)
        graphs = self.graphs.subset(self.image_ids) if isinstance(self.graphs, GraphJson) else self.graphs
        return (GroupIndex, (self.image_ids, self.postings, graphs))


class IndexBuilder:
    """The index made one graph at a time, as a run reads them: the run's load parses every graph
    once, and building the index after it would parse them all again. With a `RecordFile`, each
    graph's lookup record is written too, which the workers read instead of the graph."""

    def __init__(self, lex: Lexicon, records: RecordFile | None = None):
        self.lex, self.records = lex, records
        self._keys: dict[str, tuple[str, ...]] = {}
        # (value as written) -> its key, one table per kind: most values recur in every graph
        self._tables: dict[str, dict[Any, str]] = {NAME: {}, ATTRIBUTE: {}, RELATION: {}}

    def _keyed(self, kind: str, value: Any) -> str:
        """The key of a value not yet in its kind's table."""
        clean = str(value).strip().lower()
        found = key(kind, self.lex.canonical(clean) if kind == NAME else clean)
        if type(value) is str:  # only a string keys the table: 1, 1.0 and True are equal yet written apart
            self._tables[kind][value] = found
        return found

    def add(self, image_id: str, graph: dict[str, Any]) -> None:
        names, attributes, relations = (self._tables[k] for k in (NAME, ATTRIBUTE, RELATION))
        keyed = self._keyed
        keys: set[str] = set()
        objects = graph.get("objects", {}).values()
        for o in objects:
            name = o.get("name", "")
            keys.add(names.get(name) or keyed(NAME, name))
            for a in o.get("attributes") or ():
                keys.add(attributes.get(a) or keyed(ATTRIBUTE, a))
        # a graph has a hundred-odd relations of a dozen names: each name is looked up once
        for rel in {r.get("name", "") for o in objects for r in o.get("relations") or ()}:
            keys.add(relations.get(rel) or keyed(RELATION, rel))
        self._keys[image_id] = tuple(keys)
        if self.records is not None:
            self.records.add(image_id, SceneIndex.lookup_record(graph, self.lex))

    def take_made(self) -> RecordsMade:
        """The keys and records made since the last call, taken out of this builder: a helper
        process indexes some of a run's graphs and hands them to the run's builder (`absorb`)."""
        keys, self._keys = self._keys, {}
        return keys, self.records.take_places() if self.records is not None else {}

    def absorb(self, made: RecordsMade, records: Path) -> None:
        """Add what another builder made (`take_made`), its records read from its file `records`."""
        keys, places = made
        self._keys.update(keys)
        if self.records is not None:
            self.records.absorb(records, places)

    def finish(self, graphs: Mapping[str, dict[str, Any]]) -> GroupIndex:
        """The index of the graphs added (`graphs`: the same ones, where candidates are read)."""
        image_ids = sorted(self._keys)
        lists: dict[str, list[int]] = defaultdict(list)
        for position, image_id in enumerate(image_ids):
            for k in self._keys[image_id]:
                lists[k].append(position)
        postings = {k: np.asarray(v, dtype=np.int32) for k, v in sorted(lists.items())}
        if self.records is not None:
            self.records.close()
        return GroupIndex(image_ids, postings, graphs, self.records)


class RecordFile(Mapping[str, bytes]):
    """Lookup records appended to a file as the graphs are read, found by image id (each worker
    reads the ones its candidates need)."""

    def __init__(self, path: Path):
        self._out: BinaryIO | None = path.open("wb")
        self._size = 0  # bytes written (asking the file would be a system call per record)
        self._where: dict[str, tuple[int, int]] = {}
        self._file = OffsetFile(path)

    def add(self, image_id: str, record: bytes) -> None:
        assert self._out is not None, "the records were closed"
        self._where[image_id] = (self._size, len(record))
        self._out.write(record)
        self._size += len(record)

    def take_places(self) -> dict[str, tuple[int, int]]:
        """Where the records added since the last call are, written out to the file and no longer
        found here (another process copies them into its own file: `absorb`)."""
        assert self._out is not None, "the records were closed"
        self._out.flush()
        places, self._where = self._where, {}
        return places

    def absorb(self, path: Path, places: dict[str, tuple[int, int]]) -> None:
        """Append the records that the file at `path` holds at `places` (one stretch of it: a
        helper's batch), found here by the same image ids."""
        assert self._out is not None, "the records were closed"
        if not places:
            return
        start = min(offset for offset, _ in places.values())
        end = max(offset + length for offset, length in places.values())
        with path.open("rb") as fh:
            fh.seek(start)
            data = fh.read(end - start)
        base = self._size - start
        self._out.write(data)
        self._size += len(data)
        for image_id, (offset, length) in places.items():
            self._where[image_id] = (base + offset, length)

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None

    def __getitem__(self, image_id: str) -> bytes:
        return self._file.read(*self._where[image_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)
