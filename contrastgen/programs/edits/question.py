"""One question as its program edits see it: the program, the words, the gold answer and the
original's run, shared by every edit (`EditedQuestion`), with what they all need: executing an
edited program and checking its claims, and building a proposal with its evidence.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contrastgen.datasets.gqa_program import (
    REFERENCE_OPS,
    Step,
    reference_name,
    split_reference,
    step_of,
)
from contrastgen.language.lexicon import attribute_opposites
from contrastgen.perturb import EVIDENCE_VERSION, Proposal
from contrastgen.programs.edits.base import POSITION_VALUES, dependents, with_ids
from contrastgen.programs.edits.image import ImageTools
from contrastgen.programs.executor import PRONOUNS, SCENE, Execution, ProgramRefusal
from contrastgen.programs.proofs import bare, claimed_whole
from contrastgen.programs.wording import Span, aligned_span, doubled_words, said_once, without

_WORDS = re.compile(r"[a-z0-9]+")  # a question's words, for finding a noun said in them
_ASKING = ("query", "verify", "choose", "same", "different", "common")  # steps that ask of objects


@dataclass
class EditedQuestion:
    """What every edit of one question reads and shares: its program, its words, its gold answer,
    the original program's run, the image's tools (graph, lexicon, executor, proofs), and what
    the edits found out about why nothing may come of them (`aligned`, `prone_refused`,
    `unfit_refused`: the question's reason when no edit holds)."""

    image: ImageTools  # the image's graph, lexicon, executor and proofs, shared by its questions
    question: dict[str, Any]
    steps: list[Step]
    semantic: list[dict[str, Any]]
    gold: str
    original: Execution  # the original program's run: the values upstream of an edit stay these
    # an edit was refused only for saying "the" of an object of a kind annotators leave out: the
    # question's reason, if nothing is found, is that rule rather than a want of candidates
    prone_refused: bool = field(default=False, init=False)
    # an attribute value was not offered only because the object's kind does not take it
    unfit_refused: bool = field(default=False, init=False)
    aligned: bool = field(default=False, init=False)  # some step's argument was found in the words
    # per step index: the steps downstream of it, and what an edit there rewrites (`_edit_frame`);
    # the same for every candidate edit of that step, so found once
    _downstream: dict[int, set[int]] = field(default_factory=dict, init=False, repr=False)
    _readers: dict[int, tuple[bool, list[Step]]] = field(default_factory=dict, init=False, repr=False)
    _frames: dict[int, tuple[set[int], set[int], list[dict[str, Any]], list[Step]]] = field(
        default_factory=dict, init=False, repr=False)
    # GQA's ids -> the one span of words its annotations give them (`annotated_span`): asked of a step
    # by the name edit and by rd+
    _aligned: dict[tuple[str, ...], Span | None] = field(default_factory=dict, init=False, repr=False)
    # edited runs an edit turned down before their proofs (`execute`, `settle`)
    _unproven: list[tuple[list[dict[str, Any]], list[Step], set[int], Execution]] = field(
        default_factory=list, init=False, repr=False)

    @functools.cached_property
    def claimed(self) -> set[int]:
        """The steps whose objects the words say as "the" ones (`proofs.claimed_whole`): the same
        for every argument edit of the question, so found once."""
        return claimed_whole([s.operation for s in self.steps], [s.dependencies for s in self.steps])

    @property
    def text(self) -> str:
        return str(self.question.get("question", ""))

    def said_noun(self, index: int) -> str | None:
        """The noun the words say of the objects step `index` reads or names: the reference of
        its `select` or `relate`, back through filters."""
        j = index
        while self.steps[j].operation not in REFERENCE_OPS:
            if not self.steps[j].dependencies:
                return None
            j = self.steps[j].dependencies[0]
        name = reference_name(self.steps[j])
        return None if name in ("_", "", SCENE) or name in PRONOUNS else name

    def presupposition_fails(self) -> bool:
        """Do the original's words pick out other objects than its program's ids, where it asks
        something of them ("What color is the player?" with a catcher there too: a catcher is a
        player)? Run with every `select` and `relate` by name instead of ids, the program must
        give the steps a query, verify, choose or comparison reads the same objects. What its
        perturbations must meet, the original must."""
        by_words = []
        renamed = False  # an argument with ids always differs from its name alone
        for s in self.steps:
            name, ids = split_reference(s.argument)
            if s.operation in ("select", "relate") and ids and name not in PRONOUNS and name != "_":
                by_words.append(Step(s.operation, name, s.dependencies))
                renamed = True
            else:
                by_words.append(s)
        if not renamed:
            return False
        try:
            again = self.image.executor().run_steps(by_words)
        except ProgramRefusal:
            return True
        asked = {d for s in self.steps if s.head in _ASKING for d in s.dependencies}
        for i in asked:
            mine, theirs = self.original.values[i], again.values[i]
            if not isinstance(mine, str) and not isinstance(theirs, str) and set(mine) != set(theirs):
                return True
        return False

    def says_nothing(self, p: Proposal) -> bool:
        """Is a `query: name` answer the question's own category word or a kind above it ("What
        animal is black? animal", "the piece of furniture ...? furniture")? It tells nothing."""
        semantic = p.program["semantic"]
        last = semantic[-1] if semantic else {}
        if last.get("operation") != "query" or str(last.get("argument", "")).strip() != "name":
            return False
        deps = last.get("dependencies") or []
        if not deps:
            return False
        parsed = [step_of(s) for s in semantic]
        j = deps[0]
        while parsed[j].operation not in REFERENCE_OPS and parsed[j].dependencies:
            j = parsed[j].dependencies[0]
        noun = reference_name(parsed[j]) if parsed[j].operation in REFERENCE_OPS else ""
        answer = str(p.answer).strip().lower()
        lex = self.image.lex
        return bool(noun) and noun not in ("_", SCENE) and (answer == noun.lower() or lex.is_a(noun, answer))

    def repeats_question(self, p: Proposal) -> bool:
        """Does a `query: name` answer name a noun its question says ("What is behind the bag the
        man is behind? man", "What is growing on the trash bag? bag")? The words then hand over
        the answer, or ask of a thing by itself. A form of the answer's noun (a plural, a synonym)
        said as whole words counts."""
        semantic = p.program.get("semantic") or []
        last = semantic[-1] if semantic else {}
        if last.get("operation") != "query" or str(last.get("argument", "")).strip() != "name":
            return False
        answer = str(p.answer).strip().lower()
        if not answer:
            return False
        words = f" {' '.join(_WORDS.findall(p.question.lower()))} "
        return any(f" {' '.join(_WORDS.findall(form))} " in words
                   for form in self.image.lex.forms(answer) | {answer})

    def execute(self, index: int, argument: str, wanted: Callable[[Execution], bool] | None = None
                ) -> tuple[list[dict[str, Any]], Execution, set[int]] | None:
        """The program with step `index`'s argument replaced and the steps that read it by name,
        executed; None where the result cannot be proven, or where `wanted` (what the edit asks
        of the run: its answer, the objects its reference finds) turns it down. Returned with
        it: the steps whose ids the execution rewrites.

        A `choose rel` downstream keeps its ids: they name its own object, which the edit does
        not change. An edited `filter` also frees the reference it narrows: GQA's ids there are
        the objects the old value picked ("select: clothing (12)" is the white glove), and
        "clothing that is blue" must be looked for among all the clothing.

        A run `wanted` turns down is not proven now: most candidates' answers are not the ones
        their edit wants, and proving them is most of a candidate's cost. Their proofs matter
        only for what a failing one notes (`prone_refused`, `several_colored_refused`), which is
        read only where the question ends with nothing kept: `settle` proves them then."""
        downstream, rewritten, edited, parsed = self._edit_frame(index)
        edited, parsed = list(edited), list(parsed)
        edited[index] = {**edited[index], "argument": argument}
        parsed[index] = step_of(edited[index])
        try:
            run = self.image.executor().run_steps(parsed, prefix=self.original, start=min(rewritten))
        except ProgramRefusal:
            return None
        if wanted is not None and not wanted(run):
            self._unproven.append((edited, parsed, downstream, run))
            return None
        if not self._proven(edited, parsed, downstream, run):
            return None
        return edited, run, rewritten

    def _proven(self, edited: list[dict[str, Any]], parsed: list[Step], downstream: set[int], run: Execution) -> bool:
        """Does every claim the edited run's answer rests on hold (noting why not, where a rule
        of the question's reasons refused it)?"""
        if not self.image.proofs.holds(edited, parsed, self.steps, downstream, run):
            return False
        why = self.image.proofs.new_references_unshown(self.claimed, parsed, run, self.original)
        if why is not None:
            self.prone_refused |= why == "unannotated_prone"
            return False
        return True

    def settle(self) -> None:
        """Prove the runs `execute` set aside, for what their failing proofs note: the question
        ends with nothing kept, and its reason is read from those notes."""
        unproven, self._unproven = self._unproven, []
        for edited, parsed, downstream, run in unproven:
            self._proven(edited, parsed, downstream, run)

    def dependents(self, index: int) -> set[int]:
        """The steps that read step `index`'s value, directly or through others (`base.dependents`)."""
        found = self._downstream.get(index)
        if found is None:
            found = self._downstream[index] = dependents(self.steps, index)
        return found

    def readers(self, index: int) -> tuple[bool, list[Step]]:
        """Whether an `exist` is downstream of step `index`, and the steps that read it alone."""
        found = self._readers.get(index)
        if found is None:
            found = self._readers[index] = (
                any(self.steps[i].operation == "exist" for i in self.dependents(index)),
                [s for s in self.steps[index + 1:] if s.dependencies == (index,)])
        return found

    def _edit_frame(self, index: int) -> tuple[set[int], set[int], list[dict[str, Any]], list[Step]]:
        """What every edit of step `index` shares: the steps downstream of it, the steps whose ids
        the execution rewrites, and the program (as dicts and parsed) with those steps by name."""
        frame = self._frames.get(index)
        if frame is None:
            downstream = self.dependents(index)
            rewritten = downstream | {index} | self._narrowed(index)
            edited = list(self.semantic)
            parsed = list(self.steps)
            for i in rewritten - {index}:
                if self.steps[i].operation != "choose rel":
                    edited[i] = bare(edited[i])
                    parsed[i] = step_of(edited[i])
            frame = self._frames[index] = (downstream, rewritten, edited, parsed)
        return frame

    def _narrowed(self, index: int) -> set[int]:
        """The `select` or `relate` whose objects a `filter` at `index` narrows (through other
        filters), if any."""
        j = index
        while self.steps[j].head == "filter" and self.steps[j].dependencies:
            j = self.steps[j].dependencies[0]
        return {j} if j != index and self.steps[j].operation in ("select", "relate") else set()

    def perturbation(self, edited: list[dict[str, Any]], run: Execution, index: int, rewritten: set[int],
                     words: str, change: dict[str, str], facts: list[dict[str, Any]],
                     kind: str, attributes: dict[str, list[str]] | None = None) -> Proposal:
        """The perturbation of an executed edit: its program with every reference's ids from the
        execution, and evidence listing every object the program touched (with the attributes
        the edit's answer rests on)."""
        out = [with_ids(s, run.refs.get(i)) if i in rewritten else s for i, s in enumerate(edited)]
        scene = self.image.scene
        attributes = self._compared(edited, run, attributes or {})
        touched = {o for ids in run.refs.values() for o in ids} | set(attributes)
        objects = []
        for o in sorted(touched):
            fact: dict[str, Any] = {"fact": "object", "id": o, "name": scene.objects[o].name}
            if attributes and attributes.get(o):
                fact["attributes"] = attributes[o]
            objects.append(fact)
        return Proposal(question=words, answer=run.answer, change=change,
                        evidence={"version": EVIDENCE_VERSION,
                                  "query": {"op": "program", "step": index if index >= 0 else int(change["slot"][4:])},
                                  "facts": objects + facts, "answer": run.answer},
                        kind=kind, program={"semantic": out})

    def _compared(self, edited: list[dict[str, Any]], run: Execution,
                  attributes: dict[str, list[str]]) -> dict[str, list[str]]:
        """`attributes`, with the values a `same`, `different` or `common` step compared of each
        of its objects: the colours "Do the cup and the pants have the same color? no" rests on."""
        out = {o: list(v) for o, v in attributes.items()}
        executor = self.image.executor()
        for step in edited:
            head, _, kind = step["operation"].partition(" ")
            if head not in ("same", "different", "common"):
                continue
            kinds = ["color", "material", "shape"] if head == "common" else [kind or step["argument"].strip()]
            for d in step["dependencies"]:
                value = run.values[d]
                for o in () if isinstance(value, str) else value:
                    held = {v for k in kinds for v in executor.values_of(o, k)} & self.image.scene.objects[o].attributes
                    out[o] = sorted(set(out.get(o, ())) | held)
        return out

    def removal_proven(self, edited: list[dict[str, Any]], span: Span) -> tuple[Execution, str] | None:
        """A redundancy edit that removes steps and the words `span` says them with: the shorter
        program's run and the shorter words, where the run gives the gold answer, every claim it
        rests on is shown, and the words read well; None otherwise."""
        parsed = [step_of(s) for s in edited]
        try:
            run = self.image.executor().run_steps(parsed)
        except ProgramRefusal:
            return None
        if run.answer != self.gold or not self.image.proofs.holds(edited, parsed, parsed, set(), run):
            return None
        words = without(self.text, span)
        return (run, words) if self.reads_well(words) else None

    def reads_well(self, words: str) -> bool:
        """The new words add no doubled word ("the grass the person is near near the umbrella")."""
        return doubled_words(words) <= self._doubled

    @functools.cached_property
    def _doubled(self) -> int:
        """The doubled words of the question's own words (`reads_well`), counted once."""
        return doubled_words(self.text)

    def annotated_span(self, ids: tuple[str, ...]) -> Span | None:
        """The one span of words the question's annotations give to exactly these ids
        (`wording.aligned_span`), found once per question."""
        if ids not in self._aligned:
            self._aligned[ids] = aligned_span(self.question, self.text, ids)
        return self._aligned[ids]

    def named_span(self, name: str) -> Span | None:
        """Without annotations: the name's one occurrence (or its plural's: "Are there any traffic
        lights?"), when no other step names the same thing (then the words cannot be about
        another object of the program)."""
        if sum(1 for s in self.steps if reference_name(s) == name) != 1:
            return None
        return said_once(self.text, name) or said_once(self.text, self.image.lex.plural(name))

    def kind_names(self, word: str) -> list[str]:
        """Every surface name of the kinds `word` denotes, and no name of another kind ("glasses"
        is a form of "glass" but names spectacles): what an `only` fact must list."""
        kinds, names = self.image.lex.names_of_kinds(word)
        return sorted(names | {o.name for o in self.image.scene.objects.values() if o.canonical in kinds})

    def attributes_shown(self, oid: str, kind: str, values: tuple[str, ...]) -> list[str]:
        """The object's attributes an attribute edit rests on: its values of the type, and any
        opposite of the old or new value it carries."""
        if kind in POSITION_VALUES:
            return []
        attrs = set(self.image.scene.objects[oid].attributes)
        shown = set(self.image.executor().values_of(oid, kind)) & attrs
        shown |= {a for v in values for a in attribute_opposites().get(v, frozenset()) if a in attrs}
        return sorted(shown)
