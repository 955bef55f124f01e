"""What an executed program edit must satisfy before its answer counts as proven.

Why beside the executor rather than in it: the executor answers as GQA's programs mean (a graph
that lists no blue on the car says "no" to "Is the car blue?"), which is right for checking the
original questions against their gold answers. An edit makes a new claim, and a new claim may
rest only on what the graph shows: a "no" needs an opposite edge or attribute, an empty set needs
names whose absence a graph can show, the program's ids must be what the words pick out, and
objects new to the question that the words say as "the" ones must be shown to be all there is
(none of a kind annotators leave out; what a filter left out shown to lack its value). The
verifier checks the same rules with its own code (`contrastgen.verify.program`,
`contrastgen.verify.program_edits`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Container
from dataclasses import dataclass, field
from typing import Any

from contrastgen.datasets.gqa_program import REFERENCE_OPS, read_reference, reference_name
from contrastgen.language.lexicon import Lexicon, attribute_opposites, read_word_list
from contrastgen.language.noun_classes import several_colored_categories
from contrastgen.programs.executor import (
    Execution,
    GqaExecutor,
    ProgramRefusal,
    Step,
    attribute_types,
    split_reference,
)
from contrastgen.resources import rules_file
from contrastgen.scene.ground import denoted_ids
from contrastgen.scene.index import SceneIndex

_RELATION_ARGUMENT_OPS = ("relate", "verify", "choose")
_POSITIONS = ("hposition", "vposition")


@functools.cache
def single_valued_types() -> frozenset[str]:
    """rules/single_valued_types.txt: types an object has one value of, where the graph lists one."""
    return frozenset(read_word_list(rules_file("single_valued_types.txt")))


def shades(a: str, b: str) -> bool:
    """Is one value the other or a shade of it ("light blue" and "blue")? Then one listed value
    does not exclude the other."""
    wa, wb = a.split(), b.split()
    return a == b or (len(wa) > 1 and b in wa) or (len(wb) > 1 and a in wb)


def bare(step: dict[str, Any]) -> dict[str, Any]:
    """A step whose reference names objects by name, not by GQA's ids (they are the old ones).
    Only a reference has ids: a filter's "not(red)" is a value, kept whole."""
    if step["operation"] not in REFERENCE_OPS:
        return step
    name, ids = split_reference(step["argument"])
    return step if ids is None else {**step, "argument": name}


def negated(value: str) -> bool:
    return value.startswith("not(") and value.endswith(")")


def _rejected_values(op: str, value: str, got: Any, inputs: tuple[str, ...]) -> list[str]:
    """The values an attribute step says the objects it reads do not have: a `verify`'s value
    when it says no, each option a `choose` (typed, or untyped: `op` "choose") did not pick, a
    `filter`'s value when it keeps nothing of some input; none otherwise."""
    head, _, kind = op.partition(" ")
    if head == "verify":
        return [value] if got == "no" else []
    if head == "choose":
        return [o.strip().lower() for o in value.split("|") if o.strip().lower() != got]             if kind or op == "choose" else []
    return [value] if not got and inputs else []


_PASSING_ON = ("filter", "relate")  # steps that hand objects on; `exist`, `and`, `or` only ask if any


def claimed_whole(operations: list[str], dependencies: list[tuple[int, ...]] | list[list[int]]) -> set[int]:
    """The steps whose objects the words say as the ones there are ("the shirt", "what he is
    wearing"): those read by a step that asks something of them (query, verify, choose, compare),
    directly or through filters and relations. Objects that only an `exist` reads ("Is there a
    red shirt?"), directly or so, are said to be there, not to be all there is."""
    claimed: set[int] = set()
    for j in range(len(operations) - 1, -1, -1):
        op = operations[j]
        head = op.split(" ", 1)[0]
        if head in ("exist", "and", "or") or (head in _PASSING_ON and j not in claimed):
            continue
        claimed.update(d for d in dependencies[j] if isinstance(d, int))
    return claimed


