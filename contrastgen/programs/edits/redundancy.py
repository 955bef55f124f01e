"""Super-CLEVR's redundancy edits on GQA programs: rd- drops an attribute that says nothing the
reference needs, rd+ says every attribute of the object; both keep the answer (invariance).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import regex

from contrastgen.datasets.gqa_program import Step, reference_name, split_reference, step_of
from contrastgen.language.noun_classes import hair_colors
from contrastgen.language.nounphrase import attribute_words
from contrastgen.perturb import Proposal, Ranking
from contrastgen.programs.edits.base import RD_PLUS_TYPES, adjective_order
from contrastgen.programs.edits.question import EditedQuestion
from contrastgen.programs.executor import PRONOUNS, Execution, GqaExecutor, ProgramRefusal
from contrastgen.programs.proofs import negated
from contrastgen.programs.wording import Span, replace, said_once
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


class DropRedundantAttribute:
    """rd-: a `filter`'s attribute dropped where the reference needs it not ("the white car" ->
    "the car" when the car is the only one). Offered after every other edit of the question
    (`last`), so that of the invariances it takes the last ranks."""

    name = "rd-"
    last = True

    def applies(self, step: Step) -> bool:
        return step.head == "filter"

    def propose(self, q: EditedQuestion, index: int, rng: random.Random, ranking: Ranking) -> Iterator[Proposal]:
        """The attribute of a `filter` dropped where it says nothing the reference needs ("the
        white car" -> "the car" when the car is the only one): an invariance, Super-CLEVR's rd-.
        The words lose the value (and "an" may become "a"); the program loses the step."""
        step, lex, scene = q.steps[index], q.image.lex, q.image.scene
        value = step.argument.strip().lower()
        if step.kind in ("", "hposition", "vposition") or negated(value) or len(step.dependencies) != 1:
            return
        source = step.dependencies[0]
        if q.steps[source].operation != "select":
            return
        kept, narrowed = q.original.values[index], q.original.values[source]
        name = reference_name(q.steps[source])
        if isinstance(narrowed, str) or set(kept) != set(narrowed) or not kept \
                or set(denoted_ids(name, scene, lex)) != set(narrowed):
            return  # the value narrows the reference, or the name alone does not say these objects
        if lex.is_unannotated_prone(name) or any(lex.is_unannotated_prone(scene.objects[o].name) for o in kept):
            return  # "the blue clothing item" -> "the clothing item" would say no other clothing is there
        span = said_once(q.text, value)
        if span is None or not q.text[span.end:].lstrip().lower().startswith(name.lower()):
            return  # only a word before the noun ("the white car"), never a predicate ("... is white?")
        q.aligned = True
        edited = []
        for j, s in enumerate(q.semantic):
            if j != index:
                deps = [source if d == index else d - 1 if d > index else d for d in s["dependencies"]]
                edited.append({**s, "dependencies": deps})
        proven = q.removal_proven(edited, span)
        if proven is None:
            return
        run, words = proven
        ids = sorted(narrowed)
        facts = [{"fact": "only", "names": q.kind_names(name), "ids": ids}]
        attributes = {o: q.attributes_shown(o, step.kind, (value,)) for o in ids}
        yield q.perturbation(edited, run, -1, set(), words,
                                {"kind": "attribute", "slot": f"step{index}", "from": value, "to": ""},
                                facts, "invariance", attributes)


class SayEveryAttribute:
    """rd+: every attribute of a selected object said before its noun ("the car" -> "the large
    white metal car"). Offered last, as rd-."""

    name = "rd+"
    last = True

    def applies(self, step: Step) -> bool:
        return step.operation == "select"

    def propose(self, q: EditedQuestion, index: int, rng: random.Random, ranking: Ranking) -> Iterator[Proposal]:
        """Every attribute the object has said before its noun (Super-CLEVR's rd+: "the car" ->
        "the large white metal car"): an invariance, since true attributes of the one object a
        reference names keep naming it. Types in English adjective order (RD_PLUS_TYPES), one
        value each; never a type the question asks (that would say the answer), never a value the
        words already say."""
        said = self._said_alone(q, index)
        if said is None:
            return
        oid, span = said
        ex = q.image.executor()
        added = self._unsaid_attributes(q, oid, ex)
        if not added or any(s.head == "filter" and s.dependencies == (index,) for s in q.steps):
            return  # nothing to add, or the reference has filters of its own (their words)
        edited = self._with_filters(q, index, added)
        run = self._proven(q, edited, index + len(added), oid, ex)
        if run is None:
            return
        said_words = " ".join(value for _, value in added)
        at = self._in_adjective_order(q, span, [kind for kind, _ in added])
        if at is None:
            return  # beside an adjective with no certain place in English order ("steel red car")
        q.aligned = True
        text = replace(q.text, Span(at, span.end), f"{said_words} {q.text[at:span.end]}", noun=True)
        if not q.reads_well(text) or _inserted(q.text, text) != said_words.lower().split():
            return  # a reader comparing the two questions must see exactly these words added
        yield q.perturbation(edited, run, -1, set(), text,
                                {"kind": "attribute", "slot": f"step{index}", "from": "", "to": said_words},
                                [], "invariance", {oid: [value for _, value in added]})

    def _said_alone(self, q: EditedQuestion, index: int) -> tuple[str, Span] | None:
        """The one object the `select` at `index` names by GQA's ids, and the words that say it
        by its name alone (singular, no pronoun), where there are such words."""
        step, lex = q.steps[index], q.image.lex
        name, ids = reference_name(step), split_reference(step.argument)[1] or ()
        if len(ids) != 1 or name in PRONOUNS or lex.is_plural(name):
            return None
        span = q.annotated_span(ids) or q.named_span(name)
        if span is None or q.text[span.start:span.end].lower() != name.lower():
            return None
        return ids[0], span

    def _unsaid_attributes(self, q: EditedQuestion, oid: str, ex: GqaExecutor) -> list[tuple[str, str]]:
        """(type, value) of each of the object's attributes rd+ may add, in English adjective
        order: one value of its type, a type the question does not ask, words it does not say,
        never a hair colour of a thing."""
        asked = {s.kind or s.argument.strip() for s in q.steps if s.head in ("query", "verify", "choose")}
        asked |= {s.argument.strip() for s in q.steps if s.head == "query"}
        words = {w.lower() for w in _WORD.findall(q.text)}
        added = []
        for kind in RD_PLUS_TYPES:
            values = ex.values_of(oid, kind)
            if kind in asked or len(values) != 1:
                continue
            value = next(iter(values))
            if value in words or any(v in words for v in value.split()):
                continue
            if not hair_colors().allows(value, q.image.scene.objects[oid].canonical, q.image.lex):
                continue  # a graph's "blond" railing: a hair colour is never said of a thing
            added.append((kind, value))
        return added

    @staticmethod
    def _with_filters(q: EditedQuestion, index: int, added: list[tuple[str, str]]) -> list[dict[str, Any]]:
        """The program with a filter of each added attribute after the `select` at `index`, in
        order, and every later step renumbered."""
        edited = []
        shift = len(added)
        for j, s in enumerate(q.semantic):
            deps = [d + shift if d > index else (index + shift if d == index else d) for d in s["dependencies"]]
            edited.append({**s, "dependencies": deps})
            if j == index:
                edited[-1]["dependencies"] = list(s["dependencies"])
                for n, (kind, value) in enumerate(added):
                    edited.append({"operation": f"filter {kind}", "argument": value, "dependencies": [index + n]})
        return edited

    @staticmethod
    def _proven(q: EditedQuestion, edited: list[dict[str, Any]], last_filter: int, oid: str,
                ex: GqaExecutor) -> Execution | None:
        """The longer program's run, where it gives the gold answer, its last added filter keeps
        the one object, and every claim it rests on is shown; None otherwise."""
        parsed = [step_of(s) for s in edited]
        # the steps up to the `select` the filters follow are the original's: their values are its run's
        select = last_filter - (len(edited) - len(q.steps))
        try:
            run = ex.run_steps(parsed, prefix=q.original, start=select + 1)
        except ProgramRefusal:
            return None
        if run.answer != q.gold or run.values[last_filter] != (oid,) \
                or not q.image.proofs.holds(edited, parsed, parsed, set(), run):
            return None
        return run

    def _in_adjective_order(self, q: EditedQuestion, span: Span, kinds: list[str]) -> int | None:
        """Where the added attributes go so that every adjective before the noun is in English
        order (rules/adjective_order.tsv): "the steel car" + red -> "the red steel car", "the
        red car" + large -> "the large red car". None where an adjective already said there has
        no certain place in that order, or none fits."""
        order = adjective_order()
        ranks = [order[k] for k in kinds]
        before = q.text[:span.start]
        said: list[tuple[int, int | None]] = []  # (offset, rank) of each adjective, right to left
        for m in reversed(list(_WORD.finditer(before))):
            word = m.group().lower()
            if word not in attribute_words():
                break
            said.append((m.start(), self._rank_of(q, word, order)))
        said.reverse()
        if any(rank is None for _, rank in said):
            return None
        for p in range(len(said), -1, -1):  # nearest the noun first
            if all(r <= min(ranks) for _, r in said[:p]) and all(r >= max(ranks) for _, r in said[p:]):  # type: ignore[operator]
                return said[p][0] if p < len(said) else span.start
        return None

    def _rank_of(self, q: EditedQuestion, word: str, order: dict[str, int]) -> int | None:
        """A word's place in English adjective order, by its GQA type (the first ranked one)."""
        kinds = set(q.image.executor().types.get(word, ()))
        if q.image.lex.is_color(word):
            kinds.add("color")
        ranked = sorted(order[k] for k in kinds if k in order)
        return ranked[0] if len(ranked) == 1 or len(set(ranked)) == 1 else None
