"""Perturbing a question of any GQA type by editing one argument of one step of its program.

Why through the program: the program says what the question asks, whatever its type (GQA has over
100), and executing the edited program on the graph gives the new answer. The words follow the
edit exactly: only the words that say the changed argument change (and an article before a noun).

The edits, each at one step:
- an object's name, in a `select`, or in the reference of a `relate`, `verify rel` or `choose rel`
  (the words: the span GQA's annotations give the object's ids, or the name's one occurrence,
  read by `name_words`: a synonym, a plural or "piece of" before the name are words for it too);
- a relation of a `relate` or `verify rel`: its opposite (rules/relations.tsv), or, for a spatial
  relation of that list, another one (the words: the relation's one occurrence in the program's
  words);
- an attribute value of a `filter`, `verify` or `choose` of a known type (colour, material, pose,
  position...): another value of that type that some object of the graph has;
- a redundant attribute of a `filter` dropped (Super-CLEVR's rd-: "the white car" -> "the car"
  where the car is the only one), or every attribute of a selected object added (rd+: "the car"
  -> "the large white metal car").
An edit whose answer changes is a `contrast`; one whose answer provably stays is an `invariance`:
a synonym or kind naming the same one object ("the man" -> "the person"), a `choose` whose
rejected option is replaced by another the graph excludes ("gray or yellow" -> "green or yellow"),
or a dropped or added redundant attribute. Contrasts take the first ranks; invariances fill the
ranks left (`edit_base.Found`). Each kind of edit has its module (`edit_objects`,
`edit_relations`, `edit_attributes`, `edit_redundancy`); this one runs them and builds the results.

A candidate is kept only if:
- the original program, executed with GQA's ids, gives the gold answer (else the graph and the
  annotation disagree, and nothing built on it is proven);
- a new name is a noun the lexicon knows, of another kind than every object the program names,
  and it denotes exactly one object of the graph (the new words say "the X'");
- the edited program executes without refusal, and every claim its answer rests on is shown by
  the graph (`programs.proofs`: absences, relations, attributes, ids the words pick out, new
  objects said as "the" ones);
- the words around a new name say nothing of it the program does not check: no adjective no
  filter says ("the black purse" annotated as "purse"), no possessive ("her racket");
- the new words do not give the answer away, and the new question is not one of the image's.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from contrastgen.language.lexicon import Lexicon
from contrastgen.programs.edit_attributes import AttributeEdits
from contrastgen.programs.edit_base import (
    REFERENCE_OPS,
    Found,
    dependents,
    reference_name,
    with_ids,
)
from contrastgen.programs.edit_objects import ObjectEdits
from contrastgen.programs.edit_redundancy import RedundancyEdits
from contrastgen.programs.edit_relations import RelationEdits
from contrastgen.programs.gqa import (
    PRONOUNS,
    SCENE,
    Execution,
    GqaExecutor,
    ProgramRefusal,
    Step,
    parse_program,
    split_reference,
    step_of,
)
from contrastgen.programs.proofs import EditProofs, bare, claimed_whole
from contrastgen.programs.wording import doubled_words
from contrastgen.scene.index import SceneIndex

PROGRAM_PATH = "program"  # the `template` of a program-path contrast set
_ASKING = ("query", "verify", "choose", "same", "different", "common")  # steps that ask of objects
ID_SUFFIX = "p"
EVIDENCE_VERSION = 1


class EditRefusal(Exception):
    """Why a question got no program edit; `reason` is one of engine.REASONS."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class ProgramEditor:
    """The program edits of one question, on its image's shared scene index."""

    scene: SceneIndex
    graph: dict[str, Any]
    lex: Lexicon
    executor: Callable[[], GqaExecutor] = field(init=False, repr=False)  # a fresh executor per run
    proofs: EditProofs = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # made from the editor's parts, not a bound method: the proofs holding the editor would be
        # a reference cycle, and each question's editor, with its image's whole index, would then
        # stay until the collector found it instead of going when the question is done
        self.executor = functools.partial(GqaExecutor, self.scene, self.lex, self.graph)
        self.proofs = EditProofs(self.scene, self.lex, self.executor)

    def perturb(self, question_id: str, question: dict[str, Any], *, max_k: int, seed: int,
                existing: set[str], normalize: Any) -> list[dict[str, Any]]:
        """Up to `max_k` proven perturbations, ranked; EditRefusal when there is none."""
        semantic = question.get("semantic")
        gold = str(question.get("answer", "")).strip().lower()
        try:
            steps = parse_program(semantic)
            original = self.executor().run_steps(steps)
            got = original.answer
        except ProgramRefusal as exc:
            raise EditRefusal("program_mismatch" if exc.reason in ("program_mismatch", "malformed_program")
                              else "not_executable") from None
        if got != gold:
            raise EditRefusal("answer_mismatch")
        rng = random.Random(f"{seed}/{question_id}/{PROGRAM_PATH}")
        found = Found(existing, normalize, max_k)
        edit = _Edit(self, question, steps, semantic, gold, original)
        if edit.presupposition_fails():
            raise EditRefusal("original_presupposition")
        uninformative = False
        for edits in (lambda i: edit.at(i, rng, found), lambda i: edit.redundancy_at(i, found)):
            for index in range(len(steps)):
                if found.full:
                    break
                for p in edits(index):
                    if edit.says_nothing(p):
                        uninformative = True  # "What animal is black? animal"
                        continue
                    found.offer(p)
                    if found.full:
                        break
        if not found.items:
            if not any(edit.editable(i) for i in range(len(steps))):
                raise EditRefusal("no_argument")  # "Which place is it?": nothing the words could change
            if not found.aligned:
                raise EditRefusal("unaligned")
            if edit.prone_refused:
                raise EditRefusal("unannotated_prone")
            raise EditRefusal("uninformative_answer" if uninformative else
                              "attribute_kind" if edit.unfit_refused else "no_distractor")
        out = []
        for rank, p in enumerate(found.items, 1):
            out.append({"question_id": f"{question_id}_{ID_SUFFIX}{rank}", "question": p["question"],
                        "answer": p["answer"], "rank": rank, "change": p["change"], "evidence": p["evidence"],
                        "semantic": p["semantic"], "kind": p["kind"]})
        return out


