"""Corpus statistics over all input scene graphs: which object kinds appear together.

Why: a distractor should be plausible in the scene ("Is there a wall near the puddle?", not "Is
there a giraffe near the puddle?" in a kitchen), so X' is drawn from the kinds that co-occur with
Y in *other* scene graphs (the paper's recipe). Computed once per run as a sparse image x kind
incidence matrix and its Gram matrix, so a 75,000-image corpus costs about a second, not a
Python loop over every pair of objects.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from contrastgen.datasets.packing import GraphJson
from contrastgen.language.lexicon import Lexicon

TOP_COOCCURRING = 40


@dataclass
class Corpus:
    kinds: list[str]
    index: dict[str, int]
    frequency: np.ndarray  # images per kind
    cooccurrence: sparse.csr_matrix  # kinds x kinds, images in which both appear
    _top: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _name_rank: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        rank = np.empty(len(self.kinds), dtype=np.int64)
        rank[np.argsort(np.array(self.kinds, dtype=object), kind="stable")] = np.arange(len(self.kinds))
        self._name_rank = rank

    @classmethod
    def build(cls, canonical_kinds_per_image: Iterable[Iterable[str]]) -> Corpus:
        index: dict[str, int] = {}
        rows, cols = [], []
        for r, kinds in enumerate(canonical_kinds_per_image):
            for k in sorted(set(kinds)):
                c = index.setdefault(k, len(index))
                rows.append(r)
                cols.append(c)
        n_images = (rows[-1] + 1) if rows else 0
        m = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)),
                              shape=(n_images, len(index)))
        co = (m.T @ m).tocsr()
        freq = np.asarray(m.sum(axis=0)).ravel()
        kinds = [""] * len(index)
        for k, i in index.items():
            kinds[i] = k
        return cls(kinds=kinds, index=index, frequency=freq, cooccurrence=co)

    @classmethod
    def from_graphs(cls, scene_graphs: Mapping[str, dict], lex: Lexicon) -> Corpus:
        canon = functools.lru_cache(maxsize=None)(lex.canonical)
        if isinstance(scene_graphs, GraphJson):  # the names were kept apart: no graph is parsed
            names = scene_graphs.object_names()
        else:
            names = ((i, [o["name"] for o in g["objects"].values()]) for i, g in scene_graphs.items())
        return cls.build([canon(n.strip().lower()) for n in image_names]
                         for _, image_names in sorted(names, key=_first))

    def cooccurring(self, kind: str) -> tuple[str, ...]:
        """Kinds that appear in images with `kind`, most frequent first (ties by name)."""
        if kind in self._top:
            return self._top[kind]
        i = self.index.get(kind)
        if i is None:
            out: tuple[str, ...] = ()
        else:
            start, end = self.cooccurrence.indptr[i], self.cooccurrence.indptr[i + 1]
            cols = self.cooccurrence.indices[start:end]
            counts = self.cooccurrence.data[start:end]
            keep = cols != i
            cols, counts = cols[keep], counts[keep]
            # most frequent first, ties by name: lexsort's last key is the primary one
            order = np.lexsort((self._name_rank[cols], -counts))[:TOP_COOCCURRING]
            out = tuple(self.kinds[j] for j in cols[order])
        self._top[kind] = out
        return out


def _first(pair: tuple[str, Any]) -> str:
    return pair[0]
