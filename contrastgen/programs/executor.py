"""The *executor* of GQA's functional programs (`semantic`): running one on a scene graph.

One of three modules about programs: the syntax (steps, references) is `datasets.gqa_program`,
the template path's reading of what a program asks is `scene.program_reading`, and this module
gives a program's answer on a graph.

Why an executor of our own: a perturbation of any GQA question type is an edit of one argument of
its program, and its new answer is what the edited program gives on the graph. The executor
therefore has to be exact about what each operation means and has to refuse, never guess, where
the graph does not decide: an empty set asked about, several objects that disagree, an attribute
type the rules do not know. The table of semantics is in docs/gqa-programs.md.

Object references follow GQA: an argument `name (12,13)` is the objects GQA's annotators meant,
by id; `name (-)` is GQA saying there is none; a bare `name` (an edited step) denotes every object
the lexicon says the name can denote (its forms, synonyms and kinds). Ids that are not in the
graph, or whose object the name does not denote (the verifier's rule), are a `program_mismatch`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contrastgen.datasets.gqa_program import (
    MalformedProgram,
    Objects,
    Reference,
    Step,
    read_reference,
    split_reference,
)
from contrastgen.datasets.gqa_program import parse_program as read_steps
from contrastgen.language.lexicon import Lexicon, iter_data_lines, read_word_list
from contrastgen.resources import rules_file
from contrastgen.scene.ground import denoted_ids
from contrastgen.scene.index import SceneIndex

SCENE = "scene"  # the value of `select: scene` (place, weather, room questions)
MIDDLE = "middle"  # a box within 10% of the centre: what `filter vposition: middle` selects
# GQA's programs select "he (12)" for "he": the ids say who, the word says nothing of the kind.
PRONOUNS = frozenset(read_word_list(rules_file("pronouns.txt")))
Value = Objects | str

# Scene-level attributes, read from the graph's own fields (GQA's graphs have `location`, `weather`).
_SCENE_FIELDS = {"place": "location", "room": "location", "location": "location", "weather": "weather"}
_VERTICAL_BAND = 0.10  # as SceneIndex.side: within 10% of the middle there is no clear top/bottom


class ProgramRefusal(Exception):
    """The program cannot be executed with certainty on this graph; `reason` says why."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


# Reasons, in the order docs/gqa-programs.md lists them.
REASONS = ("malformed_program", "unknown_operation", "program_mismatch", "empty", "ambiguous",
           "not_decidable")


def parse_program(semantic: Any) -> list[Step]:
    """GQA's `semantic` as steps (`datasets.gqa_program`); a malformed one is refused, with what is wrong."""
    try:
        return read_steps(semantic)
    except MalformedProgram as exc:
        raise ProgramRefusal("malformed_program", str(exc)) from None


@functools.lru_cache(maxsize=4)
def attribute_types(path: str | None = None) -> dict[str, frozenset[str]]:
    """rules/attribute_types.tsv: attribute value -> the GQA types it belongs to."""
    out: dict[str, set[str]] = {}
    for _, cols in iter_data_lines(rules_file("attribute_types.tsv") if path is None else Path(path)):
        if len(cols) >= 2:
            out.setdefault(cols[0].strip().lower(), set()).add(cols[1].strip())
    return {v: frozenset(t) for v, t in out.items()}


@dataclass
class Execution:
    """The values of every step, the objects each reference argument denoted (`refs`: step index
    -> ids, what a GQA program writes in the argument's parentheses: for `verify rel` and
    `choose rel`, the objects they name, related or not) and the answer (the last step's value)."""

    values: list[Value] = field(default_factory=list)
    refs: dict[int, Objects] = field(default_factory=dict)

    @property
    def answer(self) -> str:
        last = self.values[-1]
        if not isinstance(last, str):
            raise ProgramRefusal("malformed_program", "the last step gives objects, not an answer")
        return last


# A step's memoised outcome: its value and the objects its reference argument denoted (None: it
# has none), or, where it was refused, the refusal's reason and detail.
_Outcome = tuple[Value | None, Objects | None, str | None, str]


