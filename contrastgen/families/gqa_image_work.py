"""One GQA image's questions through the engine: the unit of work of the GQA family's shards and
of the HTTP service's batches.

Why per image: the questions of an image share its scene index (built once, and only if some
question matches a template) and the set of its questions' texts (a perturbation must not repeat
one of them). `contrastgen generate`'s workers and the HTTP batch job both go through
`perturb_in_image`, so the two give the same result for the same question by construction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from contrastgen.engine import Engine
from contrastgen.groups.index import GroupIndex
from contrastgen.perturb import PerturbResult, normalize_question
from contrastgen.scene.corpus import Corpus
from contrastgen.scene.index import SceneIndex
from contrastgen.templates.patterns import Match


@dataclass(frozen=True)
class RunOptions:
    """What a run asks of every question: the same for all images."""

    corpus: Corpus
    max_k: int
    seed: int
    templates: list[str] | None = None  # template ids; None: all
    mode: str = "templates"  # engine.MODES: the templates, the program path, or both
    groups: GroupIndex | None = None  # `--groups`: the corpus's index, to look for two-image groups


class ImageWork:
    """What the questions of one image share; the scene index is built on first use."""

    def __init__(self, engine: Engine, image_id: str, graph: dict[str, Any] | None, texts: Iterable[str]):
        self.engine = engine
        self.image_id = image_id
        self.graph = graph
        self.existing = {normalize_question(t) for t in texts}
        self._scene: SceneIndex | None = None

    @property
    def scene(self) -> SceneIndex | None:
        if self._scene is None and self.graph is not None:
            self._scene = SceneIndex.build(self.image_id, self.graph, self.engine.lex)
        return self._scene


def perturb_in_image(work: ImageWork, question_id: str, question: dict[str, Any], options: RunOptions,
                     matches: list[Match] | None = None) -> list[PerturbResult]:
    """One question of the image under every template it matches (`matches`, if already known)."""
    return work.engine.perturb_question(
        question_id, question, work.graph, corpus=options.corpus, max_k=options.max_k,
        seed=options.seed, templates=options.templates, scene=work.scene if work.graph is not None else None,
        existing=work.existing, matches=matches, mode=options.mode)
