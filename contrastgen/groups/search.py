"""Finding and proving a group's second image.

For a contrast pair, Q (answer a) and Q' (answer a') on image I, a candidate image J is any image
the index says has what both programs need; on J both programs are executed with their
references by name (the words' objects: GQA's ids belong to I) and proven under the rules an
edited program meets on its own image (`programs.proofs`: a "no" needs an opposite, an absence
needs a name whose absence a graph can show, the objects the words say as "the" ones must be all
there are and none of a kind annotators leave out). What the words presuppose ("the lamp" a
question asks of, the lamp "near the lamp" anchors on) must be on J, as it is on I: a cell has to
make sense on both images; only a bare absence ("Is there a lamp?") may be asked of a J without
one. A reference that denotes one object on I must denote one on J. J is kept when Q's answer there is not a: a full swap (Q says a', Q' says
a) is preferred to a partial one. Candidates are tried from a start drawn from (seed, pair id), at
most `MAX_TRIED` of them, so the same inputs and seed give the same J and the cost per pair is
bounded whatever the corpus. The candidates are walked in the corpus's order from the record's
own image's place, shifted by an amount drawn from the seed: nearby images (those of one shard)
then try nearby candidates, and the process's cache of scene indexes serves most of them.
"""

from __future__ import annotations

import functools
from collections import Counter, OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from contrastgen.datasets.gqa_program import (
    REFERENCE_OPS,
    Step,
    parse_step,
    read_reference,
    relation_of,
    split_reference,
    step_of,
)
from contrastgen.gc_policy import freeze_in_batch
from contrastgen.groups.index import ATTRIBUTE, NAME, RELATION, GroupIndex, key
from contrastgen.language.lexicon import Lexicon
from contrastgen.perturb import EVIDENCE_VERSION
from contrastgen.programs.edits.base import with_ids
from contrastgen.programs.executor import (
    PRONOUNS,
    SCENE,
    Execution,
    GqaExecutor,
    ProgramRefusal,
)
from contrastgen.programs.proofs import EditProofs, bare, claimed_whole, negated
from contrastgen.scene.index import SceneIndex

MAX_TRIED = 2  # candidate images executed per pair, at most
SCENE_CACHE = 512  # scene indexes kept per process (a candidate is often another pair's too)
SWAP, DIFFERS = "swap", "differs"
_POSITIONS = ("hposition", "vposition")
_NOT_NAMES = PRONOUNS | {SCENE}  # words a reference may use that say no kind (`_unnameable`)

# Why a candidate image or a pair was not grouped: the stats count them.
REASONS = ("no_program", "unnameable", "original_unproven", "no_candidate", "other_kind", "same_answer", "unproven", "unannotated_prone",
           "no_distractor", "ambiguous", "empty", "not_decidable", "program_mismatch", "malformed_program",
           "unknown_operation", "uniqueness", "presupposed_absent", "part_ambiguous", "not_grouped")


@dataclass(frozen=True)
class ProvenCell:
    """One question proven on one image: its answer, its program with that image's ids, and the
    objects it touched."""

    answer: str
    semantic: list[dict[str, Any]]
    evidence: dict[str, Any]


_UNTRIED = object()


@dataclass
class Original:
    """A record's original question, read once for all its pairs; `on` remembers its cell on each
    candidate image tried (None where it was not proven), which the record's other pairs reuse.
    What the search reads of it is made when a pair first gets that far: no pair of a question
    whose words say "the" ones of a kind annotators leave out (`unannotated`) ever does."""

    semantic: list[dict[str, Any]]
    steps: list[Step]
    answer: str
    scene: SceneIndex  # its image's
    lex: Lexicon
    unannotated: bool  # `said_unannotated`: then none of its pairs can be grouped
    on: dict[str, Any] = field(default_factory=dict)
    holds: bool | None = None  # `GroupFinder.original_holds`, once asked

    @property
    def image_id(self) -> str:
        return self.scene.image_id

    @functools.cached_property
    def counts(self) -> dict[int, int]:
        return listed_counts(self.steps)

    @functools.cached_property
    def required(self) -> frozenset[frozenset[str]]:
        return requirements(self.steps, self.lex)

    @functools.cached_property
    def kinds(self) -> dict[int, frozenset[str]]:
        """`listed_kinds` on its image."""
        return listed_kinds(self.steps, self.scene)

    @functools.cached_property
    def bared(self) -> Bared:
        """Its program by its words, as every candidate executes it."""
        return bared_program(self.semantic, self.steps)


