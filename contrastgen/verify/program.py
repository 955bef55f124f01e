"""The verifier executes a perturbation's GQA program (`semantic`) on the scene graph.

Why: a perturbation of a question that had a program carries its edited program, so that GQA-format
consumers can use it. That program must say what the words and the evidence say: executing it here,
with code that shares nothing with the generator, must give the claimed answer.

Semantics, per operation (GQA's names; anything else is a failure, never a pass). GQA's programs
carry stray spaces (`verify color: white `): an operation is read single-spaced and an argument
stripped, as the generator reads them.
- `select: NAME (ids)`: the listed ids, each of which must be an object the name denotes; with
  `(-)`, every object the name denotes. An empty result is accepted only where absence is
  decidable: no object the name *may* denote, and the name not unannotated-prone.
- `filter TYPE: VALUE`: the input objects that carry attribute VALUE (`not(VALUE)`: that do not);
  hposition / vposition from the box: left/right, top/bottom, `middle` within a tenth of the size
  around the centre. The band is where no side is clear: a side (left, right, top, bottom) asked
  of a box in it, by any step, is a failure, neither a yes nor a no.
- `relate: NAME,REL,s|o (ids)`: objects the name denotes that are the subject (s) / object (o)
  of REL with an input object (both directions for symmetric relations); listed ids must be
  among them. Emptiness follows the select rule, with the related loose names.
- `exist`: yes iff the input is not empty. `or` / `and`: of the two inputs. The answer rests on
  every step it reads, except that an `or` that says yes rests only on its inputs that say yes,
  and an `and` that says no only on those that say no: every rule below that a "no" must be
  shown (an absence, a value or a name an object lacks) applies to the steps the answer rests on.
- `verify rel: NAME,REL,s|o (ids)`: the one input object and the one named object; yes on the
  edge, no on its opposite's, a failure when neither or both (contradiction) are annotated.
- `choose rel: NAME,R1|R2,s|o (ids)`: of the one input object and the one named object, the one
  relation on its edge, the other refuted as `verify rel`'s no; answered short ("left", "front").
- A "no" about an attribute (`verify TYPE` false, each option a `choose TYPE` or an untyped
  `choose` rejects, a `filter` that keeps none of its input, each object a `filter: not(VALUE)`
  keeps) must be shown: the object carries an opposite of the value
  (rules/attribute_opposites.tsv), or exactly one value of a single-valued type
  (rules/single_valued_types.txt: colour) that is another, and not a shade of it ("light blue"
  does not exclude "blue").
- `query: color` / `query: hposition` / `choose hposition: ...`: of the one input object: its one
  colour attribute; its side of the image.
- `query: vposition`, `verify vposition: V`, `choose vposition: top|bottom`: top or bottom from the
  box as for `filter vposition`. A box in the middle band shows neither side, nor that it is not
  on one: a side asked of it (`query`, `verify`, `choose` of either position) fails; only `middle`
  may be verified of it.
- `same TYPE`, `different TYPE`: of two objects (two inputs, or the objects of one), yes or no;
  `common`: the one of colour, material and shape they share. Each object must have exactly one
  value of a type compared, and values that differ must each be shown not to be the other's (the
  "no" rule below: a table listed as wood and a chair listed as metal are not shown to differ).
- `verify: V` (untyped): yes iff every input object carries the attribute V; a "no" must be
  shown as below.
- `query: TYPE` (name, material, pose, ...), `verify TYPE: V`, `choose TYPE: A|B`: the value of
  that type all input objects share (types from rules/attribute_types.tsv, read here on its own;
  `name` is the graph's name, and `choose name` asks which option names every input object). A
  name's "no" (`verify name` false, each option a `choose name` rejects) needs the object not to be
  one in any sense of the word (the noun table's loose reading: a kite may be a bird).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson

from contrastgen.verify.graph import EvidenceProblem, GraphIndex
from contrastgen.verify.nouns import NounTable, load_nouns
from contrastgen.verify.program_arguments import named, relation_parts
from contrastgen.verify.rules import VerifyRules, normalize_name

Value = set[str] | str


def _shade_of(a: str, b: str) -> bool:
    """The same value, or one a shade of the other ("light blue", "blue"): not an exclusion."""
    return a == b or b in a.split()[1:] or a in b.split()[1:] or b in a.split()[:-1] or a in b.split()[:-1]


class _Executor:
    def __init__(self, graph: GraphIndex, rules: VerifyRules, nouns: NounTable):
        self.g, self.rules, self.nouns = graph, rules, nouns
        # what each step asks, in evidence-query terms, for the last step's comparison
        self.asked: list[dict[str, str]] = []
        self.anchor: list[str | None] = []  # the one object a relate step started from, if one
        # a "no" the graph does not show, per step: a failure only where the answer rests on it
        self.unshown: dict[int, str] = {}
        self.current = -1

    def doubt(self, problem: str) -> None:
        """A "no" (an absence, a value or name an object lacks) the graph does not show. Outside
        a program's run it fails at once; in one, it fails only if the answer rests on its step
        ("Are there red kites or windows? yes" rests on the red kite, not on the windows)."""
        if self.current < 0:
            raise EvidenceProblem(problem)
        self.unshown.setdefault(self.current, problem)

    def denoted(self, name: str, *, loose: bool = False) -> set[str]:
        if name in ("_", ""):  # GQA's "any object" (relate: _,wearing,o)
            return set(self.g.objects)
        return self.g.ids_named(self.nouns.names(name, loose=loose))

    def absent_ok(self, name: str, candidates: set[str], what: str) -> None:
        """An empty result must be decidable: nothing that may be a `name` among `candidates`."""
        if self.rules.is_unannotated_prone(name):
            self.doubt(f"{what}: {name!r} is unannotated-prone; its absence proves nothing")
        elif not self.nouns.absence_decidable(name):
            self.doubt(f"{what}: the noun table cannot decide the absence of {name!r}")
        elif maybe := candidates & self.denoted(name, loose=True):
            self.doubt(f"{what}: objects {sorted(maybe)} may be a {name!r}; absence is not proven")

    def listed(self, name: str, ids: list[str], what: str) -> set[str]:
        for i in ids:
            self.g.obj(i)
            if name not in self.rules.pronouns and i not in self.denoted(name):
                raise EvidenceProblem(f"{what}: object {i} ({self.g.name_of(i)!r}) is not a {name!r}")
        return set(ids)

    def one(self, value: Value, what: str) -> str:
        if not isinstance(value, set) or len(value) != 1:
            raise EvidenceProblem(f"{what} needs exactly one object, got {value!r}")
        return next(iter(value))

    def linked(self, a: str, rel: str, b: str) -> bool:
        return self.g.has_edge(a, rel, b) or (rel in self.rules.symmetric and self.g.has_edge(b, rel, a))

    def run(self, semantic: list[Any]) -> str:
        out: list[Value] = []
        ops: list[str] = []
        reads: list[list[int]] = []
        self.step_args: list[str] = []
        for i, step in enumerate(semantic):
            if not isinstance(step, dict):
                raise EvidenceProblem(f"program step {i} is not an object")
            # GQA's programs carry stray spaces ("verify color: white ", "verify: comfortable "): an
            # operation's words are read single-spaced and an argument stripped, as GQA means them
            op = " ".join(str(step.get("operation", "")).split())
            arg = str(step.get("argument", "")).strip()
            self.step_args.append(arg)
            deps = step.get("dependencies") or []
            if not isinstance(deps, list) or not all(isinstance(d, int) and 0 <= d < i for d in deps):
                raise EvidenceProblem(f"program step {i} depends on {deps}, not on earlier steps")
            ins = [out[d] for d in deps]
            ops.append(op)
            reads.append(deps)
            self.current = i
            try:
                out.append(self.step(i, op, arg, ins))
            except EvidenceProblem:
                if i in self.unshown:  # the step's first problem is the one to report
                    raise EvidenceProblem(self.unshown[i]) from None
                raise
            self.current = -1
            self.asked.append(self.ask(op, arg, ins, deps))
            self.anchor.append(next(iter(ins[0])) if op == "relate" and len(ins[0]) == 1 else None)
        if not out or not isinstance(out[-1], str):
            raise EvidenceProblem("the program's last step gives no answer")
        unshown = sorted(_rested_on(ops, reads, out) & set(self.unshown))
        if unshown:
            raise EvidenceProblem(self.unshown[unshown[0]])
        self.values = out
        return out[-1]

    def ask(self, op: str, arg: str, ins: list[Value], deps: list[int]) -> dict[str, str]:
        """The query a step's answer is about: its operation, objects and relation."""
        one = next(iter(ins[0])) if ins and isinstance(ins[0], set) and len(ins[0]) == 1 else ""
        if op == "verify rel":
            name, rel, role, ids = relation_parts(arg)
            other = ids[0] if ids else ""
            subject, obj = (other, one) if role == "s" else (one, other)
            return {"op": "relation", "subject": subject, "object": obj, "rel": rel}
        if op == "query" and normalize_name(arg) == "color":
            return {"op": "color", "object": one}
        if op in ("query", "choose hposition"):
            return {"op": "side", "object": one}
        if op == "exist" and deps and self.anchor[deps[0]] is not None:
            rel = relation_parts(str(self.step_args[deps[0]]))[1]
            return {"op": "exists_related", "object": self.anchor[deps[0]] or "", "rel": rel}
        if op in ("exist", "or", "and"):
            return {"op": "exists_any"}
        return {"op": op}

    def step(self, i: int, op: str, arg: str, ins: list[Value]) -> Value:
        what = f"program step {i} ({op}: {arg.strip()})"
        return _STEPS[_step_kind(op, arg)](self, what, op, arg, ins)

    def cannot_run(self, what: str) -> EvidenceProblem:
        return EvidenceProblem(f"{what}: not an operation this executor runs on these inputs")

    def select_step(self, what: str, op: str, arg: str, ins: list[Value]) -> Value:
        """`select: NAME (ids)`: the listed objects, or every object the name denotes."""
        if ins:
            raise self.cannot_run(what)
        name, ids = named(arg)
        name = normalize_name(name)
        if ids is not None:
            return self.listed(name, ids, what)
        found = self.denoted(name)
        if not found:
            self.absent_ok(name, set(self.g.objects), what)
        return found

    def filter_step(self, what: str, op: str, arg: str, ins: list[Value]) -> Value:
        """`filter TYPE: VALUE` (or `not(VALUE)`): the input objects that carry (lack) it."""
        if len(ins) != 1 or not isinstance(ins[0], set):
            raise self.cannot_run(what)
        value = normalize_name(arg)
        negated = value.startswith("not(") and value.endswith(")")
        value = value[4:-1].strip() if negated else value
        kind = normalize_name(op.partition(" ")[2])
        if kind in ("hposition", "vposition"):
            self.no_middle_box(what, ins[0], kind, value)
            return {o for o in ins[0] if (self.g.position(o, kind) == value) != negated}
        kept = {o for o in ins[0] if (value in self.g.attributes_of(o)) != negated}
        # "no object is white": each one must be shown not to be; "the car that is not red": each
        # one kept must be shown not to be
        # sorted: the first object shown to fail is the one a failure names, the same every run
        for o in sorted(kept if negated else () if kept else ins[0]):
            self.not_having(what, o, kind, value)
        return kept

    def no_middle_box(self, what: str, objects: set[str], kind: str, value: str) -> None:
        """A side asked of a box in the middle band is neither a yes nor a no."""
        if value != "middle" and any(self.g.position(o, kind) == "middle" for o in objects):
            raise EvidenceProblem(f"{what}: a box in the middle band is neither {value!r} nor shown not to be")

    def relate_step(self, what: str, op: str, arg: str, ins: list[Value]) -> Value:
        """`relate: NAME,REL,s|o (ids)`: the named objects so related to an input object."""
        if len(ins) != 1 or not isinstance(ins[0], set):
            raise self.cannot_run(what)
        name, rel, role, ids = relation_parts(arg)

        def related(c: str) -> bool:
            return any(self.linked(c, rel, x) if role == "s" else self.linked(x, rel, c) for x in ins[0])
        found = {c for c in self.denoted(name) if related(c)}
        if ids is not None and not set(ids) <= found:
            raise EvidenceProblem(f"{what}: listed ids {sorted(set(ids) - found)} are not so related")
        if not found:
            self.absent_ok(name, {c for c in self.denoted(name, loose=True) if related(c)}, what)
        return found

    def exist_step(self, what: str, op: str, arg: str, ins: list[Value]) -> Value:
        if len(ins) != 1 or not isinstance(ins[0], set):
            raise self.cannot_run(what)
        return "yes" if ins[0] else "no"

    def logic_step(self, what: str, op: str, arg: str, ins: list[Value]) -> Value:
        """`or`, `and` of two answers."""
        if len(ins) != 2 or not all(isinstance(v, str) for v in ins):
            raise self.cannot_run(what)
        yes = [v == "yes" for v in ins]
        return "yes" if (any(yes) if op == "or" else all(yes)) else "no"

    def relation_step(self, what: str, op: str, arg: str, ins: list[Value]) -> Value:
        """`verify rel`, `choose rel` of the one input object."""
        if len(ins) != 1:
            raise self.cannot_run(what)
        given = self.one(ins[0], what)
        return self.verify_rel(what, arg, given) if op == "verify rel" else self.choose_rel(what, arg, given)

    def color_or_side_step(self, what: str, op: str, arg: str, ins: list[Value]) -> Value:
        """`query: color`: the one input object's one colour; `query: hposition`, `choose
        hposition`: its side of the image."""
        if len(ins) != 1:
            raise self.cannot_run(what)
        oid = self.one(ins[0], what)
        if op == "query" and normalize_name(arg) == "color":
            colors = sorted(self.g.attributes_of(oid) & self.rules.colors)
            if len(colors) != 1:
                raise EvidenceProblem(f"{what}: object {oid} has colours {colors}; one is needed")
            return colors[0]
        if self.g.position(oid, "hposition") == "middle":
            raise EvidenceProblem(f"{what}: object {oid}'s box is in the middle band: no side is shown")
        return self.g.side(oid)

    def typed_step(self, what: str, op: str, arg: str, ins: list[Value]) -> Value:
        """query TYPE, verify TYPE: V, choose TYPE: A|B (and their untyped forms) of the input."""
        if len(ins) != 1 or not isinstance(ins[0], set):
            raise self.cannot_run(what)
        return self.attribute_step(what, op, arg, ins[0])

    def unknown_step(self, what: str, op: str, arg: str, ins: list[Value]) -> Value:
        raise self.cannot_run(what)

    def values(self, oid: str, kind: str) -> set[str]:
        """An object's values of one GQA attribute type; its name for `name`."""
        if kind == "name":
            return {self.g.name_of(oid)}
        if kind in ("hposition", "vposition"):  # from the box, as `filter`: left/right, top/bottom, middle
            position = self.g.position(oid, kind)
            return {position} if position else set()
        attrs = set(self.g.attributes_of(oid))
        if kind == "color":  # the lexicon's colour terms, as for the colour template
            return attrs & self.rules.colors
        return attrs & self.rules.attribute_types.get(kind, frozenset())

    def attribute_step(self, what: str, op: str, arg: str, objects: set[str]) -> str:
        """query TYPE, verify TYPE: V, choose TYPE: A|B (and choose name) of the input objects."""
        if not objects:
            raise EvidenceProblem(f"{what}: no object to ask")
        kind = normalize_name(arg) if op == "query" else normalize_name(op.partition(" ")[2])
        if op == "query":
            return self.query_type(what, kind, objects)
        if op == "verify":
            return self.verify_untyped(what, normalize_name(arg), objects)
        if op.startswith("verify "):
            return self.verify_typed(what, kind, normalize_name(arg), objects)
        return self.choose(what, kind, [normalize_name(x) for x in arg.split("|")], objects)

    def query_type(self, what: str, kind: str, objects: set[str]) -> str:
        """`query: TYPE`: the one value of the type every input object has."""
        answers = {frozenset(self.values(o, kind)) for o in objects}
        if len(answers) != 1 or len(next(iter(answers))) != 1:
            raise EvidenceProblem(f"{what}: the objects {sorted(objects)} do not have one {kind}")
        return next(iter(next(iter(answers))))

    def verify_untyped(self, what: str, value: str, objects: set[str]) -> str:
        """`verify: comfortable`: does every object carry the attribute? A "no" must be shown."""
        held = {value in self.g.attributes_of(o) for o in objects}
        if len(held) != 1:
            raise EvidenceProblem(f"{what}: the objects disagree on {value!r}")
        if held == {False}:
            for o in sorted(objects):
                self.not_having(what, o, "", value)
        return "yes" if held.pop() else "no"

    def verify_typed(self, what: str, kind: str, value: str, objects: set[str]) -> str:
        """`verify TYPE: V`: does every object have V as its TYPE (a name: in any sense of V)?"""
        if kind in ("hposition", "vposition"):
            self.no_middle_box(what, objects, kind, value)
        elif kind != "name" and value not in self.known_values(kind):
            raise EvidenceProblem(f"{what}: {value!r} is not a {kind} the rules know")
        held = {value in self.values(o, kind) or (kind == "name" and o in self.denoted(value))
                for o in objects}
        if len(held) != 1:
            raise EvidenceProblem(f"{what}: the objects disagree on {value!r}")
        if held == {False}:
            self.show_not(what, kind, objects, [value])
        return "yes" if held.pop() else "no"

    def known_values(self, kind: str) -> frozenset[str]:
        """The values of a type the rules know (rules/attribute_types.tsv; colours: the lexicon's)."""
        return self.rules.colors if kind == "color" else self.rules.attribute_types.get(kind, frozenset())

    def choose(self, what: str, kind: str, options: list[str], objects: set[str]) -> str:
        """`choose TYPE: A|B` (a name, a typed value, or untyped: either): the one option every
        object holds, each other one shown not held."""
        if kind not in ("", "name", "hposition", "vposition") and not set(options) <= self.known_values(kind):
            raise EvidenceProblem(f"{what}: {options} are not all {kind} values the rules know")
        holding = [x for x in options if self.holds(kind, x, objects)]
        if len(holding) != 1:
            raise EvidenceProblem(f"{what}: {len(holding)} of {options} hold")
        self.show_not(what, kind, objects, [x for x in options if x != holding[0]])
        return holding[0]

    def holds(self, kind: str, option: str, objects: set[str]) -> bool:
        """Does every object hold the option: a name it is, a value of its type, or (untyped) either?"""
        if kind == "name":
            return objects <= self.denoted(option)
        if not kind:
            return objects <= self.denoted(option) or all(option in self.g.attributes_of(o) for o in objects)
        return all(option in self.values(o, kind) for o in objects)

    def show_not(self, what: str, kind: str, objects: set[str], rejected: list[str]) -> None:
        """Each rejected value shown not to be the objects': a name in no sense of the word, an
        attribute by the graph (positions are read off the boxes)."""
        if kind in ("", "name"):
            for x in rejected:
                self.not_named(what, objects, x)
                if not kind:  # untyped: neither a name of the objects nor an attribute of them
                    for o in sorted(objects):
                        self.not_having(what, o, "", x)
            return
        if kind not in ("hposition", "vposition"):
            for o in sorted(objects):
                for x in rejected:
                    self.not_having(what, o, kind, x)

    def compare(self, what: str, op: str, arg: str, ins: list[Value]) -> str:
        """same TYPE / different TYPE: yes or no; common: the one of colour, material and shape the
        objects share. The objects are the inputs' (each input one object), or the one input's
        objects each on its own."""
        if len(ins) == 1 and isinstance(ins[0], set):
            objects = sorted(ins[0])
        elif len(ins) == 2:
            objects = [self.one(v, what) for v in ins]
        else:
            raise EvidenceProblem(f"{what}: needs two objects")
        if len(objects) < 2:
            raise EvidenceProblem(f"{what}: needs two objects, got {objects}")
        head, _, kind = op.partition(" ")
        if head in ("same", "different"):
            shared = self.share(what, objects, normalize_name(kind or arg))
            return "yes" if shared == (head == "same") else "no"
        shared_kinds = [k for k in ("color", "material", "shape") if self.share(what, objects, k)]
        if len(shared_kinds) != 1:
            raise EvidenceProblem(f"{what}: the objects share {shared_kinds}, not one type")
        return shared_kinds[0]

    def share(self, what: str, objects: list[str], kind: str) -> bool:
        """Do the objects have the same value of `kind`? Each must have exactly one; where they
        differ, each one's value must be shown not to be the other's (`not_having`)."""
        values = {}
        for o in objects:
            have = self.values(o, kind)
            if len(have) != 1:
                raise EvidenceProblem(f"{what}: object {o} has {sorted(have)} as {kind}; one is needed")
            values[o] = next(iter(have))
        if len(set(values.values())) == 1:
            return True
        for o in objects:
            for other in sorted(set(values.values()) - {values[o]}):
                self.not_having(what, o, kind, other)
        return False

    def not_named(self, what: str, objects: set[str], name: str) -> None:
        """A "no" about a name rests on the noun table: no object may be a `name` in any sense of
        the word (a kite is not a bird as the toy, but is as the hawk)."""
        maybe = objects & self.denoted(name, loose=True)
        if maybe:
            self.doubt(f"{what}: objects {sorted(maybe)} may be a {name!r} in another sense; a 'no' is not shown")

    def not_having(self, what: str, oid: str, kind: str, value: str) -> None:
        """A "no" about an attribute rests on the graph, not on a missing annotation: the object
        carries an opposite of the value, or the one value of a single-valued type (colour; not
        of a person or a composite thing, rules/several_colored.tsv)."""
        attrs = set(self.g.attributes_of(oid))
        if attrs & self.rules.attribute_opposites.get(value, frozenset()):
            return
        types = {kind} if kind else {t for t, vs in self.rules.attribute_types.items() if value in vs}
        if value in self.rules.colors:
            types.add("color")
        for t in sorted(types & self.rules.single_valued):
            if t == "color" and self.g.name_of(oid) in self.rules.several_colored:
                continue  # a person wears other colours, a bus's parts have theirs (several_colored.tsv)
            have = self.values(oid, t)
            if len(have) == 1 and not _shade_of(value, next(iter(have))):
                return
        self.doubt(f"{what}: nothing in the graph shows that object {oid} is not {value!r} "
                   "(no opposite, and no single other value of a single-valued type)")

    def choose_rel(self, what: str, arg: str, given: str) -> str:
        """Which of two relations holds between the input object and the one named object: one
        on its edge, the other refuted by the graph (as `verify rel`'s no); GQA's short answer."""
        name, rels, role, ids = relation_parts(arg)
        named = self.listed(name, ids, what) if ids is not None else self.denoted(name)
        other = self.one(named, what)
        subject, obj = (other, given) if role == "s" else (given, other)
        said = {}
        for rel in [r.strip() for r in rels.split("|")]:
            said[rel] = self.relation_said(what, subject, rel, obj)
        holding = [r for r, yes in said.items() if yes]
        if len(holding) != 1:
            raise EvidenceProblem(f"{what}: {len(holding)} of {sorted(said)} hold")
        answer = holding[0]
        for prefix in ("to the ", "in ", "on "):
            if answer.startswith(prefix) and answer.endswith(" of"):
                answer = answer[len(prefix):]
                break
        return answer[:-3] if answer.endswith(" of") else answer

    def verify_rel(self, what: str, arg: str, given: str) -> str:
        name, rel, role, ids = relation_parts(arg)
        named = self.listed(name, ids, what) if ids is not None else self.denoted(name)
        other = self.one(named, what)
        subject, obj = (other, given) if role == "s" else (given, other)
        return "yes" if self.relation_said(what, subject, rel, obj) else "no"

    def relation_said(self, what: str, subject: str, rel: str, obj: str) -> bool:
        """True on the edge, False on its opposite's; a failure when neither or both are there."""
        opp = self.rules.opposites.get(rel)
        yes = self.linked(subject, rel, obj) or (opp is not None and self.g.has_edge(obj, opp, subject))
        no = opp is not None and (self.g.has_edge(subject, opp, obj) or self.g.has_edge(obj, rel, subject))
        if yes and no:
            raise EvidenceProblem(f"{what}: the graph says both {rel!r} and {opp!r} of {subject}, {obj}")
        if not (yes or no):
            raise EvidenceProblem(f"{what}: the graph says neither {rel!r} nor its opposite of {subject}, {obj}")
        return yes


