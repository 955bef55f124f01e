"""Edits of an attribute value: a `filter`, `verify` or either option of a `choose`, changed to
another value of its type that the graph's objects have.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from contrastgen.datasets.gqa_program import Step
from contrastgen.language.noun_classes import attribute_kinds, hair_colors
from contrastgen.perturb import Proposal, Ranking
from contrastgen.programs.edits.base import POSITION_VALUES
from contrastgen.programs.edits.question import EditedQuestion
from contrastgen.programs.proofs import negated, shades
from contrastgen.programs.wording import Span, replace, said_once


class AttributeEdit:
    """Another value of the type a `filter`, `verify` or `choose` asks (colour, material, pose...)."""

    name = "attribute"
    last = False

    def applies(self, step: Step) -> bool:
        return step.head in ("filter", "verify", "choose") and step.kind not in ("", "rel", "name")

    def propose(self, q: EditedQuestion, index: int, rng: random.Random, ranking: Ranking) -> Iterator[Proposal]:
        """Another value of the type a `filter`, `verify` or `choose` asks, said where the words
        say the old one. A `choose` may change either option: the held one (a contrast, when
        the object has the new value instead) or the rejected one (an invariance, when the graph
        excludes the new value too)."""
        step = q.steps[index]
        value = step.argument.strip().lower()
        if negated(value):
            return
        options = [o.strip() for o in value.split("|")] if step.head == "choose" else [value]
        if step.head == "choose" and len(options) != 2:
            return
        pool = self._values_of_type(q, step.kind, rng)
        noun = q.said_noun(step.dependencies[0]) if step.dependencies else None
        category = q.image.lex.category(noun) if noun else None
        kinds = attribute_kinds()
        names = self._input_names(q, step)
        hair = hair_colors()
        # "Are the sneakers brunette?", "Is the truck large and blond?": a hair colour is no
        # colour of shoes or trucks, whether the step is asked alone or under an and/or
        fitting = [v for v in pool if kinds.allows(category, step.kind, v)
                   and all(hair.allows(v, n, q.image.lex) for n in names)]
        q.unfit_refused |= len(fitting) < len(pool)
        pool = fitting
        for position, old in enumerate(options):
            span = said_once(q.text, old)
            if span is None:
                continue
            q.aligned = True
            held = step.head == "choose" and old == q.gold
            for new in pool:
                if step.head == "choose" and not held and not ranking.wants_invariance:
                    break  # a choice's rejected option only ever gives an invariance, and none has a rank left
                if any(shades(new, o) for o in options):
                    continue  # "blue or light blue" asks nothing
                if held and not self._all_have(q, step, new):
                    continue  # neither option would hold: refused, so not tried
                argument = "|".join(new if i == position else o for i, o in enumerate(options))
                p = self._try_value(q, index, span, old, new, argument)
                if p is not None:
                    yield p

    def _input_names(self, q: EditedQuestion, step: Step) -> list[str]:
        """The names of the objects the step reads (the original's run), and the noun the words
        say of them: a value must fit each (what the verifier checks is the objects)."""
        inputs = q.original.values[step.dependencies[0]] if step.dependencies else ()
        names = [] if isinstance(inputs, str) else [q.image.scene.objects[o].canonical for o in inputs]
        noun = q.said_noun(step.dependencies[0]) if step.dependencies else None
        return names + ([noun] if noun else [])

    def _all_have(self, q: EditedQuestion, step: Step, value: str) -> bool:
        inputs = q.original.values[step.dependencies[0]] if step.dependencies else ()
        ex = q.image.executor()
        return not isinstance(inputs, str) and all(value in ex.values_of(o, step.kind) for o in inputs)

    def _values_of_type(self, q: EditedQuestion, kind: str, rng: random.Random) -> list[str]:
        """The values of one attribute type that the graph's objects have, in a seeded order."""
        if kind in POSITION_VALUES:
            values = list(POSITION_VALUES[kind])
        else:  # the same for every question of the image, so kept in its executor's memo
            ex = q.image.executor()
            found = ex.memo.type_values.get(kind)
            if found is None:
                found = ex.memo.type_values[kind] = tuple(sorted(
                    {v for o in q.image.scene.objects for v in ex.values_of(o, kind)}))
            values = list(found)
        rng.shuffle(values)
        return values

    def _try_value(self, q: EditedQuestion, index: int, span: Span, old: str, new: str, argument: str) -> Proposal | None:
        step = q.steps[index]
        # only a choice's rejected option is worth keeping the answer for
        done = q.execute(index, argument, None if step.head == "choose" else lambda run: run.answer != q.gold)
        if done is None:
            return None
        edited, run, rewritten = done
        invariance = run.answer == q.gold
        if step.head == "filter":
            kept = run.values[index]
            reads_all = any(q.steps[i].operation == "exist" and index in q.steps[i].dependencies
                            for i in rewritten)
            if not kept or (len(kept) != 1 and not reads_all):
                return None  # "the red car" must still be one car
        words = replace(q.text, span, new)
        if not q.reads_well(words):
            return None
        inputs = run.values[step.dependencies[0]] if step.dependencies else ()
        if not isinstance(inputs, str) and not all(
                hair_colors().allows(new, q.image.scene.objects[o].canonical, q.image.lex) for o in inputs):
            q.unfit_refused = True
            return None  # the edited run reads other objects (a filter frees its reference): each must take it
        attributes = {o: q.attributes_shown(o, step.kind, (old, new)) for o in inputs} \
            if not isinstance(inputs, str) else {}
        return q.perturbation(edited, run, index, rewritten, words,
                                 {"kind": "attribute", "slot": f"step{index}", "from": old, "to": new},
                                 [], "invariance" if invariance else "contrast", attributes)