class GroupFinder:
    """The search, for one process: the index, the lexicon and a bounded cache of scene indexes."""

    def __init__(self, index: GroupIndex, lex: Lexicon):
        self.index = index
        self.lex = lex
        self._scenes: OrderedDict[str, SceneIndex] = OrderedDict()
        # the walks of the image whose records are being grouped, by what they require: pairs of
        # one question often require the same (an edit to a relation's opposite, a yes/no flip)
        self._walks: dict[frozenset[frozenset[str]], list[str]] = {}
        self._walks_of: tuple[str, int] | None = None

    def scene(self, image_id: str) -> SceneIndex:
        hit = self._scenes.get(image_id)
        if hit is not None:
            self._scenes.move_to_end(image_id)
            return hit
        records = self.index.records
        built = self._scenes[image_id] = (
            SceneIndex.from_lookup_record(image_id, records[image_id]) if records is not None
            else SceneIndex.build_for_lookup(image_id, self.index.graphs[image_id], self.lex))
        freeze_in_batch()  # kept for a while and acyclic: no collection need walk it
        if len(self._scenes) > SCENE_CACHE:
            self._scenes.popitem(last=False)
        return built

    def original(self, semantic: list[dict[str, Any]], answer: str, scene_i: SceneIndex,
                 reasons: Counter) -> Original | None:
        """The record's question, read once for all its pairs; None (the reason counted) where no
        pair of it can be grouped."""
        steps = self._steps(semantic, reasons)
        if steps is None:
            return None
        return Original(semantic, steps, answer, scene_i, self.lex, said_unannotated(steps, self.lex))

    def original_holds(self, q: Original) -> bool:
        """Is the original proven on its image as every other cell is? It is GQA's, its answer
        GQA's gold, which "Do you see gloves or balls? no" rests on no glove being annotated.
        Asked once a group is found (most pairs find none), remembered for the record's others."""
        if q.holds is None:
            scene = q.scene
            executor = functools.partial(GqaExecutor, scene, self.lex, scene.graph)
            try:
                run = executor().run_steps(q.steps)
                q.holds = run.answer == q.answer and EditProofs(scene, self.lex, executor).holds(
                    q.semantic, q.steps, q.steps, set(range(len(q.steps))), run)
            except ProgramRefusal:
                q.holds = False
        return q.holds

    def _steps(self, semantic: list[dict[str, Any]], reasons: Counter) -> list[Step] | None:
        try:
            read = [_STEPS[s["operation"], str(s.get("argument", "")), tuple(s.get("dependencies", ()))]
                    for s in semantic]
        except (KeyError, TypeError, AttributeError):
            reasons["no_program"] += 1
            return None
        if not all(read):  # an unnameable step reads as None
            reasons["unnameable"] += 1
            return None
        return read  # type: ignore[return-value]

    def find(self, q: Original, perturbed: list[dict[str, Any]], answer_perturbed: str, seed: int,
             reasons: Counter) -> tuple[str, str, ProvenCell, ProvenCell] | None:
        """(kind, J, Q's cell on J, Q''s cell on J) for the pair (q, perturbed), or None with the
        reasons counted."""
        steps_p = self._steps(perturbed, reasons)
        if steps_p is None:
            return None
        if q.unannotated or said_unannotated(steps_p, self.lex):
            reasons["unannotated_prone"] += 1
            return None
        # what a cell of Q' reads of it, made when a candidate first gets that far (most pairs'
        # candidates turn Q down)
        read_p: tuple[Bared, dict[int, int], dict[int, frozenset[str]]] | None = None
        candidates = self._candidates(q.required | requirements(steps_p, self.lex), q.image_id, seed)
        if not candidates:
            reasons["no_candidate"] += 1
            return None
        for j in candidates:
            cell_q = q.on.get(j, _UNTRIED)
            if cell_q is _UNTRIED:
                cell_q = q.on[j] = self.prove(q.bared, q.counts, q.kinds, self.scene(j), reasons)
            if cell_q is None:
                continue
            if cell_q.answer == q.answer:
                reasons["same_answer"] += 1
                continue
            if read_p is None:
                read_p = (bared_program(perturbed, steps_p), listed_counts(steps_p), listed_kinds(steps_p, q.scene))
            cell_p = self.prove(*read_p, self.scene(j), reasons)
            if cell_p is None:
                continue
            if not self.original_holds(q):
                reasons["original_unproven"] += 1
                return None
            # the first group found is kept: a swap where Q and Q' exchange their answers, else a
            # partial one (Q's answer differs); looking on for a swap would double the cost
            return (SWAP if cell_q.answer == answer_perturbed and cell_p.answer == q.answer else DIFFERS,
                    j, cell_q, cell_p)
        reasons["not_grouped"] += 1
        return None

    def _candidates(self, required: frozenset[frozenset[str]], image_id: str, seed: int) -> list[str]:
        """`GroupIndex.candidates` for a pair of `image_id`, remembered while that image's records
        are grouped (a run's seed is one; a new image or seed forgets them)."""
        if (image_id, seed) != self._walks_of:
            self._walks.clear()
            self._walks_of = (image_id, seed)
        found = self._walks.get(required)
        if found is None:
            found = self._walks[required] = self.index.candidates(required, image_id, seed, MAX_TRIED)[0]
        return found

    def prove(self, program: Bared, counts: Mapping[int, int], kinds: Mapping[int, frozenset[str]],
              scene: SceneIndex, reasons: Counter) -> ProvenCell | None:
        """The program on another image, by its words (`bared_program`), proven as an edited
        program is; None (the reason counted) where it cannot be."""
        bared, parsed, presumed = program
        executor = functools.partial(GqaExecutor, scene, self.lex, scene.graph)
        try:
            run = executor().run_steps(parsed)
            answer = run.answer
        except ProgramRefusal as exc:
            reasons[exc.reason] += 1
            return None
        for i in presumed:
            value = run.values[i]
            if not isinstance(value, str) and not value:
                # "Is there a sofa near the lamp? no" where there is no lamp answers a question
                # that does not arise there (cheap, so before the proofs)
                reasons["presupposed_absent"] += 1
                return None
        proofs = EditProofs(scene, self.lex, executor)
        if not proofs.holds(bared, parsed, parsed, set(range(len(parsed))), run):
            reasons["unproven"] += 1
            return None
        why = proofs.new_references_unshown(presumed, parsed, run, Execution())
        if why is not None:
            reasons[why] += 1
            return None
        for i in presumed:
            value = run.values[i]
            if not isinstance(value, str) and counts.get(i) == 1 and len(value) != 1:
                reasons["uniqueness"] += 1  # "the cat" on I is one cat; on J it must be one too
                return None
        for i, ids in run.refs.items():
            # "the cake" on J is a cake, or of a kind the same words named on I: a kind below the
            # name only where I had one ("dessert" for a doughnut there and here), since whether
            # a doughnut is a cake is where word lists part ways
            allowed = kinds.get(i, frozenset()) | {self.lex.canonical(relation_of(parsed[i])[0])}
            if any(scene.objects[o].canonical not in allowed for o in ids):
                reasons["other_kind"] += 1
                return None
        cell = [with_ids(s, run.refs.get(i)) if s["operation"] in REFERENCE_OPS else s for i, s in enumerate(bared)]
        touched = sorted({o for ids in run.refs.values() for o in ids})
        facts = [{"fact": "object", "id": o, "name": scene.objects[o].name} for o in touched]
        return ProvenCell(answer, cell, {"version": EVIDENCE_VERSION, "facts": facts, "answer": answer})