@dataclass
class _Edit(ObjectEdits, RelationEdits, AttributeEdits, RedundancyEdits):
    """The edits of one question: its program, its words and its gold answer."""

    editor: ProgramEditor
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
        for s in self.steps:
            name, ids = split_reference(s.argument)
            if s.operation in ("select", "relate") and ids and name not in PRONOUNS and name != "_":
                by_words.append(Step(s.operation, name, s.dependencies))
            else:
                by_words.append(s)
        if by_words == self.steps:
            return False
        try:
            again = self.editor.executor().run_steps(by_words)
        except ProgramRefusal:
            return True
        asked = {d for s in self.steps if s.head in _ASKING for d in s.dependencies}
        for i in asked:
            mine, theirs = self.original.values[i], again.values[i]
            if not isinstance(mine, str) and not isinstance(theirs, str) and set(mine) != set(theirs):
                return True
        return False

    def says_nothing(self, p: dict[str, Any]) -> bool:
        """Is a `query: name` answer the question's own category word or a kind above it ("What
        animal is black? animal", "the piece of furniture ...? furniture")? It tells nothing."""
        semantic = p["semantic"]
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
        answer = str(p["answer"]).strip().lower()
        lex = self.editor.lex
        return bool(noun) and noun not in ("_", SCENE) and (answer == noun.lower() or lex.is_a(noun, answer))

    def editable(self, index: int) -> bool:
        """Has the step an argument some edit changes: a name, a relation, a typed value?"""
        step = self.steps[index]
        if step.operation in REFERENCE_OPS and reference_name(step) not in ("_", "", SCENE):
            return True
        return step.operation in ("relate", "verify rel") or (
            step.head in ("filter", "verify", "choose") and step.kind not in ("", "rel", "name"))

    def at(self, index: int, rng: random.Random, found: Found) -> Iterator[dict[str, Any]]:
        step = self.steps[index]
        if step.operation in ("relate", "verify rel"):
            yield from self._relations(index, rng, found)
        if step.operation in REFERENCE_OPS:
            yield from self._references(index, rng, found)
        if step.head in ("filter", "verify", "choose") and step.kind not in ("", "rel", "name"):
            yield from self._attributes(index, rng, found)

    def redundancy_at(self, index: int, found: Found) -> Iterator[dict[str, Any]]:
        """rd- and rd+ at one step: offered after every other edit of the question, so that of
        the invariances they take the last ranks (a renaming or a `choose` swap says more)."""
        step = self.steps[index]
        if not found.wants_invariance:
            return
        if step.head == "filter":
            yield from self._redundant(index, found)
        if step.operation == "select":
            yield from self._all_attributes(index, found)

    def execute(self, index: int, argument: str) -> tuple[list[dict[str, Any]], Execution, set[int]] | None:
        """The program with step `index`'s argument replaced and the steps that read it by name,
        executed; None where the result cannot be proven. Returned with it: the steps whose ids
        the execution rewrites.

        A `choose rel` downstream keeps its ids: they name its own object, which the edit does
        not change. An edited `filter` also frees the reference it narrows: GQA's ids there are
        the objects the old value picked ("select: clothing (12)" is the white glove), and
        "clothing that is blue" must be looked for among all the clothing."""
        downstream = dependents(self.steps, index)
        rewritten = downstream | {index} | self._narrowed(index)
        edited = list(self.semantic)
        parsed = list(self.steps)
        edited[index] = {**edited[index], "argument": argument}
        parsed[index] = step_of(edited[index])
        for i in rewritten - {index}:
            if self.steps[i].operation != "choose rel":
                edited[i] = bare(edited[i])
                parsed[i] = step_of(edited[i])
        try:
            run = self.editor.executor().run_steps(parsed, prefix=self.original, start=min(rewritten))
        except ProgramRefusal:
            return None
        if not self.editor.proofs.holds(edited, parsed, self.steps, downstream, run):
            return None
        why = self.editor.proofs.new_references_unshown(self.claimed, parsed, run, self.original)
        if why is not None:
            self.prone_refused |= why == "unannotated_prone"
            return None
        return edited, run, rewritten

    def _narrowed(self, index: int) -> set[int]:
        """The `select` or `relate` whose objects a `filter` at `index` narrows (through other
        filters), if any."""
        j = index
        while self.steps[j].head == "filter" and self.steps[j].dependencies:
            j = self.steps[j].dependencies[0]
        return {j} if j != index and self.steps[j].operation in ("select", "relate") else set()

    def perturbation(self, edited: list[dict[str, Any]], run: Execution, index: int, rewritten: set[int],
                     words: str, change: dict[str, str], facts: list[dict[str, Any]],
                     kind: str, attributes: dict[str, list[str]] | None = None) -> dict[str, Any]:
        """The perturbation of an executed edit: its program with every reference's ids from the
        execution, and evidence listing every object the program touched (with the attributes
        the edit's answer rests on)."""
        out = [with_ids(s, run.refs.get(i)) if i in rewritten else s for i, s in enumerate(edited)]
        scene = self.editor.scene
        attributes = self._compared(edited, run, attributes or {})
        touched = {o for ids in run.refs.values() for o in ids} | set(attributes)
        objects = []
        for o in sorted(touched):
            fact: dict[str, Any] = {"fact": "object", "id": o, "name": scene.objects[o].name}
            if attributes and attributes.get(o):
                fact["attributes"] = attributes[o]
            objects.append(fact)
        return {"question": words, "answer": run.answer, "semantic": out, "change": change,
                "evidence": {"version": EVIDENCE_VERSION,
                             "query": {"op": "program", "step": index if index >= 0 else int(change["slot"][4:])},
                             "facts": objects + facts, "answer": run.answer},
                "kind": kind}

    def _compared(self, edited: list[dict[str, Any]], run: Execution,
                  attributes: dict[str, list[str]]) -> dict[str, list[str]]:
        """`attributes`, with the values a `same`, `different` or `common` step compared of each
        of its objects: the colours "Do the cup and the pants have the same color? no" rests on."""
        out = {o: list(v) for o, v in attributes.items()}
        executor = self.editor.executor()
        for step in edited:
            head, _, kind = step["operation"].partition(" ")
            if head not in ("same", "different", "common"):
                continue
            kinds = ["color", "material", "shape"] if head == "common" else [kind or step["argument"].strip()]
            for d in step["dependencies"]:
                value = run.values[d]
                for o in () if isinstance(value, str) else value:
                    held = {v for k in kinds for v in executor.values_of(o, k)} & self.editor.scene.objects[o].attributes
                    out[o] = sorted(set(out.get(o, ())) | held)
        return out

    def _reads_well(self, words: str) -> bool:
        """The new words add no doubled word ("the grass the person is near near the umbrella")."""
        return doubled_words(words) <= doubled_words(self.text)
