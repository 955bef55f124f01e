"""Super-CLEVR's redundancy edits on GQA programs: rd- drops an attribute that says nothing the
reference needs, rd+ says every attribute of the object; both keep the answer (invariance).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from contrastgen.programs.edit_base import (
    RD_PLUS_TYPES,
    Found,
    reference_name,
)
from contrastgen.programs.gqa import (
    PRONOUNS,
    ProgramRefusal,
    split_reference,
    step_of,
)
from contrastgen.programs.proofs import negated
from contrastgen.programs.wording import aligned_span, replace, said_once, without
from contrastgen.scene.ground import denoted_ids


class RedundancyEdits:
    """Redundancy edits, mixed into the question's `_Edit`."""

    def _redundant(self, index: int, found: Found) -> Iterator[dict[str, Any]]:
        """The attribute of a `filter` dropped where it says nothing the reference needs ("the
        white car" -> "the car" when the car is the only one): an invariance, Super-CLEVR's rd-.
        The words lose the value (and "an" may become "a"); the program loses the step."""
        step, lex, scene = self.steps[index], self.editor.lex, self.editor.scene
        value = step.argument.strip().lower()
        if step.kind in ("", "hposition", "vposition") or negated(value) or len(step.dependencies) != 1:
            return
        source = step.dependencies[0]
        if self.steps[source].operation != "select":
            return
        kept, narrowed = self.original.values[index], self.original.values[source]
        name = reference_name(self.steps[source])
        if isinstance(narrowed, str) or set(kept) != set(narrowed) or not kept \
                or set(denoted_ids(name, scene, lex)) != set(narrowed):
            return  # the value narrows the reference, or the name alone does not say these objects
        if lex.is_unannotated_prone(name) or any(lex.is_unannotated_prone(scene.objects[o].name) for o in kept):
            return  # "the blue clothing item" -> "the clothing item" would say no other clothing is there
        span = said_once(self.text, value)
        if span is None or not self.text[span.end:].lstrip().lower().startswith(name.lower()):
            return  # only a word before the noun ("the white car"), never a predicate ("... is white?")
        found.aligned = True
        edited = []
        for j, s in enumerate(self.semantic):
            if j != index:
                deps = [source if d == index else d - 1 if d > index else d for d in s["dependencies"]]
                edited.append({**s, "dependencies": deps})
        parsed = [step_of(s) for s in edited]
        try:
            run = self.editor.executor().run_steps(parsed)
        except ProgramRefusal:
            return
        if run.answer != self.gold or not self.editor.proofs.holds(edited, parsed, parsed, set(), run):
            return
        words = without(self.text, span)
        if not self._reads_well(words):
            return
        ids = sorted(narrowed)
        facts = [{"fact": "only", "names": self._kind_names(name), "ids": ids}]
        attributes = {o: self._attributes_shown(o, step.kind, (value,)) for o in ids}
        yield self.perturbation(edited, run, -1, set(), words,
                                {"kind": "attribute", "slot": f"step{index}", "from": value, "to": ""},
                                facts, "invariance", attributes)

    def _all_attributes(self, index: int, found: Found) -> Iterator[dict[str, Any]]:
        """Every attribute the object has said before its noun (Super-CLEVR's rd+: "the car" ->
        "the large white metal car"): an invariance, since true attributes of the one object a
        reference names keep naming it. Types in English adjective order (RD_PLUS_TYPES), one
        value each; never a type the question asks (that would say the answer), never a value the
        words already say."""
        step, lex = self.steps[index], self.editor.lex
        name, ids = reference_name(step), split_reference(step.argument)[1] or ()
        if len(ids) != 1 or name in PRONOUNS or lex.is_plural(name):
            return
        span = aligned_span(self.question, self.text, ids) or self._named_span(name)
        if span is None or self.text[span.start:span.end].lower() != name.lower():
            return
        asked = {s.kind or s.argument.strip() for s in self.steps if s.head in ("query", "verify", "choose")}
        asked |= {s.argument.strip() for s in self.steps if s.head == "query"}
        ex = self.editor.executor()
        words = set(self.text.lower().split())
        added = []
        for kind in RD_PLUS_TYPES:
            values = ex.values_of(ids[0], kind)
            if kind in asked or len(values) != 1:
                continue
            value = next(iter(values))
            if value in words or any(v in words for v in value.split()):
                continue
            added.append((kind, value))
        if not added or any(s.head == "filter" and s.dependencies == (index,) for s in self.steps):
            return  # nothing to add, or the reference has filters of its own (their words)
        edited = []
        shift = len(added)
        for j, s in enumerate(self.semantic):
            deps = [d + shift if d > index else (index + shift if d == index else d) for d in s["dependencies"]]
            edited.append({**s, "dependencies": deps})
            if j == index:
                edited[-1]["dependencies"] = list(s["dependencies"])
                for n, (kind, value) in enumerate(added):
                    edited.append({"operation": f"filter {kind}", "argument": value, "dependencies": [index + n]})
        parsed = [step_of(s) for s in edited]
        try:
            run = ex.run_steps(parsed)
        except ProgramRefusal:
            return
        if run.answer != self.gold or run.values[index + shift] != (ids[0],) \
                or not self.editor.proofs.holds(edited, parsed, parsed, set(), run):
            return
        said = " ".join(value for _, value in added)
        found.aligned = True
        text = replace(self.text, span, f"{said} {self.text[span.start:span.end]}", noun=True)
        if not self._reads_well(text):
            return
        yield self.perturbation(edited, run, -1, set(), text,
                                {"kind": "attribute", "slot": f"step{index}", "from": "", "to": said},
                                [], "invariance", {ids[0]: [value for _, value in added]})
