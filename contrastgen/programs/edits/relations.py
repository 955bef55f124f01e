"""Edits of a relation: a `relate` or `verify rel` turned to its opposite, or to another spatial relation.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from contrastgen.datasets.gqa_program import Step, reference_name, relation_of, split_reference
from contrastgen.perturb import Proposal, Ranking
from contrastgen.programs.edits.question import EditedQuestion
from contrastgen.programs.wording import replace, said_once
from contrastgen.scene.ground import denoted_ids


class RelationEdit:
    """A relation's opposite (rules/relations.tsv), or for a spatial relation another one."""

    name = "relation"
    last = False

    def applies(self, step: Step) -> bool:
        return step.operation in ("relate", "verify rel")

    def propose(self, q: EditedQuestion, index: int, rng: random.Random, ranking: Ranking) -> Iterator[Proposal]:
        """The relation of a `relate` or `verify rel` replaced by its opposite or another spatial
        relation, where the question says it once in the program's words ("to the left of")."""
        lex, step = q.image.lex, q.steps[index]
        name, rel, role = relation_of(step)
        if not rel:
            return
        span = said_once(q.text, rel)
        if span is None or any(i != index and rel in s.argument for i, s in enumerate(q.steps)):
            return
        q.aligned = True
        opp = lex.opposite_relation(rel)
        # a spatial relation may become another; "wearing" only its opposite, if it has one:
        # "What is the man to the left of?" no longer asks what "What is the man wearing?" asked
        others = sorted(r for r in lex.relations if r not in (rel, opp)) if rel in lex.relations else []
        rng.shuffle(others)
        ids_part = "" if step.operation == "relate" else q.semantic[index]["argument"].strip()[
            len(split_reference(step.argument)[0]):]
        sources = q.original.values[step.dependencies[0]] if step.dependencies else ()
        if isinstance(sources, str):
            return
        for new in ([opp] if opp else []) + others:
            if not self._may_relate(q, index, sources, new, role):
                continue
            # "the cup to the right of the table" must be one cup
            done = q.execute(index, f"{name},{new},{role}{ids_part}",
                             lambda run: run.answer != q.gold and (
                                 step.operation != "relate" or len(run.refs.get(index, ())) == 1))
            if done is None:
                continue
            edited, run, rewritten = done
            words = replace(q.text, span, new)
            if not q.reads_well(words):
                continue
            yield q.perturbation(edited, run, index, rewritten, words,
                                    {"kind": "relation", "slot": f"step{index}", "from": rel, "to": new},
                                    [], "contrast")

    def _may_relate(self, q: EditedQuestion, index: int, sources: tuple[str, ...], rel: str, role: str) -> bool:
        """A shortcut, never a decision: False only where the edit would surely be refused. A
        `relate` must find one object, so some source needs an edge of the relation; a `verify
        rel` needs its one pair decided, by the edge or by its opposite's (`proofs`)."""
        scene, step = q.image.scene, q.steps[index]
        if step.operation == "relate":
            edges = scene.in_edges if role == "s" else scene.out_edges
            return any(r == rel for x in sources for r, _ in edges.get(x, ()))
        named = denoted_ids(reference_name(step), scene, q.image.lex)
        if len(sources) != 1 or len(named) != 1:
            return False
        subject, obj = (named[0], sources[0]) if role == "s" else (sources[0], named[0])
        return q.image.proofs.relation_decided(subject, rel, obj) is not None