@dataclass
class ImageMemo:
    """What executing any program on one image computes that depends only on the image: each
    step's outcome by its operation, argument and input values (a step's value depends on nothing
    else), the objects a name denotes, and an object's values of an attribute type. Shared by
    every executor of the image (`GqaExecutor` finds it in the scene index's memo), so the
    original program, every edit of it, the proofs' re-runs by the words and the other questions
    of the image each compute a step once."""

    steps: dict[tuple[str, str, tuple[Value, ...]], _Outcome] = field(default_factory=dict)
    named: dict[str, Objects] = field(default_factory=dict)
    values: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    # (relation, role, object id) -> the other objects standing in the relation to it: as its
    # subject (role s) or its object (o)
    related: dict[tuple[str, str, str], frozenset[str]] = field(default_factory=dict)
    # attribute type -> the values of it the image's objects have, sorted
    type_values: dict[str, tuple[str, ...]] = field(default_factory=dict)


class GqaExecutor:
    """One scene graph's executor; cheap to build (the scene index and its `ImageMemo` are shared)."""

    def __init__(self, scene: SceneIndex, lex: Lexicon, graph: dict[str, Any] | None = None):
        self.execution = Execution()
        self.current = 0
        self.scene = scene
        self.lex = lex
        self.graph = graph or {}
        self.types = attribute_types()
        # keyed by all a step's value reads beyond its inputs: the lexicon and the graph's own
        # scene fields (`_SCENE_FIELDS`), so an executor given other fields gets its own memo
        key = ("executor", lex, repr(self.graph.get("location")), repr(self.graph.get("weather")))
        memo = scene.memo.get(key)
        if memo is None:
            memo = scene.memo[key] = ImageMemo()
        self.memo: ImageMemo = memo

    # -- the program ---------------------------------------------------------------------------
    def run(self, semantic: Any) -> Execution:
        return self.run_steps(parse_program(semantic))

    def run_steps(self, steps: Sequence[Step], *, prefix: Execution | None = None,
                  start: int = 0) -> Execution:
        """Execute parsed steps (the editor's edited programs are parsed once, not per run).

        An edit changes no step before `start`: those steps' values and references are taken
        from `prefix`, the run of the same steps (a step's value depends only on its argument
        and the steps it reads, all before it)."""
        if prefix is not None and start:
            ex = Execution(prefix.values[:start], {i: ids for i, ids in prefix.refs.items() if i < start})
        else:
            ex = Execution([], {})
        self.execution = ex
        values, refs, outcomes = ex.values, ex.refs, self.memo.steps
        read = values.__getitem__
        for i in range(len(values), len(steps)):
            step = steps[i]
            ins = tuple(map(read, step.dependencies))
            key = (step.operation, step.argument, ins)
            outcome = outcomes.get(key)
            if outcome is None:
                outcome = outcomes[key] = self._outcome(i, step, ins)
            value, ids, refused, detail = outcome
            if refused is not None:
                raise ProgramRefusal(refused, detail)
            if ids is not None:
                refs[i] = ids
            values.append(value)  # type: ignore[arg-type]
        return ex

    def _outcome(self, i: int, step: Step, ins: tuple[Value, ...]) -> _Outcome:
        """Step `i` executed: its value and referred objects, or its refusal."""
        self.current = i
        try:
            value = self.step(step, ins)
        except ProgramRefusal as exc:
            return None, None, exc.reason, exc.detail
        return value, self.execution.refs.get(i), None, ""

    def referred(self, ids: Objects) -> Objects:
        """Record the objects the current step's reference argument denotes."""
        self.execution.refs[self.current] = ids
        return ids

    def step(self, step: Step, ins: Sequence[Value]) -> Value:
        op = _OPS.get(step.head)
        if op is None:
            raise ProgramRefusal("unknown_operation", step.operation)
        return op(self, step, ins)

    # -- references ----------------------------------------------------------------------------
    def named(self, name: str) -> Objects:
        """Every object `name` can denote (lexicon forms, synonyms, kinds); `_` is any object."""
        found = self.memo.named.get(name)
        if found is None:
            if name in ("_", ""):
                found = tuple(self.scene.objects)
            else:
                ids = set(denoted_ids(name, self.scene, self.lex))
                ids |= set(self.scene.by_name.get(name.lower(), ()))
                found = tuple(i for i in self.scene.objects if i in ids)
            self.memo.named[name] = found
        return found

    def by_ids(self, name: str, ids: Objects) -> Objects:
        """GQA's ids, each checked to be an object the name denotes (its forms, synonyms, kinds).

        Strict, as `contrastgen verify` reads the same ids: a graph whose object is "furniture"
        does not show it is the "desk" a program selects (graphs and questions of different
        releases name objects differently), and whatever is built on that step would rest on
        what the graph does not say. Pronouns ("he (12)") say nothing of the kind."""
        if name in ("_", "") or name in PRONOUNS:
            denoted: frozenset[str] | set[str] = frozenset()
        else:
            denoted = set(self.named(name))
        for i in ids:
            obj = self.scene.objects.get(i)
            if obj is None:
                raise ProgramRefusal("program_mismatch", f"object {i} is not in the graph")
            if name not in ("_", "") and name not in PRONOUNS and i not in denoted:
                raise ProgramRefusal("program_mismatch", f"object {i} is a {obj.name}, not a {name}")
        return ids

    def _is_named(self, actual: str, name: str) -> bool:
        """Is an object called `actual` a `name`: the same kind or a kind of it? What `choose name`
        and `verify name` ask, so strict."""
        return actual == name.lower() or self.lex.is_a(actual, name)

    def _may_be_named(self, actual: str, name: str) -> bool:
        """Could it be one in some sense of the words ("dish" for a bowl; "bird" for a kite, the
        hawk)? Neither a yes nor a no can rest on that."""
        return self.lex.canonical(actual) in self.lex.may_denote(name)

    # -- attributes ----------------------------------------------------------------------------
    def values_of(self, oid: str, kind: str) -> frozenset[str]:
        """The object's values of one attribute type (its box decides positions)."""
        found = self.memo.values.get((oid, kind))
        if found is None:
            found = self.memo.values[oid, kind] = self._values_of(oid, kind)
        return found

    def _values_of(self, oid: str, kind: str) -> frozenset[str]:
        if kind == "hposition":
            return frozenset({self.scene.side(oid) or MIDDLE})
        if kind == "vposition":
            return frozenset({self._vertical(oid) or MIDDLE})
        if kind == "name":
            return frozenset({self.scene.objects[oid].name})
        attrs = self.scene.objects[oid].attributes
        if kind == "color":
            return frozenset(a for a in attrs if self.lex.is_color(a))  # as the colour template reads them
        return frozenset(a for a in attrs if kind in self.types.get(a, ()))

    def has(self, oid: str, kind: str, value: str) -> bool:
        """Does the object have `value` as a `kind`? Typed (verify, choose): one of its values of
        that type; "attribute" (filter, untyped choose): any attribute it carries."""
        value = value.strip().lower()
        if kind == "name":
            actual = self.scene.objects[oid].name
            if self._is_named(actual, value):
                return True
            if self._may_be_named(actual, value):  # "What kite is this, a puppy or a bird?"
                raise ProgramRefusal("not_decidable", f"a {actual!r} is a {value!r} only in another sense")
            return False
        if kind == "attribute":
            return value in self.scene.objects[oid].attributes
        if kind in ("hposition", "vposition"):
            values = self.values_of(oid, kind)
            if values == {MIDDLE} and value != MIDDLE:
                # the band is this project's reading of "the middle", not GQA's: near the centre
                # neither "on the left" nor "not on the left" is shown by the box
                raise ProgramRefusal("not_decidable", f"no clear {kind}: the box is in the middle")
            return value in values
        if not (self.lex.is_color(value) if kind == "color" else kind in self.types.get(value, ())):
            # "verify color: dark": a value the rules do not type could be there and read as "no"
            raise ProgramRefusal("not_decidable", f"{value!r} is not a {kind} the rules know")
        return value in self.values_of(oid, kind)

    def _vertical(self, oid: str) -> str | None:
        o = self.scene.objects[oid]
        if not self.scene.height:
            return None
        c, half = o.y + o.h / 2.0, self.scene.height / 2.0
        if abs(c - half) < _VERTICAL_BAND * self.scene.height:
            return None
        return "top" if c < half else "bottom"

    def one_value(self, objects: Objects, kind: str) -> str:
        """The value of `kind` that every object of the set has, and the only one: else refused."""
        if not objects:
            raise ProgramRefusal("empty", f"query {kind} of nothing")
        found = {frozenset(self.values_of(o, kind)) for o in objects}
        if len(found) != 1:
            raise ProgramRefusal("ambiguous", f"the objects differ in {kind}")
        values = found.pop()
        if values == {MIDDLE}:
            raise ProgramRefusal("not_decidable", f"no clear {kind}: the box is in the middle")
        if len(values) != 1:
            raise ProgramRefusal("ambiguous" if values else "not_decidable",
                                 f"{len(values)} values of {kind}")
        return next(iter(values))


