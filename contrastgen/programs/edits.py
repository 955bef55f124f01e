"""Perturbing a question of any GQA type by editing one argument of one step of its program.

Why through the program: the program says what the question asks, whatever its type (GQA has over
100), and executing the edited program on the graph gives the new answer. The words follow the
edit exactly: only the words that say the changed argument change (and an article before a noun).

The edits, each at one step:
- an object's name, in a `select`, or in the reference of a `relate`, `verify rel` or `choose rel`
  (the words: the span GQA's annotations give the object's ids, or the name's one occurrence);
- a relation of a `relate` or `verify rel`: its opposite (rules/relations.tsv), or, for a spatial
  relation of that list, another one (the words: the relation's one occurrence in the program's
  words);
- an attribute value of a `filter`, `verify` or `choose` of a known type (colour, material, pose,
  position...): another value of that type that some object of the graph has.
- a redundant attribute of a `filter` dropped (Super-CLEVR's rd-: "the white car" -> "the car"
  where the car is the only one), or every attribute of a selected object added (rd+: "the car"
  -> "the large white metal car").
An edit whose answer changes is a `contrast`; one whose answer provably stays is an `invariance`:
a synonym or kind naming the same one object ("the man" -> "the person"), a `choose` whose
rejected option is replaced by another the graph excludes ("gray or yellow" -> "green or yellow"),
or a dropped redundant attribute.

A candidate is kept only if:
- the original program, executed with GQA's ids, gives the gold answer (else the graph and the
  annotation disagree, and nothing built on it is proven);
- a new name is a noun the lexicon knows, of another kind than every object the program names,
  and it denotes exactly one object of the graph (the new words say "the X'");
- the edited program executes without refusal, and every claim its answer rests on is shown by
  the graph (`programs.proofs`: absences, relations, attributes, ids the words pick out);
- the new words do not give the answer away, and the new question is not one of the image's.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from contrastgen.language.lexicon import Lexicon, attribute_opposites, read_word_list
from contrastgen.programs.gqa import (
    MIDDLE,
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
from contrastgen.programs.proofs import EditProofs, bare, negated, shades
from contrastgen.programs.wording import (
    Span,
    aligned_span,
    doubled_words,
    follows_indefinite,
    replace,
    said_once,
    without,
)
from contrastgen.resources import lexicon_dir
from contrastgen.scene.ground import denoted_ids, same_kind
from contrastgen.scene.index import SceneIndex

PROGRAM_PATH = "program"  # the `template` of a program-path contrast set
ID_SUFFIX = "p"
EVIDENCE_VERSION = 1

_REFERENCE_OPS = ("select", "relate", "verify rel", "choose rel")
_RELATION_OPS = ("relate", "verify rel", "choose rel")
_POSITION_VALUES = {"hposition": ("left", "right"), "vposition": ("top", "bottom")}
# rd+ says an object's attributes before its noun in English adjective order (size, age, shape,
# colour, material)
RD_PLUS_TYPES = ("size", "age", "shape", "color", "material")


@functools.cache
def _referring_kinds() -> frozenset[str]:
    return frozenset(read_word_list(lexicon_dir() / "referring_kinds.txt"))


@functools.cache
def _determinerless() -> frozenset[str]:
    return frozenset(read_word_list(lexicon_dir() / "determinerless.txt"))


class EditRefusal(Exception):
    """Why a question got no program edit; `reason` is one of engine.REASONS."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def dependents(steps: list[Step], index: int) -> set[int]:
    """Steps that read `index`'s value, directly or through others."""
    out: set[int] = set()
    for i, s in enumerate(steps):
        if i > index and any(d == index or d in out for d in s.dependencies):
            out.add(i)
    return out


def _with_ids(step: dict[str, Any], ids: tuple[str, ...] | None) -> dict[str, Any]:
    name, old = split_reference(step["argument"])
    if old is None and ids is None:
        return step
    return {**step, "argument": f"{name} ({','.join(ids) if ids else '-'})"}