class Bared(NamedTuple):
    """A program with its references by name, not by its own image's ids (`proofs.bare`): what is
    executed on a candidate image; with the steps whose objects its words presuppose
    (`presupposed`), which every candidate's proof reads."""

    written: list[dict[str, Any]]
    parsed: list[Step]
    presupposed: set[int]  # `Shape.presupposed`: read only


def bared_program(semantic: list[dict[str, Any]], steps: list[Step]) -> Bared:
    """`semantic` (parsed as `steps`) bared; a step without ids keeps its parse."""
    written = [bare(s) for s in semantic]
    parsed = [step_of(b) if b is not s else steps[i] for i, (s, b) in enumerate(zip(semantic, written, strict=True))]
    return Bared(written, parsed, shape_of(parsed).presupposed)


def presupposed(steps: list[Step]) -> set[int]:
    """The steps whose objects the words presuppose wherever the question is asked: those said
    as "the" ones (`claimed_whole`: "What color is the lamp?") and those a `relate` starts from
    ("Is there a sofa near the lamp?" presupposes a lamp), with what hands objects on to them (a
    filter's or a relation's input: "near the red lamp"). An `exist` of a select presupposes
    nothing ("Is there a lamp?" makes sense without one), nor do the objects a relation finds
    when only an `exist` reads them (the sofa). On I, GQA's ids vouch for them; on J each must
    be there, under the rules "the" ones meet (one where I had one, none of a kind annotators
    leave out, a filter's left-out ones shown to lack its value)."""
    out = claimed_whole([s.operation for s in steps], [s.dependencies for s in steps])
    for j in range(len(steps) - 1, -1, -1):  # a step reads only earlier ones: one pass back suffices
        s = steps[j]
        if s.operation == "relate" or (j in out and s.head in ("filter", "relate")):
            out.update(s.dependencies)
    return out


