"""The contrast-set engine for one GQA question: match -> ground -> propose and prove (template
handlers, program edits) -> rank (`contrastgen.perturb`).

Library entry points (the CLI and the HTTP service call these, through `contrastgen.run` for
whole datasets; neither holds generation logic of its own):

    engine = Engine.load()
    corpus = engine.build_corpus(scene_graphs)
    results = engine.perturb_question(qid, question, scene_graph, corpus=corpus, max_k=5, seed=0)
        # one PerturbResult per matched template (the two "Is the X Rel the Y" templates both
        # match the same question), each its own line of contrast_sets.jsonl
    result = engine.perturb(qid, question, scene_graph, ...)   # the first of those, for callers
        # that want one answer per question; pass templates=[...] to pick one
    gen = contrastgen.run.generate.generate(questions, scene_graphs, engine=engine, max_k=5, workers=2)

Perturbation ids are `<question id>_<template suffix><rank>` (`p` for a program edit).
"""

from contrastgen.engine.question import MODES, Engine
from contrastgen.perturb import PerturbResult, normalize_question

__all__ = ["MODES", "Engine", "PerturbResult", "normalize_question"]