def _objects(v: Value, step: Step) -> Objects:
    if isinstance(v, str) and v != SCENE:
        raise ProgramRefusal("malformed_program", f"{step.operation} needs objects, got an answer")
    return () if v == SCENE else v  # type: ignore[return-value]


# Steps that ask of ONE object (a colour, a side, a relation from it): asked of several objects,
# even ones that agree, the words' "the X" names more than one thing, and the verifier refuses it.
_ONE_OBJECT_QUERIES = ("color", "hposition")


def _one_object(objects: Objects, step: Step) -> Objects:
    if len(objects) > 1:
        raise ProgramRefusal("ambiguous", f"{step.operation} asks of one object, got {len(objects)}")
    return objects


def _only(ins: Sequence[Value], step: Step) -> Value:
    if len(ins) != 1:
        raise ProgramRefusal("malformed_program", f"{step.operation} needs one input, has {len(ins)}")
    return ins[0]


def _yes(b: bool) -> str:
    return "yes" if b else "no"


def _select(ex: GqaExecutor, step: Step, ins: Sequence[Value]) -> Value:
    name, ids = split_reference(step.argument)
    if name == SCENE and ids is None:
        return SCENE
    return ex.referred(ex.named(name) if ids is None else ex.by_ids(name, ids))


def _relation_parts(argument: str) -> Reference:
    """(name, relation, role, ids) of a relation argument; a malformed one is refused."""
    ref = read_reference(argument)
    if not ref.is_relation:
        raise ProgramRefusal("malformed_program", f"relation argument {argument!r}")
    return ref


