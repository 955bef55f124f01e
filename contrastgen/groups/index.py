"""An inverted index over the corpus: object kind, attribute and relation -> the images that have one.

Why: a group needs an image J on which the pair's programs can be executed with a definite
answer, and a program whose words say "the white cat on the table" can only be executed where a
cat, something white and an `on` edge are annotated. Intersecting those postings leaves the few
images worth executing, instead of every image of the corpus. The postings are sorted numpy
arrays of image positions (4 bytes per entry), built once per run before the workers fork, so
they are shared copy-on-write; the graphs themselves stay where the run keeps them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from contrastgen.datasets.packing import GraphJson
from contrastgen.language.lexicon import Lexicon

NAME, ATTRIBUTE, RELATION = "n", "a", "r"  # the three kinds of key


def key(kind: str, value: str) -> str:
    return f"{kind}:{value}"


@dataclass
class GroupIndex:
    """Postings of one corpus, and the graphs the candidates are read from."""

    image_ids: list[str]  # sorted: a posting's entries are positions in this list
    postings: dict[str, np.ndarray]  # key -> sorted int32 positions
    graphs: Mapping[str, dict[str, Any]]

    @classmethod
    def build(cls, graphs: Mapping[str, dict[str, Any]], lex: Lexicon) -> GroupIndex:
        image_ids = sorted(graphs)
        lists: dict[str, list[int]] = defaultdict(list)
        canonical: dict[str, str] = {}
        for position, image_id in enumerate(image_ids):
            for k in sorted(_keys_of(graphs[image_id], lex, canonical)):
                lists[k].append(position)
        postings = {k: np.asarray(v, dtype=np.int32) for k, v in lists.items()}
        return cls(image_ids, postings, graphs)

    def images_with_all(self, required: Iterable[frozenset[str]]) -> np.ndarray:
        """Positions of the images that have, for every requirement, at least one of its keys
        (a name may be said by any kind it denotes: the union of their postings). Intersected
        smallest first, so the cost follows the rarest requirement, not the corpus."""
        sets = []
        for alternatives in required:
            found = [self.postings[k] for k in sorted(alternatives) if k in self.postings]
            if not found:
                return np.empty(0, dtype=np.int32)
            sets.append(found[0] if len(found) == 1 else np.unique(np.concatenate(found)))
        if not sets:
            return np.arange(len(self.image_ids), dtype=np.int32)
        sets.sort(key=len)
        out = sets[0]
        for s in sets[1:]:
            if not len(out):
                break
            out = np.intersect1d(out, s, assume_unique=True)
        return out

    def __reduce__(self):
        # graphs kept in a file by this machine's run travel as their JSON (a Ray task may run
        # in another process or node); dicts travel as they are
        graphs = self.graphs.subset(self.image_ids) if isinstance(self.graphs, GraphJson) else self.graphs
        return (GroupIndex, (self.image_ids, self.postings, graphs))


def _keys_of(graph: dict[str, Any], lex: Lexicon, canonical: dict[str, str]) -> set[str]:
    keys: set[str] = set()
    for o in graph.get("objects", {}).values():
        name = str(o.get("name", "")).strip().lower()
        kind = canonical.get(name)
        if kind is None:
            kind = canonical[name] = lex.canonical(name)
        keys.add(key(NAME, kind))
        for a in o.get("attributes") or ():
            keys.add(key(ATTRIBUTE, str(a).strip().lower()))
        for r in o.get("relations") or ():
            keys.add(key(RELATION, str(r.get("name", "")).strip().lower()))
    return keys