def _reference_name(step: Step) -> str:
    """The object name a reference argument gives: "man" in "man (12)" and in "man,wearing,s"."""
    return split_reference(step.argument)[0].split(",")[0].strip()


def _relation_of(step: Step) -> tuple[str, str, str]:
    """(name, relation, role) of a relation argument; relation "" when it has none."""
    parts = [p.strip() for p in split_reference(step.argument)[0].split(",")]
    if len(parts) < 3:
        return parts[0], "", ""
    return parts[0], ",".join(parts[1:-1]).strip(), parts[-1]


@dataclass
class _Found:
    """One question's perturbations so far, in rank order, without repeats of the image's
    questions or of each other."""

    existing: set[str]
    normalize: Any
    max_k: int
    items: list[dict[str, Any]] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)
    aligned: bool = False  # some step's argument was found in the words

    def offer(self, p: dict[str, Any]) -> None:
        key = self.normalize(p["question"])
        if key not in self.existing and key not in self.keys:
            self.keys.add(key)
            self.items.append(p)

    @property
    def full(self) -> bool:
        return len(self.items) >= self.max_k


@dataclass
class ProgramEditor:
    """The program edits of one image's questions."""

    scene: SceneIndex
    graph: dict[str, Any]
    lex: Lexicon

    def __post_init__(self) -> None:
        self.proofs = EditProofs(self.scene, self.lex, self.executor)

    def executor(self) -> GqaExecutor:
        return GqaExecutor(self.scene, self.lex, self.graph)

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
        found = _Found(existing, normalize, max_k)
        edit = _Edit(self, question, steps, semantic, gold, original)
        for edits in (lambda i: edit.at(i, rng, found), lambda i: edit.redundancy_at(i, found)):
            for index in range(len(steps)):
                if found.full:
                    break
                for p in edits(index):
                    found.offer(p)
                    if found.full:
                        break
        if not found.items:
            if not any(edit.editable(i) for i in range(len(steps))):
                raise EditRefusal("no_argument")  # "Which place is it?": nothing the words could change
            raise EditRefusal("no_distractor" if found.aligned else "unaligned")
        out = []
        for rank, p in enumerate(found.items, 1):
            out.append({"question_id": f"{question_id}_{ID_SUFFIX}{rank}", "question": p["question"],
                        "answer": p["answer"], "rank": rank, "change": p["change"], "evidence": p["evidence"],
                        "semantic": p["semantic"], "kind": p["kind"]})
        return out


