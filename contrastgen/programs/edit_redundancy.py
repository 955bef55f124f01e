"""Super-CLEVR's redundancy edits on GQA programs: rd- drops an attribute that says nothing the
reference needs, rd+ says every attribute of the object; both keep the answer (invariance).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import regex

from contrastgen.language.nounphrase import attribute_words
from contrastgen.programs.edit_base import (
    RD_PLUS_TYPES,
    Found,
    adjective_order,
    reference_name,
)
from contrastgen.programs.gqa import (
    PRONOUNS,
    ProgramRefusal,
    split_reference,
    step_of,
)
from contrastgen.programs.proofs import negated
from contrastgen.programs.wording import Span, aligned_span, replace, said_once, without
from contrastgen.scene.ground import denoted_ids

_WORD = regex.compile(r"[\p{L}\p{N}'-]+")
# words and punctuation, as a reader comparing two questions word by word splits them
_TOKEN = regex.compile(r"\w+(?:'\w+)?|[^\w\s]")


def _inserted(original: str, edited: str) -> list[str]:
    """The words `edited` adds to `original`, read as anyone comparing the two reads them: the
    common words at both ends set aside ("the red" + "steel" before "red" reads as "steel red" added
    after it, not "red steel" before it)."""
    a = [w.lower() for w in _TOKEN.findall(original)]
    b = [w.lower() for w in _TOKEN.findall(edited)]
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    return b[start:end_b] if end_a == start else []


class RedundancyEdits:
    """Redundancy edits, mixed into the question's `_Edit`."""

    def _in_adjective_order(self, span: Span, kinds: list[str]) -> int | None:
        """Where the added attributes go so that every adjective before the noun is in English
        order (rules/adjective_order.tsv): "the steel car" + red -> "the red steel car", "the
        red car" + large -> "the large red car". None where an adjective already said there has
        no certain place in that order, or none fits."""
        order = adjective_order()
        ranks = [order[k] for k in kinds]
        before = self.text[:span.start]
        said: list[tuple[int, int | None]] = []  # (offset, rank) of each adjective, right to left
        for m in reversed(list(_WORD.finditer(before))):
            word = m.group().lower()
            if word not in attribute_words():
                break
            said.append((m.start(), self._rank_of(word, order)))
        said.reverse()
        if any(rank is None for _, rank in said):
            return None
        for p in range(len(said), -1, -1):  # nearest the noun first
            if all(r <= min(ranks) for _, r in said[:p]) and all(r >= max(ranks) for _, r in said[p:]):  # type: ignore[operator]
                return said[p][0] if p < len(said) else span.start
        return None

    def _rank_of(self, word: str, order: dict[str, int]) -> int | None:
        """A word's place in English adjective order, by its GQA type (the first ranked one)."""
        kinds = set(self.editor.executor().types.get(word, ()))
        if self.editor.lex.is_color(word):
            kinds.add("color")
        ranked = sorted(order[k] for k in kinds if k in order)
        return ranked[0] if len(ranked) == 1 or len(set(ranked)) == 1 else None

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
        words = {w.lower() for w in _WORD.findall(self.text)}
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
        at = self._in_adjective_order(span, [kind for kind, _ in added])
        if at is None:
            return  # beside an adjective with no certain place in English order ("steel red car")
        found.aligned = True
        text = replace(self.text, Span(at, span.end), f"{said} {self.text[at:span.end]}", noun=True)
        if not self._reads_well(text) or _inserted(self.text, text) != said.lower().split():
            return  # a reader comparing the two questions must see exactly these words added
        yield self.perturbation(edited, run, -1, set(), text,
                                {"kind": "attribute", "slot": f"step{index}", "from": "", "to": said},
                                [], "invariance", {ids[0]: [value for _, value in added]})