class Shape(NamedTuple):
    """What the search reads of a program's operations and dependencies alone, its arguments
    aside. Why apart: it is the same for every program of that shape, and a run's programs have
    a few hundred shapes, so it is read once per shape (`shape_of`) instead of three times for
    every program of every pair."""

    presupposed: set[int]  # `presupposed`'s, one set shared by the programs of the shape: read only
    needed: tuple[int, ...]  # the steps `requirements` reads, ascending
    roots: tuple[int, ...]  # the select or relate each presupposed step's objects come from (`said_unannotated`)


def _read_shape(steps: list[Step]) -> Shape:
    said = presupposed(steps)
    needed = set(said)
    todo = list(needed)
    while todo:  # what hands objects on to a presupposed step is needed too
        i = todo.pop()
        if steps[i].head in ("filter", "relate"):
            for d in steps[i].dependencies:
                if d not in needed:
                    needed.add(d)
                    todo.append(d)
    # a relation step asks of one named object, and its answer, yes or no, rests on an edge of
    # the relation or of its opposite
    needed.update(i for i, s in enumerate(steps) if s.operation in ("verify rel", "choose rel"))
    roots = set()
    for i in said:
        j = i
        while steps[j].head == "filter" and steps[j].dependencies:
            j = steps[j].dependencies[0]
        if steps[j].operation in ("select", "relate"):
            roots.add(j)
    return Shape(said, tuple(sorted(needed)), tuple(sorted(roots)))


class _Shapes(dict[tuple[tuple[str, tuple[int, ...]], ...], Shape]):
    """(operation, dependencies) of each step -> the program's `Shape`, remembered; emptied when
    full, so memory stays bounded."""

    LIMIT = 1 << 12


_SHAPES = _Shapes()


def shape_of(steps: list[Step]) -> Shape:
    """The program's `Shape`, read once per distinct shape."""
    written = tuple([(s.operation, s.dependencies) for s in steps])
    found = _SHAPES.get(written)
    if found is None:
        if len(_SHAPES) >= _Shapes.LIMIT:
            _SHAPES.clear()
        found = _SHAPES[written] = _read_shape(steps)
    return found


def requirements(steps: list[Step], lex: Lexicon) -> frozenset[frozenset[str]]:
    """What an image must have for the program to refer to anything its words presuppose
    (`presupposed`: "the" ones, a relation's anchor): each such object's name (any kind it
    denotes), each filter's value and each relation that leads to it (`Shape.needed`: with what
    hands objects on to them, and every relation step). Steps that only `exist` reads may be
    empty: there the answer may be "no"."""
    out: set[frozenset[str]] = set()
    for i in shape_of(steps).needed:
        s = steps[i]
        if s.operation in REFERENCE_OPS:
            name, rel, _ = relation_of(s)
            if name not in ("_", "", SCENE):
                out.add(_name_keys(name, lex))
            if rel:
                out.add(_relation_keys(rel, lex))
        elif s.head == "filter" and s.kind not in _POSITIONS and not negated(s.argument.strip()):
            out.add(_attribute_keys(s.argument.strip().lower()))
    return frozenset(out)