def answer_rests_on(steps: list[Step], run: Execution) -> Container[int]:
    """The steps an answer rests on: every step the last one reads, directly or not, except that
    an `or` that says yes rests only on its inputs that say yes and an `and` that says no only on
    those that say no. "Are there red kites or windows? yes" rests on the red kite; whether
    windows could be shown absent decides nothing. Without `or` or `and` (most programs, asked
    for every candidate edit) every step counts: GQA's steps all lead to the answer."""
    if not any(s.head in ("or", "and") for s in steps):
        return range(len(steps))
    rests: set[int] = set()
    todo = [len(run.values) - 1]
    while todo:
        i = todo.pop()
        if i in rests:
            continue
        rests.add(i)
        deps = steps[i].dependencies
        if steps[i].head in ("or", "and") and run.values[i] == ("yes" if steps[i].head == "or" else "no"):
            deps = tuple(d for d in deps if run.values[d] == run.values[i])
        todo.extend(deps)
    return rests


@dataclass
class EditProofs:
    """The checks, for one image's graph."""

    scene: SceneIndex
    lex: Lexicon
    executor: Callable[[], GqaExecutor]
    # a colour "no" was not claimed only because the object is a person or a composite thing
    # (rules/several_colored.tsv): the question's reason, if nothing else is found
    several_colored_refused: bool = field(default=False, init=False)

    def holds(self, edited: list[dict[str, Any]], parsed: list[Step], steps: list[Step], downstream: set[int],
              run: Execution) -> bool:
        """`edited` and `parsed`: the edited program, as dicts and parsed; `steps`: the original.
        A "no" the graph must show (an absence, an attribute or a difference) is asked only of
        the steps the answer rests on (`answer_rests_on`)."""
        rests = answer_rests_on(parsed, run)
        return (self._absence_decidable(steps, downstream) if run.answer == "no" else True) and \
            self.absences_provable(edited, run, rests) and self.relations_decided(edited, run) and \
            self.attributes_decided(edited, run, rests) and self.comparisons_decided(edited, run, rests) and \
            self.words_agree(parsed, run)

    def absences_provable(self, edited: list[dict[str, Any]], run: Execution, rests: Container[int]) -> bool:
        """Every reference the answer rests on that came out empty is a claim of absence: only
        for names whose absence a graph can show, and with no object that may be one of them."""
        for i, ids in run.refs.items():
            if ids or i not in rests or edited[i]["operation"] in ("verify rel", "choose rel"):  # decided by the edges
                continue
            name = read_reference(edited[i]["argument"]).name
            if name not in ("_", "") and not self.absence_shown(name):
                return False
        return True

    def absence_shown(self, name: str) -> bool:
        """Can the graph show that nothing is a `name`: a name whose absence a graph can show
        (not unannotated-prone, every kind it may denote known), and no object that may be one?"""
        lex = self.lex
        if lex.is_unannotated_prone(name) or not lex.absence_decidable(name):
            return False
        maybe = lex.may_denote(name)
        return not any(o.canonical in maybe for o in self.scene.objects.values())

    def relations_decided(self, edited: list[dict[str, Any]], run: Execution) -> bool:
        """A relation answers no only on the opposite relation's edge, never on a missing one:
        `verify rel` of one object and one named object, and each option `choose rel` rejects."""
        for i, step in enumerate(edited):
            if step["operation"] not in ("verify rel", "choose rel"):
                continue
            # the run read it, so it is a relation argument (`read_reference`'s role is s or o)
            name, rels, role, _ = read_reference(step["argument"])
            sources = run.values[step["dependencies"][0]] if step["dependencies"] else ()
            named = run.refs.get(i) if step["operation"] == "choose rel" else None
            named = named if named is not None else tuple(denoted_ids(name, self.scene, self.lex))
            if len(sources) != 1 or len(named) != 1:
                return False
            subject, obj = (named[0], sources[0]) if role == "s" else (sources[0], named[0])
            options = [r.strip() for r in rels.split("|")]
            held = [self.relation_decided(subject, rel, obj) for rel in options]
            if None in held:
                return False
            if step["operation"] == "verify rel":
                continue
            if held.count(True) != 1:
                return False
        return True

    def relation_decided(self, subject: str, rel: str, obj: str) -> bool | None:
        """True on the edge, False on its opposite's, None when the graph says neither or both."""
        opp = self.lex.opposite_relation(rel)
        edges = self.scene.edges
        yes = (subject, rel, obj) in edges
        no = opp is not None and ((subject, opp, obj) in edges or (obj, rel, subject) in edges)
        return None if yes == no else yes

    def excluded(self, oid: str, kind: str, value: str) -> bool:
        """Does the graph show that the object is not `value`: it carries an opposite of it, or
        the one value of a single-valued type (rules/single_valued_types.txt) that is another?
        Colour is not single-valued for a person or a composite thing (rules/several_colored.tsv:
        "Is the skier pink? no" of a skier listed as white, in pink shoes)."""
        obj = self.scene.objects[oid]
        attrs = set(obj.attributes)
        if attrs & attribute_opposites().get(value, frozenset()):
            return True
        types = {kind} if kind else set(attribute_types().get(value, ()))
        if self.lex.is_color(value):
            types.add("color")
        for t in types & single_valued_types():
            have = self.executor().values_of(oid, t)
            if len(have) == 1 and not shades(value, next(iter(have))):
                if t == "color" and self.lex.category(obj.canonical) in several_colored_categories():
                    self.several_colored_refused = True
                    continue
                return True
        return False

    def attributes_decided(self, edited: list[dict[str, Any]], run: Execution, rests: Container[int]) -> bool:
        """An attribute answers no only where the graph excludes it: a `verify TYPE` that says
        no, each option a `choose TYPE` or an untyped `choose` rejects, a `filter` that keeps
        nothing of its input, and every object a `filter: not(V)` keeps (the objects' positions are
        read from their boxes, so always decided)."""
        for i, step in enumerate(edited):
            op = step["operation"]
            head, _, kind = op.partition(" ")
            if head not in ("verify", "choose", "filter") or kind in ("rel", "name", *_POSITIONS) or i not in rests:
                continue
            inputs = run.values[step["dependencies"][0]] if step["dependencies"] else ()
            if isinstance(inputs, str):
                continue  # the scene: place and weather are the graph's own fields
            if not self._attribute_step_decided(op, step["argument"].strip().lower(), run.values[i], inputs):
                return False
        return True

    def _attribute_step_decided(self, op: str, value: str, got: Any, inputs: tuple[str, ...]) -> bool:
        """One attribute step of `attributes_decided`: `value` its argument, `got` its result,
        `inputs` the objects it reads."""
        head, _, kind = op.partition(" ")
        if head == "filter" and negated(value):
            # "the car that is not red" says of each object it keeps that it is not red
            inner = value[4:-1].strip()
            return all(self.excluded(o, kind, inner) for o in got)
        rejected = _rejected_values(op, value, got, inputs)
        if op == "choose" and self._names_an_option(rejected, inputs):
            return False
        return all(self.excluded(o, kind, v) for o in inputs for v in rejected)

    def _names_an_option(self, rejected: list[str], inputs: tuple[str, ...]) -> bool:
        """Untyped `choose` ("Is the car shiny or rusty?"): an option may be a name or any
        attribute, so a rejected one must be neither: no name the object bears in any sense (and
        an attribute the graph excludes: "rusty" is not shown absent from a shiny car)."""
        maybe_named = {n for v in rejected for n in self.lex.may_denote(v)}
        return any(self.scene.objects[o].canonical in maybe_named for o in inputs)

    def comparisons_decided(self, edited: list[dict[str, Any]], run: Execution, rests: Container[int]) -> bool:
        """Two objects differ in a type only where the graph excludes each one's value from the
        other: the one value of a single-valued type, or an opposite. A table listed as wood and a
        chair listed as metal may both be wood where nothing says otherwise ("different
        materials?"), and a type some object has no value of is not shown unshared (`common`)."""
        for i, step in enumerate(edited):
            head, _, kind = step["operation"].partition(" ")
            if i not in rests:
                continue
            if head in ("same", "different"):
                differ = (run.values[i] == "no") == (head == "same")
                kinds = [kind or step["argument"].strip()] if differ else []
            elif head == "common":
                kinds = [k for k in ("color", "material", "shape") if k != run.values[i]]
            else:
                continue
            objects = [o for d in step["dependencies"] if not isinstance(run.values[d], str) for o in run.values[d]]
            for k in kinds:
                values = {o: self.executor().values_of(o, k) for o in objects}
                if any(len(v) != 1 for v in values.values()):
                    return False
                if not all(self.excluded(o, k, next(iter(values[x])))
                           for o in objects for x in objects if values[x] != values[o]):
                    return False
        return True

    def new_references_unshown(self, claimed: set[int], parsed: list[Step], run: Execution,
                               original: Execution) -> str | None:
        """The objects a step now refers to that are not the original's, where the words say
        them as "the" ones (`claimed`: `claimed_whole` of the program, whose steps and
        dependencies an argument edit leaves as they were), must be shown to be all there is:
        - not of a kind annotators leave out (clothing, body parts:
          rules/lexicon/unannotated_prone.txt). "What is the boy wearing? socks" says the socks
          are all he wears, and a shirt he wears may be missing from the graph;
        - where a filter picked them, every object it left out is shown not to have its value
          (`excluded`). "Which furniture is gray? bench" says the bed is not gray, which a bed
          listed with no colour does not show.
        Where the objects are the original's, its words and GQA's ids vouch for them as they did
        for the original's answer; "Is there a shirt that is red?" asks only that one is there,
        which the graph shows. Returns why they are not shown (a refusal reason), or None."""
        objects = self.scene.objects
        for i in claimed:
            value = run.values[i]
            if isinstance(value, str) or not value:
                continue
            if i < len(original.values) and not isinstance(original.values[i], str) \
                    and set(value) == set(original.values[i]):
                continue
            if any(self.lex.is_unannotated_prone(objects[o].name) for o in value):
                return "unannotated_prone"
            step = parsed[i]
            argument = step.argument.strip().lower()
            if step.head == "filter" and step.kind not in _POSITIONS and not negated(argument) and step.dependencies:
                given = run.values[step.dependencies[0]]
                left = () if isinstance(given, str) else [o for o in given if o not in value]
                if not all(self.excluded(o, step.kind, argument) for o in left):
                    return "no_distractor"
        return None

    def _absence_decidable(self, steps: list[Step], downstream: set[int]) -> bool:
        """A "no" downstream of the edit says some named object is absent: only where it may."""
        for i in downstream:
            s = steps[i]
            if s.head in _RELATION_ARGUMENT_OPS and s.operation not in ("verify rel", "relate"):
                continue
            if s.operation in ("relate", "verify rel"):
                other = reference_name(s)
                if other in ("_", "") or self.lex.is_unannotated_prone(other) or not self.lex.absence_decidable(other):
                    return False
        return True

    def words_agree(self, parsed: list[Step], run: Execution) -> bool:
        """The program's ids must be what the words pick out: executed with every relation step
        by name ("the person the umbrella is above": every person it is above), the program
        must select the same objects and give the same answer. Two people under the umbrella
        make the words ambiguous, whichever one GQA's ids name."""
        by_words = [Step(s.operation, split_reference(s.argument)[0], s.dependencies)
                    if s.operation in ("relate", "verify rel") and split_reference(s.argument)[1] is not None
                    else s for s in parsed]
        first = next((i for i, (a, b) in enumerate(zip(by_words, parsed, strict=True)) if a is not b), None)
        if first is None:
            return True  # no step names objects by id: the run was by the words already
        try:  # the steps before the first by name are the run's own: their values are taken from it
            again = self.executor().run_steps(by_words, prefix=run, start=first)
        except ProgramRefusal:
            return False
        return again.answer == run.answer and all(again.refs.get(i) == ids for i, ids in run.refs.items()
                                                   if parsed[i].operation == "relate")
