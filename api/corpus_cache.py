"""Distractor statistics of single scene graphs, cached by content.

Why: a `/v1/perturb` request without a server corpus needs the statistics of its one graph, and
building them (a sparse co-occurrence matrix) costs more than perturbing the question. Clients
typically send several questions about the same image (GQA has ~13 per image), so the same
graph arrives again and again; keyed by its canonical bytes, it is built once. The cache is
bounded (least recently used out) and safe to share between worker threads.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from contrastgen.jsonio import dumps

if TYPE_CHECKING:
    from contrastgen.engine import Engine
    from contrastgen.scene.corpus import Corpus


class CorpusCache:
    def __init__(self, engine: Engine, size: int = 512):
        self.engine = engine
        self.size = size
        self._items: OrderedDict[bytes, Corpus] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def corpus_of(self, image_id: str, graph: dict[str, Any]) -> Corpus:
        """`engine.build_corpus({image_id: graph})`, computed once per distinct graph."""
        key = hashlib.blake2b(dumps([image_id, graph]), digest_size=16).digest()
        with self._lock:
            corpus = self._items.get(key)
            if corpus is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return corpus
            self.misses += 1
        corpus = self.engine.build_corpus({image_id: graph})
        with self._lock:
            self._items[key] = corpus
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return corpus