def _related(ex: GqaExecutor, sources: Objects, name: str, rel: str, role: str) -> Objects:
    """Objects named `name` standing in `rel` to some source: as subject (s) or object (o)."""
    candidates = ex.named(name)
    if not sources:
        return ()
    memo = ex.memo.related
    found: set[str] | frozenset[str] = set()
    for x in sources:
        others = memo.get((rel, role, x))
        if others is None:
            others = memo[rel, role, x] = ex.scene.related(x, rel, role)
        found = others if len(sources) == 1 else found | others
    return tuple(c for c in candidates if c in found)


def _relate(ex: GqaExecutor, step: Step, ins: Sequence[Value]) -> Value:
    sources = _objects(_only(ins, step), step)
    name, rel, role, ids = _relation_parts(step.argument)
    if ids is not None:
        return ex.referred(ex.by_ids(name, ids))
    return ex.referred(_related(ex, sources, name, rel, role))


def _filter(ex: GqaExecutor, step: Step, ins: Sequence[Value]) -> Value:
    objects = _objects(_only(ins, step), step)
    value = step.argument.strip().lower()
    negated = value.startswith("not(") and value.endswith(")")
    if negated:
        value = value[4:-1].strip()
    kind = step.kind if step.kind in ("hposition", "vposition") else "attribute"
    return tuple(o for o in objects if ex.has(o, kind, value) != negated)


def _exist(ex: GqaExecutor, step: Step, ins: Sequence[Value]) -> Value:
    return _yes(bool(_objects(_only(ins, step), step)))


def _logic(ex: GqaExecutor, step: Step, ins: Sequence[Value]) -> Value:
    if len(ins) != 2 or not all(v in ("yes", "no") for v in ins):
        raise ProgramRefusal("malformed_program", f"{step.operation} needs two yes/no inputs")
    a, b = (v == "yes" for v in ins)
    return _yes(a and b if step.head == "and" else a or b)


def _query(ex: GqaExecutor, step: Step, ins: Sequence[Value]) -> Value:
    value = _only(ins, step)
    kind = step.argument.strip()
    if value == SCENE:
        field_name = _SCENE_FIELDS.get(kind)
        answer = ex.graph.get(field_name) if field_name else None
        if not isinstance(answer, str) or not answer.strip():
            raise ProgramRefusal("not_decidable", f"the graph has no {kind}")
        return answer.strip().lower()
    objects = _objects(value, step)
    if kind in _ONE_OBJECT_QUERIES:
        _one_object(objects, step)
    return ex.one_value(objects, kind)


def _verify(ex: GqaExecutor, step: Step, ins: Sequence[Value]) -> Value:
    objects = _objects(_only(ins, step), step)
    if step.kind == "rel":
        name, rel, role, ids = _relation_parts(step.argument)
        if not objects:
            raise ProgramRefusal("empty", "verify rel of nothing")
        _one_object(objects, step)
        if ids is not None:  # GQA named the objects (or, with "(-)", that there are none)
            ex.by_ids(name, ids)
            edges = ex.scene.edges
            hold = [any(((i, rel, x) if role == "s" else (x, rel, i)) in edges for x in objects) for i in ids]
            ex.referred(ids)
            return _yes(any(hold))
        ex.referred(ex.named(name))  # the objects the argument names, whether or not related
        return _yes(bool(_related(ex, objects, name, rel, role)))
    if not objects:
        raise ProgramRefusal("empty", f"verify {step.kind} of nothing")
    value = step.argument.strip().lower()
    held = {ex.has(o, step.kind or "attribute", value) for o in objects}
    if len(held) != 1:
        raise ProgramRefusal("ambiguous", f"the objects differ on {value}")
    return _yes(held.pop())