@dataclass
class _Edit:
    """The edits of one question: its program, its words and its gold answer."""

    editor: ProgramEditor
    question: dict[str, Any]
    steps: list[Step]
    semantic: list[dict[str, Any]]
    gold: str
    original: Execution  # the original program's run: the values upstream of an edit stay these

    @property
    def text(self) -> str:
        return str(self.question.get("question", ""))

    def editable(self, index: int) -> bool:
        """Has the step an argument some edit changes: a name, a relation, a typed value?"""
        step = self.steps[index]
        if step.operation in _REFERENCE_OPS and _reference_name(step) not in ("_", "", SCENE):
            return True
        return step.operation in ("relate", "verify rel") or (
            step.head in ("filter", "verify", "choose") and step.kind not in ("", "rel", "name"))

    def at(self, index: int, rng: random.Random, found: _Found) -> Iterator[dict[str, Any]]:
        step = self.steps[index]
        if step.operation in ("relate", "verify rel"):
            yield from self._relations(index, rng, found)
        if step.operation in _REFERENCE_OPS:
            yield from self._references(index, rng, found)
        if step.head in ("filter", "verify", "choose") and step.kind not in ("", "rel", "name"):
            yield from self._attributes(index, rng, found)

    def redundancy_at(self, index: int, found: _Found) -> Iterator[dict[str, Any]]:
        """rd- and rd+ at one step: offered after every other edit of the question, so that the
        redundancy invariances fill ranks the contrasts leave free."""
        step = self.steps[index]
        if step.head == "filter":
            yield from self._redundant(index, found)
        if step.operation == "select":
            yield from self._all_attributes(index, found)

    # -- executing an edit ---------------------------------------------------------------------
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
            run = self.editor.executor().run_steps(parsed)
        except ProgramRefusal:
            return None
        if not self.editor.proofs.holds(edited, parsed, self.steps, downstream, run):
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
        out = [_with_ids(s, run.refs.get(i)) if i in rewritten else s for i, s in enumerate(edited)]
        scene = self.editor.scene
        touched = {o for ids in run.refs.values() for o in ids} | set(attributes or {})
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

    # -- objects -------------------------------------------------------------------------------
    def _references(self, index: int, rng: random.Random, found: _Found) -> Iterator[dict[str, Any]]:
        """Another name for the object a step refers to, where the words name it."""
        lex, step = self.editor.lex, self.steps[index]
        name = _reference_name(step)
        if name in ("_", "", SCENE) or name in PRONOUNS or lex.is_plural(name):
            return  # "are the cabinets": the verb and the number would have to change too
        ids = split_reference(step.argument)[1] or ()
        span = aligned_span(self.question, self.text, ids) or self._named_span(name)
        if span is None or self.text[span.start:span.end].lower() != name.lower():
            return  # the words for this object are not the program's name for it
        found.aligned = True
        relations = {_relation_of(self.steps[i])[1] for i in dependents(self.steps, index) | {index}
                     if self.steps[i].operation in _RELATION_OPS}
        # "What is the man wearing?" asks it of a person, not of a table; "to the left of" of anything
        same_category = any(r and not self._spatial(r) for r in relations)
        asks_kind = bool(lex.hyponyms(name)) and lex.is_a(self.gold, name)
        for cand, invariance in self._with_invariants(
                name, ids, self._candidates(name, rng, same_category=same_category, asks_kind=asks_kind)):
            p = self._try_name(index, span, name, cand, invariance=invariance, asks_kind=asks_kind)
            if p is not None:
                yield p

    def _named_span(self, name: str) -> Span | None:
        """Without annotations: the name's one occurrence, when no other step names the same
        thing (then the words cannot be about another object of the program)."""
        if sum(1 for s in self.steps if _reference_name(s) == name) != 1:
            return None
        return said_once(self.text, name)

    def _spatial(self, rel: str) -> bool:
        return all(r.strip() in self.editor.lex.relations for r in rel.split("|"))

    def _candidates(self, name: str, rng: random.Random, *, same_category: bool,
                    asks_kind: bool) -> Iterator[str]:
        """Names that may replace `name`: the graph's objects' names (only those of its category
        where a non-spatial relation is asked of it), and where the question asks which kind of
        thing something is ("What vehicle is it?"), the kinds the graph's objects are. The
        executor then refuses a candidate that lacks what the question asks of it."""
        lex, scene = self.editor.lex, self.editor.scene
        category = lex.category(name)
        if same_category and category is None:
            return
        named = [_reference_name(s) for s in self.steps if s.operation in _REFERENCE_OPS]
        names = {o.name for o in scene.objects.values()
                 if not same_category or lex.category(o.name) == category}
        if asks_kind:
            names |= {k for o in scene.objects.values() for k in (*lex.kinds(o.name), lex.category(o.name))
                      if k in _referring_kinds()}
        pool = sorted(n for n in names
                      if lex.is_known(n) and not lex.is_plural(n) and not lex.is_unannotated_prone(n)
                      and n not in _determinerless()
                      and all(not same_kind(n, m, lex) for m in named if m not in ("_", "")))
        rng.shuffle(pool)
        yield from pool

    def _with_invariants(self, name: str, ids: tuple[str, ...],
                         contrasts: Iterator[str]) -> Iterator[tuple[str, bool]]:
        """First the names that denote the same one object in other words (a synonym, or a
        general noun for a kind it is, when it is the only one: "the man" -> "the person"), whose
        answer must not change; then the contrast candidates."""
        lex, scene = self.editor.lex, self.editor.scene
        if len(ids) == 1:
            same = (set(lex.synonyms(name)) | (set(lex.kinds(name)) & _referring_kinds())) - _determinerless()
            for cand in sorted(same - {name, lex.canonical(name)}):
                if (lex.is_known(cand) and not lex.is_plural(cand) and not lex.is_unannotated_prone(cand)
                        and not lex.is_uncountable(cand) and denoted_ids(cand, scene, lex) == list(ids)):
                    yield cand, True
        for cand in contrasts:
            yield cand, False

    def _try_name(self, index: int, span: Span, name: str, cand: str, *, invariance: bool,
                  asks_kind: bool) -> dict[str, Any] | None:
        lex, scene = self.editor.lex, self.editor.scene
        if follows_indefinite(self.text, span) and (lex.is_uncountable(cand) or lex.is_plural_only(cand)):
            return None  # "Is there a board?" cannot become "Is there a fog?"
        ids = denoted_ids(cand, scene, lex)
        if len(ids) != 1:
            return None  # "the <cand>" must be one object
        if self._cannot_answer(index, ids[0]):
            return None
        step = self.steps[index]
        argument = cand
        if step.operation in _RELATION_OPS:
            _, rel, role = _relation_of(step)
            argument = f"{cand},{rel},{role}"
        done = self.execute(index, argument)
        if done is None:
            return None
        edited, run, rewritten = done
        answer = run.answer
        if (answer == self.gold) != invariance or run.refs.get(index) != tuple(ids):
            return None
        if not invariance and self._gives_away(answer, cand, asks_kind):
            return None
        facts = [{"fact": "only", "names": self._kind_names(cand), "ids": [ids[0]]}]
        words = replace(self.text, span, cand, noun=True)
        if not self._reads_well(words):
            return None
        return self.perturbation(edited, run, index, rewritten, words,
                                 {"kind": "object", "slot": f"step{index}", "from": name, "to": cand},
                                 facts, "invariance" if invariance else "contrast")

    def _cannot_answer(self, index: int, oid: str) -> bool:
        """A shortcut, never a decision: True only where executing the edit would surely be
        refused, because the step reading the new object asks what it lacks (its one colour, an
        edge of the relation) and nothing downstream could turn the empty result into an answer."""
        step, scene, proofs = self.steps[index], self.editor.scene, self.editor.proofs
        if step.operation == "choose rel":  # the new object against the one it is asked of
            sources = self.original.values[step.dependencies[0]] if step.dependencies else ()
            _, rels, role = _relation_of(step)
            return not isinstance(sources, str) and not any(
                self._linked(oid, rel, x, role) for rel in rels.split("|") for x in sources)
        if step.head != "select":
            return False
        exist_after = any(self.steps[i].operation == "exist" for i in dependents(self.steps, index))
        for s in self.steps[index + 1:]:
            if s.dependencies != (index,):
                continue
            if s.head == "query" and s.argument not in ("name", ""):
                values = self.editor.executor().values_of(oid, s.argument)
                if len(values) != 1 or values == {MIDDLE}:
                    return True
            elif s.operation == "relate":
                name, rel, role = _relation_of(s)
                edges = scene.in_edges if role == "s" else scene.out_edges
                if not any(r == rel for r, _ in edges.get(oid, ())) and (
                        not exist_after or (name not in ("_", "") and not proofs.absence_shown(name))):
                    return True  # nothing so related, and no answer could rest on that
            elif s.operation == "verify rel":
                name, rel, role = _relation_of(s)
                named = denoted_ids(name, scene, self.editor.lex)
                if len(named) != 1:
                    return True
                subject, obj = (named[0], oid) if role == "s" else (oid, named[0])
                if proofs.relation_decided(subject, rel, obj) is None:
                    return True
            elif s.head in ("filter", "verify") and s.kind not in ("", "rel", "name", "hposition", "vposition"):
                value = s.argument.strip().lower()
                if negated(value):
                    continue
                try:  # as the executor reads the step: a filter any attribute, a verify its type
                    held = self.editor.executor().has(oid, "attribute" if s.head == "filter" else s.kind, value)
                except ProgramRefusal:
                    return True
                if not held and not proofs.excluded(oid, s.kind, value):
                    return True  # its "no" could not be shown
            elif s.operation == "choose rel":  # its own object (by GQA's ids) against the new one
                named = split_reference(s.argument)[1] or ()
                _, rels, role = _relation_of(s)
                if not any(self._linked(n, rel, oid, role) for rel in rels.split("|") for n in named):
                    return True
            elif s.head == "choose" and s.kind not in ("", "rel", "name"):
                values = self.editor.executor().values_of(oid, s.kind)
                if not any(o.strip().lower() in values for o in s.argument.split("|")):
                    return True
        return False

    def _linked(self, named: str, rel: str, source: str, role: str) -> bool:
        """Is there the edge a relation argument asks: `named` its subject (s) or object (o)?"""
        edge = (named, rel.strip(), source) if role == "s" else (source, rel.strip(), named)
        return edge in self.editor.scene.edges

    def _reads_well(self, words: str) -> bool:
        """The new words add no doubled word ("the grass the person is near near the umbrella")."""
        return doubled_words(words) <= doubled_words(self.text)

    def _gives_away(self, answer: str, cand: str, asks_kind: bool) -> bool:
        """"What kind of clock is it? clock": the new words say the answer. Where the question
        asks which kind of a thing it is, the answer is a kind of the new word by design."""
        lex = self.editor.lex
        if answer in {f.lower() for f in lex.forms(cand)} or lex.canonical(answer) == lex.canonical(cand):
            return True
        return not asks_kind and lex.is_a(answer, cand)

    def _kind_names(self, word: str) -> list[str]:
        """Every surface name of the kinds `word` denotes, and no name of another kind ("glasses"
        is a form of "glass" but names spectacles): what an `only` fact must list."""
        lex = self.editor.lex
        kinds = {lex.canonical(word)} | set(lex.hyponyms(word))
        names = {n.lower() for k in kinds for n in lex.forms(k) if lex.canonical(n) in kinds}
        names |= {o.name for o in self.editor.scene.objects.values() if o.canonical in kinds}
        return sorted(names)

    # -- relations -----------------------------------------------------------------------------
    def _relations(self, index: int, rng: random.Random, found: _Found) -> Iterator[dict[str, Any]]:
        """The relation of a `relate` or `verify rel` replaced by its opposite or another spatial
        relation, where the question says it once in the program's words ("to the left of")."""
        lex, step = self.editor.lex, self.steps[index]
        name, rel, role = _relation_of(step)
        if not rel:
            return
        span = said_once(self.text, rel)
        if span is None or any(i != index and rel in s.argument for i, s in enumerate(self.steps)):
            return
        found.aligned = True
        opp = lex.opposite_relation(rel)
        # a spatial relation may become another; "wearing" only its opposite, if it has one:
        # "What is the man to the left of?" no longer asks what "What is the man wearing?" asked
        others = sorted(r for r in lex.relations if r not in (rel, opp)) if rel in lex.relations else []
        rng.shuffle(others)
        ids_part = "" if step.operation == "relate" else self.semantic[index]["argument"].strip()[
            len(split_reference(step.argument)[0]):]
        sources = self.original.values[step.dependencies[0]] if step.dependencies else ()
        if isinstance(sources, str):
            return
        for new in ([opp] if opp else []) + others:
            if not self._may_relate(index, sources, new, role):
                continue
            done = self.execute(index, f"{name},{new},{role}{ids_part}")
            if done is None:
                continue
            edited, run, rewritten = done
            if run.answer == self.gold:
                continue
            if step.operation == "relate" and len(run.refs.get(index, ())) != 1:
                continue  # "the cup to the right of the table" must be one cup
            words = replace(self.text, span, new)
            if not self._reads_well(words):
                continue
            yield self.perturbation(edited, run, index, rewritten, words,
                                    {"kind": "relation", "slot": f"step{index}", "from": rel, "to": new},
                                    [], "contrast")

    def _may_relate(self, index: int, sources: tuple[str, ...], rel: str, role: str) -> bool:
        """A shortcut, never a decision: False only where the edit would surely be refused. A
        `relate` must find one object, so some source needs an edge of the relation; a `verify
        rel` needs its one pair decided, by the edge or by its opposite's (`proofs`)."""
        scene, step = self.editor.scene, self.steps[index]
        if step.operation == "relate":
            edges = scene.in_edges if role == "s" else scene.out_edges
            return any(r == rel for x in sources for r, _ in edges.get(x, ()))
        named = denoted_ids(_reference_name(step), scene, self.editor.lex)
        if len(sources) != 1 or len(named) != 1:
            return False
        subject, obj = (named[0], sources[0]) if role == "s" else (sources[0], named[0])
        return self.editor.proofs.relation_decided(subject, rel, obj) is not None

    # -- attributes ----------------------------------------------------------------------------
    def _attributes(self, index: int, rng: random.Random, found: _Found) -> Iterator[dict[str, Any]]:
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
        for position, old in enumerate(options):
            span = said_once(self.text, old)
            if span is None:
                continue
            found.aligned = True
            held = step.head == "choose" and old == self.gold
            for new in pool:
                if any(shades(new, o) for o in options):
                    continue  # "blue or light blue" asks nothing
                if held and not self._all_have(step, new):
                    continue  # neither option would hold: refused, so not tried
                argument = "|".join(new if i == position else o for i, o in enumerate(options))
                p = self._try_value(index, span, old, new, argument)
                if p is not None:
                    yield p

    # -- redundancy (Super-CLEVR's rd-) -------------------------------------------------------
    def _redundant(self, index: int, found: _Found) -> Iterator[dict[str, Any]]:
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
        name = _reference_name(self.steps[source])
        if isinstance(narrowed, str) or set(kept) != set(narrowed) or not kept \
                or set(denoted_ids(name, scene, lex)) != set(narrowed):
            return  # the value narrows the reference, or the name alone does not say these objects
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

    def _all_attributes(self, index: int, found: _Found) -> Iterator[dict[str, Any]]:
        """Every attribute the object has said before its noun (Super-CLEVR's rd+: "the car" ->
        "the large white metal car"): an invariance, since true attributes of the one object a
        reference names keep naming it. Types in English adjective order (RD_PLUS_TYPES), one
        value each; never a type the question asks (that would say the answer), never a value the
        words already say."""
        step, lex = self.steps[index], self.editor.lex
        name, ids = _reference_name(step), split_reference(step.argument)[1] or ()
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

    def _all_have(self, step: Step, value: str) -> bool:
        inputs = self.original.values[step.dependencies[0]] if step.dependencies else ()
        ex = self.editor.executor()
        return not isinstance(inputs, str) and all(value in ex.values_of(o, step.kind) for o in inputs)

    def _values_of_type(self, kind: str, rng: random.Random) -> list[str]:
        """The values of one attribute type that the graph's objects have, in a seeded order."""
        if kind in _POSITION_VALUES:
            values = list(_POSITION_VALUES[kind])
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
        if kind in _POSITION_VALUES:
            return []
        attrs = set(self.editor.scene.objects[oid].attributes)
        shown = set(self.editor.executor().values_of(oid, kind)) & attrs
        shown |= {a for v in values for a in attribute_opposites().get(v, frozenset()) if a in attrs}
        return sorted(shown)