def _step_kind(op: str, arg: str) -> str:
    """Which of the executor's steps runs an operation (GQA's names, read single-spaced)."""
    if op.startswith("filter"):
        return "filter"
    if op in ("select", "relate", "exist", "or", "and", "verify rel", "choose rel"):
        return op
    if op == "query" and normalize_name(arg) in ("color", "hposition") or op == "choose hposition":
        return "color or side"
    if op.startswith(("same", "different")) or op == "common":
        return "compare"
    if op in ("query", "verify", "choose") or op.startswith(("verify ", "choose ")):
        return "typed"
    return "unknown"


_STEPS: dict[str, Callable[[_Executor, str, str, str, list[Value]], Value]] = {
    "select": _Executor.select_step,
    "filter": _Executor.filter_step,
    "relate": _Executor.relate_step,
    "exist": _Executor.exist_step,
    "or": _Executor.logic_step,
    "and": _Executor.logic_step,
    "verify rel": _Executor.relation_step,
    "choose rel": _Executor.relation_step,
    "color or side": _Executor.color_or_side_step,
    "compare": _Executor.compare,
    "typed": _Executor.typed_step,
    "unknown": _Executor.unknown_step,
}


def _rested_on(ops: list[str], reads: list[list[int]], values: list[Value]) -> set[int]:
    """The steps the answer rests on: back from the last step through every input, except that
    an `or` that says yes rests on its inputs that say yes, and an `and` that says no on its
    inputs that say no; the other input's "no" or "yes" decides nothing."""
    out: set[int] = set()
    todo = [len(values) - 1]
    while todo:
        i = todo.pop()
        if i in out:
            continue
        out.add(i)
        deps = reads[i]
        if (ops[i], values[i]) in (("or", "yes"), ("and", "no")):
            deps = [d for d in deps if values[d] == values[i]]
        todo.extend(deps)
    return out


