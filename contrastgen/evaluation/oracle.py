"""The oracle baseline: answers computed from the scene graph.

On contrast perturbations it executes the perturbation's evidence query, so it must score 100%
there (a test holds it to that). On original GQA questions it matches a template, grounds the
question like the generator does and answers with the template's answerer, the same code that
checks gold answers before perturbing; where GQA's answer and the graph's disagree, the
disagreement rate tells a user how much of a model's drop may be annotation noise. Questions
outside the templates, or that the graph cannot decide, get None (the oracle abstains).
"""

from __future__ import annotations

from typing import Any

from contrastgen.engine import Engine
from contrastgen.perturb import Refusal
from contrastgen.scene.index import SceneIndex
from contrastgen.terminal.progress import Advance, noop
from contrastgen.verify.checker import index_graph
from contrastgen.verify.query import execute_query
from contrastgen.verify.rules import load_rules


def oracle_answer(question: dict[str, Any], scene_graph: dict[str, Any] | None, engine: Engine,
                  *, scene: SceneIndex | None = None) -> str | None:
    if scene_graph is None:
        return None
    contrast = question.get("contrast")
    if isinstance(contrast, dict) and isinstance(contrast.get("evidence"), dict):
        try:
            return execute_query(contrast["evidence"]["query"],
                                 index_graph(str(question.get("imageId", "")), scene_graph), load_rules())
        except Exception:  # noqa: BLE001 - a malformed evidence block: abstain, the verifier reports it
            return None
    text = str(question.get("question", ""))
    for m in engine.match(text):
        if scene is None:
            scene = SceneIndex.build(str(question.get("imageId", "")), scene_graph, engine.lex)
        try:
            ctx = engine.context("", question, m, scene)
        except Refusal:
            continue
        try:
            answer = engine.bindings[m.template.id].answer(ctx)
        except Refusal:
            continue
        if answer is not None:
            return answer
    return None


def oracle_answers(questions: dict[str, dict], scene_graphs: dict[str, dict],
                   engine: Engine | None = None, advance: Advance = noop) -> dict[str, str | None]:
    """Oracle answers for many questions (one SceneIndex per image); `advance(1)` per question."""
    engine = engine or Engine.load()
    scenes: dict[str, SceneIndex] = {}
    out: dict[str, str | None] = {}
    for qid, q in questions.items():
        image_id = str(q.get("imageId", ""))
        graph = scene_graphs.get(image_id)
        if graph is not None and image_id not in scenes and not q.get("contrast"):
            scenes[image_id] = SceneIndex.build(image_id, graph, engine.lex)
        out[qid] = oracle_answer(q, graph, engine, scene=scenes.get(image_id))
        advance(1)
    return out
