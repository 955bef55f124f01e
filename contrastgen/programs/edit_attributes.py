"""Edits of an attribute value: a `filter`, `verify` or either option of a `choose`, changed to
another value of its type that the graph's objects have.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from contrastgen.language.lexicon import attribute_opposites
from contrastgen.language.noun_classes import attribute_kinds
from contrastgen.programs.edit_base import (
    POSITION_VALUES,
    Found,
)
from contrastgen.programs.gqa import (
    Step,
)
from contrastgen.programs.proofs import negated, shades
from contrastgen.programs.wording import Span, replace, said_once


class AttributeEdits:
    """Attribute edits, mixed into the question's `_Edit`."""

    def _attributes(self, index: int, rng: random.Random, found: Found) -> Iterator[dict[str, Any]]:
        """Another value of the type a `filter`, `verify` or `choose` asks, said where the words
        say the old one. A `choose` may change either option: the held one (a contrast, when
        the object has the new value instead) or the rejected one (an invariance, when the graph
        excludes the new value too)."""
        step = self.steps[index]
        value = step.argument.strip().lower()
        if negated(value):
            return
        options = [o.strip() for o in value.split("|")] if step.head == "choose" else [value]
        if step.head == "choose" and len(options) != 2:
            return
        pool = self._values_of_type(step.kind, rng)
        noun = self.said_noun(step.dependencies[0]) if step.dependencies else None
        category = self.editor.lex.category(noun) if noun else None
        kinds = attribute_kinds()
        fitting = [v for v in pool if kinds.allows(category, step.kind, v)]
        self.unfit_refused |= len(fitting) < len(pool)
        pool = fitting  # "Are the sneakers brunette?": a hair colour is no colour of shoes
        for position, old in enumerate(options):
            span = said_once(self.text, old)
            if span is None:
                continue
            found.aligned = True
            held = step.head == "choose" and old == self.gold
            for new in pool:
                if step.head == "choose" and not held and not found.wants_invariance:
                    break  # a choice's rejected option only ever gives an invariance, and none has a rank left
                if any(shades(new, o) for o in options):
                    continue  # "blue or light blue" asks nothing
                if held and not self._all_have(step, new):
                    continue  # neither option would hold: refused, so not tried
                argument = "|".join(new if i == position else o for i, o in enumerate(options))
                p = self._try_value(index, span, old, new, argument)
                if p is not None:
                    yield p

    def _all_have(self, step: Step, value: str) -> bool:
        inputs = self.original.values[step.dependencies[0]] if step.dependencies else ()
        ex = self.editor.executor()
        return not isinstance(inputs, str) and all(value in ex.values_of(o, step.kind) for o in inputs)

    def _values_of_type(self, kind: str, rng: random.Random) -> list[str]:
        """The values of one attribute type that the graph's objects have, in a seeded order."""
        if kind in POSITION_VALUES:
            values = list(POSITION_VALUES[kind])
        else:
            ex = self.editor.executor()
            values = sorted({v for o in self.editor.scene.objects for v in ex.values_of(o, kind)})
        rng.shuffle(values)
        return values

    def _try_value(self, index: int, span: Span, old: str, new: str, argument: str) -> dict[str, Any] | None:
        step = self.steps[index]
        done = self.execute(index, argument)
        if done is None:
            return None
        edited, run, rewritten = done
        invariance = run.answer == self.gold
        if invariance and step.head != "choose":
            return None  # only a choice's rejected option is worth keeping the answer for
        if step.head == "filter":
            kept = run.values[index]
            reads_all = any(self.steps[i].operation == "exist" and index in self.steps[i].dependencies
                            for i in rewritten)
            if not kept or (len(kept) != 1 and not reads_all):
                return None  # "the red car" must still be one car
        words = replace(self.text, span, new)
        if not self._reads_well(words):
            return None
        inputs = run.values[step.dependencies[0]] if step.dependencies else ()
        attributes = {o: self._attributes_shown(o, step.kind, (old, new)) for o in inputs} \
            if not isinstance(inputs, str) else {}
        return self.perturbation(edited, run, index, rewritten, words,
                                 {"kind": "attribute", "slot": f"step{index}", "from": old, "to": new},
                                 [], "invariance" if invariance else "contrast", attributes)

    def _attributes_shown(self, oid: str, kind: str, values: tuple[str, ...]) -> list[str]:
        """The object's attributes an attribute edit rests on: its values of the type, and any
        opposite of the old or new value it carries."""
        if kind in POSITION_VALUES:
            return []
        attrs = set(self.editor.scene.objects[oid].attributes)
        shown = set(self.editor.executor().values_of(oid, kind)) & attrs
        shown |= {a for v in values for a in attribute_opposites().get(v, frozenset()) if a in attrs}
        return sorted(shown)