def _choose(ex: GqaExecutor, step: Step, ins: Sequence[Value]) -> Value:
    if len(ins) == 2 and not step.argument.strip():
        # GQA's compare ("Who is taller, the man or the woman?": `choose taller: [0, 1]`): a scene
        # graph holds no heights, sizes or ages to compare, so there is nothing to execute
        raise ProgramRefusal("unknown_operation", f"{step.operation} compares two objects; graphs give no measure")
    value = _only(ins, step)
    if step.kind == "rel":
        objects = _one_object(_objects(value, step), step)
        name, rels, role, ids = _relation_parts(step.argument)
        options = [r.strip() for r in rels.split("|")]
        named = ex.referred(ex.by_ids(name, ids) if ids is not None else ex.named(name))
        holding = []
        for rel in options:
            if ids is not None:
                edges = ex.scene.edges
                ok = any(((i, rel, x) if role == "s" else (x, rel, i)) in edges for i in named for x in objects)
            else:
                ok = bool(_related(ex, objects, name, rel, role))
            if ok:
                holding.append(rel)
        return short_relation(_one_option(holding, options, step))
    options = [o.strip().lower() for o in step.argument.split("|")]
    if len(options) != 2:
        raise ProgramRefusal("malformed_program", f"choose needs two options: {step.argument!r}")
    if value == SCENE:
        field_name = _SCENE_FIELDS.get(step.kind)
        have = str(ex.graph.get(field_name) or "").strip().lower() if field_name else ""
        return _one_option([o for o in options if o == have], options, step)
    objects = _objects(value, step)
    if not objects:
        raise ProgramRefusal("empty", f"{step.operation} of nothing")
    if step.kind == "hposition":
        _one_object(objects, step)
    kinds = (step.kind,) if step.kind else ("name", "attribute")
    per_object = {tuple(o for o in options if any(ex.has(x, k, o) for k in kinds)) for x in objects}
    if len(per_object) != 1:
        raise ProgramRefusal("ambiguous", "the objects differ")
    return _one_option(list(per_object.pop()), options, step)


def short_relation(rel: str) -> str:
    """How GQA answers a choice of relations: "to the left of" -> "left", "in front of" -> "front"."""
    for prefix in ("to the ", "in ", "on "):
        if rel.startswith(prefix) and rel.endswith(" of"):
            rel = rel[len(prefix):]
            break
    return rel.removesuffix(" of")


def _one_option(holding: list[str], options: list[str], step: Step) -> str:
    if len(holding) != 1:
        raise ProgramRefusal("not_decidable" if not holding else "ambiguous",
                             f"{len(holding)} of {options} hold ({step.operation})")
    return holding[0]


def _compare_sets(ins: Sequence[Value], step: Step) -> list[Objects]:
    sets = [_objects(v, step) for v in ins]
    if len(sets) == 1:
        sets = [(o,) for o in sets[0]]
    if len(sets) < 2 or not all(sets):
        raise ProgramRefusal("empty", f"{step.operation} needs two objects")
    return sets


def _same(ex: GqaExecutor, step: Step, ins: Sequence[Value]) -> Value:
    kind = step.kind or step.argument.strip()
    values = {ex.one_value(s, kind) for s in _compare_sets(ins, step)}
    same = len(values) == 1
    return _yes(same if step.head == "same" else not same)


def _common(ex: GqaExecutor, step: Step, ins: Sequence[Value]) -> Value:
    """The attribute type two objects share (GQA asks it of colour, material and shape)."""
    sets = _compare_sets(ins, step)
    shared = []
    for kind in ("color", "material", "shape"):
        try:
            if len({ex.one_value(s, kind) for s in sets}) == 1:
                shared.append(kind)
        except ProgramRefusal:
            continue  # a type some object lacks is not one they share
    return _one_option(shared, ["color", "material", "shape"], step)


_OPS = {"select": _select, "relate": _relate, "filter": _filter, "exist": _exist, "and": _logic,
        "or": _logic, "query": _query, "verify": _verify, "choose": _choose, "same": _same,
        "different": _same, "common": _common}
OPERATIONS = tuple(_OPS)
