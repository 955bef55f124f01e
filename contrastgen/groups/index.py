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
import random
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from contrastgen.datasets.packing import GraphJson
from contrastgen.language.lexicon import Lexicon

NAME, ATTRIBUTE, RELATION = "n", "a", "r"  # the three kinds of key
UNION_CACHE = 256  # merged postings, and intersections, kept per process


def key(kind: str, value: str) -> str:
    return f"{kind}:{value}"


@dataclass
class GroupIndex:
    """Postings of one corpus, and the graphs the candidates are read from."""

    image_ids: list[str]  # sorted: a posting's entries are positions in this list
    postings: dict[str, np.ndarray]  # key -> sorted int32 positions
    graphs: Mapping[str, dict[str, Any]]
    # a name's kinds' postings merged, for the names asked most ("animal": every kind of one)
    _unions: dict[frozenset[str], np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    # the intersections asked last (a record's pairs mostly need what its original needs)
    _found: dict[frozenset[frozenset[str]], np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    _shifts: dict[int, int] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, graphs: Mapping[str, dict[str, Any]], lex: Lexicon) -> GroupIndex:
        image_ids = sorted(graphs)
        lists: dict[str, list[int]] = defaultdict(list)
        keys_of_value: dict[tuple[str, str], str] = {}  # (kind, value as written) -> its key

        def keyed(kind: str, value: str) -> str:
            found = keys_of_value.get((kind, value))
            if found is None:
                clean = value.strip().lower()
                found = keys_of_value[kind, value] = key(kind, lex.canonical(clean) if kind == NAME else clean)
            return found

        for position, image_id in enumerate(image_ids):
            objects = graphs[image_id].get("objects", {}).values()
            values = {(NAME, o.get("name", "")) for o in objects}
            values.update((ATTRIBUTE, a) for o in objects for a in o.get("attributes") or ())
            values.update((RELATION, r.get("name", "")) for o in objects for r in o.get("relations") or ())
            for k in {keyed(kind, str(v)) for kind, v in values}:
                lists[k].append(position)
        postings = {k: np.asarray(v, dtype=np.int32) for k, v in sorted(lists.items())}
        return cls(image_ids, postings, graphs)

    def images_with_all(self, required: frozenset[frozenset[str]]) -> np.ndarray:
        """Positions of the images that have, for every requirement, at least one of its keys
        (a name may be said by any kind it denotes: the union of their postings). Intersected
        smallest first, so the cost follows the rarest requirement, not the corpus."""
        found = self._found.get(required)
        if found is None:
            found = self._intersect(required)
            if len(self._found) >= UNION_CACHE:
                self._found.pop(next(iter(self._found)))
            self._found[required] = found
        return found

    def _intersect(self, required: frozenset[frozenset[str]]) -> np.ndarray:
        sets = []
        for alternatives in required:
            union = self._unions.get(alternatives)
            if union is None:
                found = [self.postings[k] for k in sorted(alternatives) if k in self.postings]
                union = (np.empty(0, dtype=np.int32) if not found else found[0] if len(found) == 1
                         else np.unique(np.concatenate(found)))
                if len(self._unions) >= UNION_CACHE:
                    self._unions.pop(next(iter(self._unions)))
                self._unions[alternatives] = union
            if not len(union):
                return union
            sets.append(union)
        if not sets:
            return np.arange(len(self.image_ids), dtype=np.int32)
        sets.sort(key=len)
        out = sets[0]
        for s in sets[1:]:
            if not len(out):
                break
            out = np.intersect1d(out, s, assume_unique=True)
        return out

    def start_of(self, image_id: str, seed: int) -> int:
        """Where an image's walk over its candidates begins: its own place in the corpus, shifted
        by an amount drawn from the seed (the same for every image of a run)."""
        shift = self._shifts.get(seed)
        if shift is None:
            shift = self._shifts[seed] = random.Random(f"{seed}/groups").randrange(max(1, len(self.image_ids)))
        return (bisect.bisect_left(self.image_ids, image_id) + shift) % max(1, len(self.image_ids))

    def __reduce__(self):
        # graphs kept in a file by this machine's run travel as their JSON (a Ray task may run
        # in another process or node); dicts travel as they are
        graphs = self.graphs.subset(self.image_ids) if isinstance(self.graphs, GraphJson) else self.graphs
        return (GroupIndex, (self.image_ids, self.postings, graphs))