@functools.lru_cache(maxsize=1 << 14)  # a run's pairs name a few thousand kinds, again and again
def _name_keys(name: str, lex: Lexicon) -> frozenset[str]:
    """The keys of a name: any kind it denotes."""
    return frozenset(key(NAME, k) for k in {lex.canonical(name), *lex.hyponyms(name)})


@functools.lru_cache(maxsize=1 << 12)
def _relation_keys(rel: str, lex: Lexicon) -> frozenset[str]:
    """The keys of a relation argument ("on|under" for a choice): each relation and its opposite."""
    rels = {r.strip() for r in rel.split("|")}
    rels |= {o for r in rels if (o := lex.opposite_relation(r))}
    return frozenset(key(RELATION, r) for r in rels)


@functools.lru_cache(maxsize=1 << 14)
def _attribute_keys(value: str) -> frozenset[str]:
    return frozenset({key(ATTRIBUTE, value)})


def said_unannotated(steps: list[Step], lex: Lexicon) -> bool:
    """Do the words presuppose objects of a kind annotators leave out ("What is the man
    wearing?" asks of his clothes, "Is there a logo on the shirt?" anchors on one)? On another
    image nothing shows they are all there are: every candidate would be turned down for it."""
    return any(lex.is_unannotated_prone(relation_of(steps[j])[0]) for j in shape_of(steps).roots)


def _unnameable(step: Step) -> bool:
    """Does the step refer to an object by a word that does not say its kind away from its ids?
    "he (12)": the ids say who, on another image nothing does; "scene (12)", an object so named,
    would read there as the whole scene."""
    if step.operation not in REFERENCE_OPS:
        return False
    ref = _read_reference(step.argument)  # read once, not kept: see `_ReadSteps`
    return ref.ids is not None and ref.name in _NOT_NAMES


_read_reference = read_reference.__wrapped__  # `read_reference` without its cache


class _ReadSteps(dict[tuple[Any, str, tuple[Any, ...]], Step | None]):
    """(operation, argument, dependencies) of a step as written -> its parse (`step_of`), or None
    where it is `_unnameable`, remembered. Why: both programs of every pair are read, and they
    share all their steps but one (an image's questions share more), so most steps of a run were
    read already. Emptied when full, so memory stays bounded."""

    LIMIT = 1 << 12

    def __missing__(self, written: tuple[Any, str, tuple[Any, ...]]) -> Step | None:
        if len(self) >= self.LIMIT:
            self.clear()
        # `step_of`'s parse and `_unnameable`'s test without their shared caches: a step read
        # here carries its image's ids, so it is new to them, and each would keep it (a million
        # questions fill them) for no other reader
        step = parse_step(*written)
        read = self[written] = None if _unnameable(step) else step
        return read


_STEPS = _ReadSteps()



def listed_kinds(steps: list[Step], scene: SceneIndex) -> dict[int, frozenset[str]]:
    """The kinds (canonical names) of the objects each reference lists by id on its own image."""
    out: dict[int, frozenset[str]] = {}
    for i, s in enumerate(steps):
        ids = split_reference(s.argument)[1] if s.operation in REFERENCE_OPS else None
        if ids:
            out[i] = frozenset(scene.objects[o].canonical for o in ids if o in scene.objects)
    return out


def listed_counts(steps: list[Step]) -> dict[int, int]:
    """How many objects each reference names on its own image, by its ids (a filter: those of
    the reference it narrows, which the ids list after the filtering). An edited program's ids
    are its execution's; the original's are GQA's, which its proof on the image vouched for."""
    out: dict[int, int] = {}
    for i, s in enumerate(steps):
        if s.operation in ("select", "relate"):
            ids = split_reference(s.argument)[1]
            if ids:
                out[i] = len(ids)
        elif s.head == "filter" and s.dependencies and s.dependencies[0] in out:
            out[i] = out[s.dependencies[0]]
    return out


_FINDER: list[GroupFinder] = []  # this process's finder: its scene cache outlives a shard


def finder_for(index: GroupIndex, lex: Lexicon) -> GroupFinder:
    """The process's finder for `index` (a worker runs many shards of one run)."""
    if not _FINDER or _FINDER[0].index is not index:
        _FINDER[:] = [GroupFinder(index, lex)]
    return _FINDER[0]
