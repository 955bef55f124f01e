"""Adding a redundant relation to a CLEVR-family question's references (Super-CLEVR's rd+), and
dropping one (rd-), with the proof that the reference still denotes what it did.

A reference gains a relation by the question being written in the family that words it with one
(`datasets.clevr_hops`): "What color is the bus?" becomes "What color is the large metallic bus
that is left of the small cyan rubber sedan?". The relation is redundant, and so kept, only when
on this scene:
- the object related to is described by all its attributes (the family's NULL parameters left
  open) and that description denotes it alone;
- the reference's set is unchanged: the objects it denotes with the relation are the objects it
  denoted without it (the same unique object; the same set for a count or exist), and every other
  reference of the question denotes what it did, so the answer is the original's;
- the family's constraints hold, and the words, written from the family's first text with every
  optional word kept (its next text when that one does not read back), read back
  (`read_question`) to exactly the rewritten program;
- the relation is redundancy, not the answer said: the object related to is none the question
  asks about (through its chain: what a query reads, the members of what a count or exist
  measures, both sides of a comparison), and none of its attributes is the answer; and the
  reference denotes something (of an empty set every relation is true, and says nothing).
Every reference of the original that some family relates gets one relation (the objects related
to get none); then every attribute the final family leaves sayable is said, as rd+ says them.
The redundant relations and objects are rotated by a hash of the question's key and the first
that passes every check is taken: the choice is deterministic, and not always the first relation
in the list.

Super-CLEVR's generator makes rd+'s relations by keeping a relation family's question whose
relation changes nothing (a "degenerate" one, which it otherwise rejects); it never turns a
question of one family into another, which existing questions need, hence the proof on the scene.

Dropping is the same step backwards: a question of a relation family whose relation leaves its
reference's set unchanged is written in the family without it. CLEVR's generator tests
degeneracy only for families with a bare `relate` node (single_and), so questions of the
relate_filter families (one_hop, comparison, compare_integer, ...) can carry such a relation at rd.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contrastgen.clevr.edits import Editor, out_neq_holds
from contrastgen.clevr.evidence import trace_json
from contrastgen.clevr.executor import Execution, Invalid, execute
from contrastgen.clevr.render import render
from contrastgen.clevr.scene_view import ClevrScene
from contrastgen.datasets.clevr_hops import Hop, hop_at, hop_into
from contrastgen.datasets.clevr_reading import (
    Reading,
    build_program_and_map,
    constraints_hold,
    null_value,
    read_question,
)
from contrastgen.datasets.clevr_templates import Family, load_families
from contrastgen.datasets.clevr_vocab import RELATION_NAMES, load_vocabulary

_ATTRIBUTE = {"Size": "size", "Color": "color", "Material": "material", "Shape": "shape"}
_ENDINGS = ("unique", "count", "exist")
_REFERENCE_NODES = ("filter_unique", "filter_count", "filter_exist", "filter")

# Why a reference did not gain (or lose) a relation: the keys of the statistics.
NO_FAMILY = "no family words this reference with a relation"
NOT_REDUNDANT = "no relation to a uniquely described object leaves the reference unchanged"
NOT_READ_BACK = "the rewritten words do not read back to the program"
NOT_DROPPABLE = "the relation is needed: without it the reference denotes other objects"
# A relation rd+ must not add though it changes nothing: it would not be redundancy, or it would
# say the answer. Anchored on an object the question asks about, its words describe that object
# in full ("the bicycle that is right of the small gray rubber articulated bus" in a question
# asking the articulated bus's colour); on an object whose attributes include the answer, they
# say the answer word; on a reference that denotes nothing, any relation is vacuous.
EMPTY_SET = "the reference denotes nothing: a relation on it is vacuous"
ANCHOR_ASKED = "every redundant relation is anchored on an object the question asks about"
ANCHOR_SAYS_ANSWER = "every redundant relation is anchored on an object whose description says the answer"
ANCHOR_ASKED_OR_ANSWER = ("every redundant relation is anchored on an object the question asks about "
                          "or whose description says the answer")


@dataclass(frozen=True)
class RelationChange:
    """One relation added (or dropped), and the proof that it changes nothing on the scene."""

    relation: str  # CLEVR's value: left, right, behind, front
    object: int  # the object related to
    object_said: str  # how the question describes it
    relate_node: int  # the `relate` node of the program that says the relation
    reference_node: int  # the program node holding the set the reference denotes
    denotes: Any  # that set (objects), with the relation and without it alike

    def to_json(self) -> dict[str, Any]:
        return {"relation": self.relation, "relation_words": RELATION_NAMES[self.relation], "object": self.object,
                "object_said": self.object_said, "relate_node": self.relate_node,
                "reference_node": self.reference_node, "denotes": self.denotes,
                "denotes_without_relation": self.denotes}


@dataclass(frozen=True)
class Rewrite:
    """A question rewritten into another family with relations added or dropped."""

    reading: Reading  # the rewritten question's family, text, values and word choices
    program: list[dict[str, Any]]
    question: str
    changes: tuple[RelationChange, ...]

    def record_fields(self, source: Family, source_program: list[dict[str, Any]], edit: str) -> dict[str, Any]:
        """What a question record carries of the rewrite: its family, and the evidence (for a
        dropped relation, with the program it is cited in: the original's)."""
        family = self.reading.family
        evidence: dict[str, Any] = {"from_family": {"template_filename": source.file,
                                                    "question_family_index": source.index}}
        if edit != "rd+":
            evidence["from_program"] = source_program
        evidence["relations"] = [c.to_json() for c in self.changes]
        return {"template_filename": family.file, "question_family_index": family.index,
                "relations_" + ("added" if edit == "rd+" else "dropped"): evidence}


def relations_said(program: list[dict[str, Any]]) -> int:
    return sum(1 for n in program if n["type"] == "relate")


def set_node(program: list[dict[str, Any]], node: int) -> int:
    """The node holding the set a reference denotes: the input of its unique/count/exist."""
    return program[node]["inputs"][0] if program[node]["type"] in _ENDINGS else node


def asked_objects(program: list[dict[str, Any]], outputs: tuple[Any, ...]) -> frozenset[int]:
    """The objects a question asks about, found through its chain from the answer back: the
    object a `query` reads (a part's object for a part), the members of the set a `count` or
    `exist` measures, and both sides of a comparison."""
    found: set[int] = set()

    def visit(node: int) -> None:
        kind = program[node]["type"]
        if kind.startswith(("equal_", "less_than", "greater_than")):
            for i in program[node]["inputs"]:
                visit(i)
        elif kind.startswith(("query_", "partquery_")) or kind in ("count", "exist"):
            value = outputs[program[node]["inputs"][0]]
            for item in value if isinstance(value, tuple) and not _is_part(value) else (value,):
                found.add(item[0] if _is_part(item) else item)

    visit(len(program) - 1)
    return frozenset(found)


def _is_part(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str)


def _relate_node(program: list[dict[str, Any]], node: int) -> int:
    """The `relate` a relate_filter_* reference starts with, walking back through its filters."""
    while program[node]["type"] != "relate":
        node = program[node]["inputs"][0]
    return node


@dataclass
class _State:
    reading: Reading
    node_of: dict[int, int]  # the original's template node -> this family's
    changes: list[RelationChange]


class RelationRewriter:
    """Relations added to or dropped from one question's references on one scene."""

    def __init__(self, reading: Reading, scene: ClevrScene, original: Execution, key: str):
        self.original_reading = reading
        self.scene = scene
        self.original = original
        self.key = key  # picks among the relations that pass, deterministically
        self.vocab = load_vocabulary()
        self.families = load_families()
        self.original_program, self.original_at = build_program_and_map(reading.family, reading.values)
        at = self.original_at
        self.original_sets = {t: original.outputs[set_node(self.original_program, at[t])] for t in at}
        self.original_outputs = {t: original.outputs[at[t]] for t in at}
        self.refused: Counter[str] = Counter()
        self.asked = asked_objects(self.original_program, original.outputs)
        self.answer = self.vocab.answer_words(original.answer)

    def _reference_refused(self, t: int) -> str | None:
        """Why the reference at template node `t` may gain no relation (None: it may)."""
        return EMPTY_SET if self.original_sets[t] == () else None

    def _anchor_refused(self, obj: int) -> str | None:
        """Why a relation to `obj` may not be added (None: it may). Every attribute of the object
        counts, not only those the family says at this hop: rd+ then says every attribute the
        final family leaves sayable."""
        if obj in self.asked:
            return ANCHOR_ASKED
        o = self.scene.objects[obj]
        if any(self.vocab.answer_words(o.value(a)) == self.answer for a in _ATTRIBUTE.values()):
            return ANCHOR_SAYS_ANSWER
        return None

    def _holds(self, reading: Reading, node_of: Mapping[int, int]) -> tuple[list[dict[str, Any]], Execution] | None:
        """The program of `reading` if it runs, its constraints hold, and every reference of the
        original (through `node_of`) denotes what it did, so the answer is the original's."""
        family, values = reading.family, reading.values
        if not constraints_hold(family, values):
            return None
        program, at = build_program_and_map(family, values)
        execution = execute(program, self.scene)
        if isinstance(execution, Invalid) or not out_neq_holds(family, at, execution):
            return None
        for t, k in node_of.items():
            if execution.outputs[at[k]] != self.original_outputs[t] or \
                    execution.outputs[set_node(program, at[k])] != self.original_sets[t]:
                return None
        if self.vocab.answer_words(execution.answer) != self.vocab.answer_words(self.original.answer):
            return None
        return program, execution

    def _written(self, family: Family, values: dict[str, str], words: dict[str, str]) -> Reading | None:
        """The question in `family` as read back: its first text with every optional kept (the
        next text when that one does not read back to the program)."""
        for index, text in enumerate(family.texts):
            choices = {f"opt{n}": "kept" for n in range(text.count("["))}
            reading = Reading(family, index, values, words, choices)
            reread = read_question({"question": render(reading, values), "template_filename": family.file,
                                    "question_family_index": family.index})
            if isinstance(reread, Reading) and reread.program() == reading.program():
                return reread
        return None

    def _pick(self, options: list[Any], salt: int) -> list[Any]:
        """`options` rotated to start at the one the question's key picks."""
        if not options:
            return options
        start = zlib.crc32(f"{self.key}|{salt}".encode()) % len(options)
        return options[start:] + options[:start]

    def _finish(self, state: _State) -> Rewrite | None:
        if not state.changes:
            return None
        reading = state.reading
        return Rewrite(reading, reading.program(), render(reading, reading.values), tuple(state.changes))

    def add(self, values: Mapping[str, str]) -> Rewrite | None:
        """`values` (of the original's family, e.g. with rd+'s attributes) with a redundant
        relation added to every reference that can take one; None when none can."""
        reading = self.original_reading
        state = _State(Reading(reading.family, reading.text_index, dict(values), reading.words, reading.choices),
                       {t: t for t in range(len(reading.family.nodes))}, [])
        if self._holds(state.reading, state.node_of) is None:
            return None
        added = []
        for t, node in enumerate(reading.family.nodes):
            if node["type"] not in _REFERENCE_NODES or reading.family.nodes[node["inputs"][0]]["type"] != "scene":
                continue
            family = state.reading.family
            hop = hop_at((family.file, family.index), state.node_of[t])
            if hop is None:
                self.refused[NO_FAMILY] += 1
                continue
            if (reason := self._reference_refused(t)) is not None:
                self.refused[reason] += 1
                continue
            step = self._hop(state, hop, t)
            if step is not None:
                state = step
                added.append(t)
        if not added:
            return None
        # The family a question ends in may leave open less than the one it passed through
        # (comparison 4 keeps its related object's size open, comparison 6 does not): rd+ says
        # every attribute the final family lets it say.
        program, at = build_program_and_map(state.reading.family, state.reading.values)
        execution = execute(program, self.scene)
        assert isinstance(execution, Execution)  # proven by `_holds` when the relation was added
        full = Editor(state.reading, self.scene, execution).whole_question("rd+")
        if full is not None:
            r = state.reading
            state = _State(Reading(r.family, r.text_index, full.values, r.words, r.choices), state.node_of,
                           state.changes)
        # the evidence cites the final program's nodes
        program, at = build_program_and_map(state.reading.family, state.reading.values)
        changes = []
        for t, change in zip(added, state.changes, strict=True):
            node = set_node(program, at[state.node_of[t]])
            changes.append(RelationChange(change.relation, change.object, change.object_said,
                                          _relate_node(program, node), node, change.denotes))
        return self._finish(_State(state.reading, state.node_of, changes))

    def _hop(self, state: _State, hop: Hop, t: int) -> _State | None:
        target = self.families[hop.target]
        nulls = {c["params"][0] for c in target.constraints if c["type"] == "NULL"}
        mapped = {hop.param_map[p]: v for p, v in state.reading.values.items()}
        words = {hop.param_map[p]: w for p, w in state.reading.words.items()}
        words.update({p: "" for p in (*hop.anchor, hop.relation)})
        node_of = {s: hop.node_map[k] for s, k in state.node_of.items()}
        redundant = []
        for relation in RELATION_NAMES:
            for obj in self.scene.objects:
                described = {p: null_value(target.params[p]) if p in nulls else obj.value(_ATTRIBUTE[target.params[p]])
                             for p in hop.anchor}
                values = {**mapped, **described, hop.relation: relation}
                proven = self._holds(Reading(target, 0, values, words, {}), node_of)
                if proven is not None and proven[1].outputs[
                        build_program_and_map(target, values)[1][hop.anchor_node]] == obj.index:
                    redundant.append((relation, obj.index, values))
        if not redundant:
            self.refused[NOT_REDUNDANT] += 1
            return None
        # rotated before the refusals, so a question none of them touches picks as it would without them
        allowed = []
        refusals: set[str] = set()
        for candidate in self._pick(redundant, t):
            reason = self._anchor_refused(candidate[1])
            if reason is None:
                allowed.append(candidate)
            else:
                refusals.add(reason)
        if not allowed:
            self.refused[refusals.pop() if len(refusals) == 1 else ANCHOR_ASKED_OR_ANSWER] += 1
            return None
        for relation, obj, values in allowed:
            written = self._written(target, values, words)
            if written is not None:
                said = " ".join(w for p in hop.anchor if (w := written.words.get(p)))
                change = RelationChange(relation, obj, said, -1, -1, trace_json(self.original_sets[t]))
                return _State(written, node_of, [*state.changes, change])
        self.refused[NOT_READ_BACK] += 1
        return None

    def drop(self) -> Rewrite | None:
        """The question with every relation that changes nothing dropped (written in the family
        without it); None when none can be. The evidence cites the original question's program,
        where the relation is."""
        reading = self.original_reading
        state = _State(reading, {t: t for t in range(len(reading.family.nodes))}, [])
        while True:
            family = state.reading.family
            step = next((s for hop in hop_into((family.file, family.index))
                         if (s := self._unhop(state, hop)) is not None), None)
            if step is None:
                return self._finish(state)
            state = step

    def _unhop(self, state: _State, hop: Hop) -> _State | None:
        source = self.families[hop.source]
        back = {q: p for p, q in hop.param_map.items()}
        values = {back[q]: v for q, v in state.reading.values.items() if q in back}
        words = {back[q]: w for q, w in state.reading.words.items() if q in back}
        inverse = {k: s for s, k in hop.node_map.items()}
        reference = next(t for t, k in state.node_of.items() if k == hop.node_map[hop.node])
        anchor = next(t for t, k in state.node_of.items() if k == hop.anchor_node)
        node_of = {t: inverse[k] for t, k in state.node_of.items() if k in inverse}
        if self._holds(Reading(source, 0, values, words, {}), node_of) is None:
            self.refused[NOT_DROPPABLE] += 1
            return None
        written = self._written(source, values, words)
        if written is None:
            self.refused[NOT_READ_BACK] += 1
            return None
        node = set_node(self.original_program, self.original_at[reference])
        relate = _relate_node(self.original_program, node)
        said = " ".join(w for p in hop.anchor if (w := state.reading.words.get(p)))
        change = RelationChange(self.original_program[relate]["value_inputs"][0],
                                self.original.outputs[self.original_at[anchor]], said, relate, node,
                                trace_json(self.original_sets[reference]))
        return _State(written, node_of, [*state.changes, change])