def execute_program(semantic: list[Any], graph: GraphIndex, rules: VerifyRules,
                    nouns: NounTable | None = None) -> tuple[str, dict[str, str]]:
    """The program's answer on the graph and what its last step asks (operation, objects,
    relation, in evidence-query terms), or an EvidenceProblem saying why it has no answer."""
    if not isinstance(semantic, list) or not semantic:
        raise EvidenceProblem("'semantic' must be a non-empty list of program steps")
    answer, _, asked = _run(semantic, graph, rules, nouns or load_nouns())
    return answer, asked


def execute_program_steps(semantic: Any, graph: GraphIndex, rules: VerifyRules,
                          nouns: NounTable | None = None) -> tuple[str, list[Value]]:
    """The program's answer and every step's value (objects as sets of ids, or answers)."""
    if not isinstance(semantic, list) or not semantic:
        raise EvidenceProblem("'semantic' must be a non-empty list of program steps")
    answer, values, _ = _run(semantic, graph, rules, nouns or load_nouns())
    return answer, values


def _run(semantic: list[Any], graph: GraphIndex, rules: VerifyRules,
         nouns: NounTable) -> tuple[str, list[Value], dict[str, str]]:
    """The program's answer, its steps' values and what its last step asks, from a run on the
    graph; the same program again on the same graph, the first run's outcome (its problem too).

    Why: a question's perturbations and its template and program paths carry the same program
    again (a tenth of a `--mode both` set's runs); a run is a pure function of the program, the
    graph and the rules, and its callers only read what it gives."""
    memo = graph.program_runs(rules, nouns)
    try:
        key = orjson.dumps(semantic)
    except (TypeError, orjson.JSONEncodeError):  # not JSON's (a caller's own objects): run it each time
        key = None
    found = memo.get(key) if key is not None else None
    if found is None:
        executor = _Executor(graph, rules, nouns)
        try:
            answer = executor.run(semantic)
            found = (answer, executor.values, executor.asked[-1])
        except EvidenceProblem as exc:
            found = str(exc)
        if key is not None:
            memo[key] = found
    if isinstance(found, str):
        raise EvidenceProblem(found)
    return found


def objects_named(graph: GraphIndex, rules: VerifyRules, name: str) -> set[str]:
    """Every object `name` denotes (what `select: NAME (-)` selects): the words' objects, whatever
    ids a program lists."""
    return _Executor(graph, rules, load_nouns()).denoted(normalize_name(name))


def unshown_absences(graph: GraphIndex, rules: VerifyRules, objects: Iterable[str], kind: str, value: str,
                     what: str) -> list[str]:
    """Why the graph does not show that each of `objects` lacks `value` (an attribute of type
    `kind`, "" where untyped), one line per object it does not: the "no" rule of the filters, for
    callers that judge a step's objects after the run."""
    executor = _Executor(graph, rules, load_nouns())
    out = []
    for oid in sorted(objects):
        try:
            executor.not_having(what, oid, kind, value)
        except EvidenceProblem as exc:
            out.append(str(exc))
    return out
