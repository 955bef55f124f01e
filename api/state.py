"""What a server process loads once at start-up and shares across requests.

Why once: the lexicon, the compiled templates and an optional corpus of scene graphs take from
tenths of a second to many seconds to load; per request that would dominate every latency. They
are read-only after loading, so worker threads share them without locks.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from contrastgen.api.corpus_cache import CorpusCache
from contrastgen.api.settings import Settings

from contrastgen.datasets.gqa import load_scene_graphs
from contrastgen.engine import Engine
from contrastgen.scene.corpus import Corpus
from contrastgen.templates.patterns import Template, load_templates
from contrastgen.verify.rules import VerifyRules, load_rules

log = logging.getLogger("contrastgen.api")


@dataclass(frozen=True)
class EngineState:
    engine: Engine
    templates: tuple[Template, ...]
    # Distractor statistics from the operator's `--scene-graphs`; None when none were given.
    corpus: Corpus | None
    corpus_images: int
    verify_rules: VerifyRules
    single_graph_corpora: CorpusCache

    @property
    def template_ids(self) -> frozenset[str]:
        return frozenset(t.id for t in self.templates)


def load_state(settings: Settings) -> EngineState:
    """Load the engine, the templates and the server's corpus (if any); log what took how long."""
    start = time.perf_counter()
    engine = Engine.load()
    templates = tuple(load_templates())
    corpus, images = None, 0
    if settings.scene_graphs:
        graphs = load_scene_graphs(settings.scene_graphs)
        corpus, images = engine.build_corpus(graphs), len(graphs)
    log.info("engine loaded", extra={"event": "startup", "templates": len(templates),
                                     "corpus_images": images,
                                     "ms": round((time.perf_counter() - start) * 1000, 1)})
    return EngineState(engine=engine, templates=templates, corpus=corpus, corpus_images=images,
                       verify_rules=load_rules(), single_graph_corpora=CorpusCache(engine))
