"""What every template handler shares: its input (a Context), the evidence vocabulary of
docs/output-formats.md's "Evidence schema (version 1)", and the checks of names and references.

Each handler is a generator: it yields proven `contrastgen.perturb.Proposal`s in a seeded order
(or raises `contrastgen.perturb.Refusal`), and the driver (`perturb.Ranking`) keeps the first
max-k that are not duplicates. Because the order does not depend on max-k, the k = 1 set is a
prefix of the k = 3 set, which is a prefix of the k = 5 set (nesting for free).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from contrastgen.language.lexicon import Lexicon, attribute_opposites
from contrastgen.language.nounphrase import NounPhrase
from contrastgen.language.phrase import agree, finish, replace_spans
from contrastgen.perturb import EVIDENCE_VERSION, Proposal, Refusal
from contrastgen.scene.corpus import Corpus
from contrastgen.scene.ground import Grounding, denoted_ids, same_kind
from contrastgen.scene.index import SceneIndex
from contrastgen.scene.program_reading import ProgramReading
from contrastgen.templates.patterns import Match


@dataclass
class Context:
    question_id: str
    question: dict[str, Any]
    answer: str  # normalised original answer
    match: Match
    nps: dict[str, NounPhrase]
    grounding: dict[str, Grounding]
    scene: SceneIndex
    lex: Lexicon
    corpus: Corpus | None
    # the seeded generator's maker (`perturb.seeded_rng` with its arguments), called at the first
    # draw: seeding one costs more than reading the question, and a question refused first (the
    # original's checks) or a handler that draws nothing (the relation's own) needs none
    make_rng: Callable[[], random.Random]
    reading: ProgramReading | None = None  # the question's program, agreeing with the words
    _rng: random.Random | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def rng(self) -> random.Random:
        """The question's generator for this template, made on first use (the same draws)."""
        rng = self._rng
        if rng is None:
            rng = self._rng = self.make_rng()
        return rng

    def span(self, slot: str) -> tuple[int, int]:
        s = self.match.spans[slot]
        return s.start, s.end


class Handler(Protocol):
    def __call__(self, ctx: Context) -> Iterator[Proposal]: ...


# -- names ---------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=65536)
def _expanded(word: str, lex: Lexicon) -> frozenset[str]:
    """Surface names of the word's kind and its hyponyms, without forms that belong to another
    kind ("glasses" is a plural of "glass" but also names spectacles: it is not a glass)."""
    kinds = {lex.canonical(word)} | set(lex.hyponyms(word))
    names = set()
    for k in kinds:
        names |= {n.lower() for n in lex.forms(k) if lex.canonical(n) in kinds}
    return frozenset(names)


@functools.lru_cache(maxsize=65536)
def _prone(word: str, lex: Lexicon) -> bool:
    """May annotators have left this kind out? True when the word, any of its hyponyms' names
    ("block" covers "tile") or any kind it belongs to ("belt" is clothing) is unannotated-prone."""
    return (lex.is_unannotated_prone(word)
            or any(lex.is_unannotated_prone(n) for n in _expanded(word, lex))
            or any(lex.is_unannotated_prone(k) for k in lex.kinds(word)))


def kind_names(word: str, scene: SceneIndex, lex: Lexicon) -> frozenset[str]:
    """Every surface name that denotes `word`'s kind: lexicon forms, hyponyms' forms, and the
    graph's own names of the objects it denotes. Evidence lists these so the verifier can
    recompute "which objects are X" by name alone. Remembered per image (the scene's memo): the
    evidence of each of its questions' candidates lists them again."""
    key = ("kind names", word, lex)
    found = scene.memo.get(key)
    if found is None:
        names = set(_expanded(word, lex))
        names |= {scene.objects[i].name for i in denoted_ids(word, scene, lex)}
        found = scene.memo[key] = frozenset(names)
    return found


@functools.lru_cache(maxsize=65536)
def _maybe_names(word: str, lex: Lexicon) -> frozenset[str]:
    """Surface names of every kind the word MAY denote (`Lexicon.may_denote`): a bowl may be the
    dish a question asks about, so "no dishes" needs no bowl either."""
    names = set()
    for k in lex.may_denote(word):
        names |= {n.lower() for n in lex.forms(k) if lex.canonical(n) == k}
    return frozenset(names)


@functools.lru_cache(maxsize=65536)
def _absence_names(word: str, lex: Lexicon) -> frozenset[str] | None:
    """The names no object of a graph may have for `word`'s absence to be proven from it (its
    kind's and hyponyms' forms, and those of every kind it may denote); None when absence cannot
    be proven at all (an unknown word, kinds the lexicon cannot list, a kind annotators leave
    out). Per word, not per question: the search asks it of the same few hundred candidates."""
    if not lex.is_known(word) or not lex.absence_decidable(word) or _prone(word, lex):
        return None
    return _expanded(word, lex) | _maybe_names(word, lex)


def absent_provably(word: str, scene: SceneIndex, lex: Lexicon) -> bool:
    """Absence from the graph proves absence from the image only for known kinds that scene
    graphs do not habitually leave out, whose kinds the lexicon can list, and when nothing in the
    graph may be one: no object it denotes, no object named by a form of its kind or of a kind it
    may denote (the names `kind_names` and `_maybe_names` list in its evidence)."""
    names = _absence_names(word, lex)
    if names is None or denoted_ids(word, scene, lex):
        return False
    return not scene.has_any_name(names)


def unique_object(word: str, scene: SceneIndex, lex: Lexicon) -> str | None:
    """The one object `the word` can refer to, or None if there are none or several."""
    ids = denoted_ids(word, scene, lex)
    return ids[0] if len(ids) == 1 else None


def distinct_kind(candidate: str, *others: str, lex: Lexicon) -> bool:
    """Is the candidate a noun the lexicon knows (so the new words can be read: Visual Genome
    also names objects "it" or "red") and of another kind than every one of `others`?

    Not remembered per (candidate, others): the others are each question's own names, so nine
    calls in ten were new (100k questions: 9,879 of 88,347 repeated); `same_kind` remembers
    each pair."""
    if not lex.is_known(candidate):
        return False
    for other in others:  # noqa: SIM110 - a loop, not a generator made for each of the search's calls
        if other and same_kind(candidate, other, lex):
            return False
    return True


def shuffled(items: list[str], rng: random.Random) -> list[str]:
    items = sorted(set(items))
    rng.shuffle(items)
    return items


# -- evidence ------------------------------------------------------------------------------------

def fact_object(scene: SceneIndex, oid: str) -> dict[str, Any]:
    return {"fact": "object", "id": oid, "name": scene.objects[oid].name}


def fact_only(names: frozenset[str], ids: list[str]) -> dict[str, Any]:
    return {"fact": "only", "names": sorted(names), "ids": sorted(ids)}


def fact_absent(names: frozenset[str]) -> dict[str, Any]:
    return {"fact": "absent", "names": sorted(names)}


def fact_relation(subject: str, rel: str, obj: str) -> dict[str, Any]:
    return {"fact": "relation", "subject": subject, "name": rel, "object": obj}


def fact_side(scene: SceneIndex, oid: str) -> dict[str, Any]:
    o = scene.objects[oid]
    return {"fact": "side", "id": oid, "x": o.x, "w": o.w, "image_width": scene.width,
            "center": o.centre_x, "side": scene.side(oid)}


def fact_color(oid: str, colors: list[str]) -> dict[str, Any]:
    return {"fact": "color", "id": oid, "colors": sorted(colors)}


def evidence(query: dict[str, Any], facts: list[dict[str, Any]], answer: str) -> dict[str, Any]:
    return {"version": EVIDENCE_VERSION, "query": query, "facts": facts, "answer": answer}


def change(kind: str, slot: str, old: str, new: str) -> dict[str, str]:
    return {"kind": kind, "slot": slot, "from": old, "to": new}


def single_id(g: Grounding | None) -> str:
    """The one object a definite phrase was grounded to, or a refusal saying why not."""
    if g is None or not g.ok:
        raise Refusal("not_grounded")
    if not g.ids:
        raise Refusal("not_grounded")
    if len(g.ids) > 1:
        raise Refusal("ambiguous")
    return g.ids[0]


def contradicted(attributes: tuple[str, ...], held: frozenset[str]) -> bool:
    """Does the object hold the opposite of an attribute the words give it ("the open door" that
    is also annotated closed)?"""
    opposites = attribute_opposites()
    return any(held & opposites.get(a, frozenset()) for a in attributes)


def referent(ctx: Context, slot: str) -> str:
    """The one object a reference kept in the perturbed question denotes, or a refusal.

    The rule: every reference a perturbed question keeps ("the car" in "Is the man to the right
    of the car?") must denote exactly one object of the graph under the words alone (its head's
    kind, synonyms, plural forms and hyponyms, and its attributes), and that object must be the
    one the program (or the annotations) names. Program ids do not make "the man" unique: a
    reader of the question cannot see them.
    """
    grounded = single_id(ctx.grounding.get(slot))
    np = ctx.nps[slot]
    ids = denoted_ids(np.head, ctx.scene, ctx.lex)
    if grounded not in ids:  # the words name another kind than the object the ids point at
        raise Refusal("program_mismatch" if ctx.reading is not None else "not_grounded")
    ids = [i for i in ids if all(a in ctx.scene.objects[i].attributes for a in np.attributes)]
    if grounded not in ids:  # the graph does not give the object the words' attributes
        raise Refusal("not_grounded")
    if contradicted(np.attributes, ctx.scene.objects[grounded].attributes):
        raise Refusal("inconsistent_graph")
    if len(ids) > 1:
        raise Refusal("ambiguous")
    return grounded


def rewrite(ctx: Context, slot: str, text: str, plural: bool, *, agree_verb: bool = True) -> str:
    """The question with `slot` replaced by `text` and its verb (is/are, has/have) agreeing."""
    start, end = ctx.span(slot)
    repl = [(start, end, text)]
    if agree_verb and "cop" in ctx.match.spans:
        cs, ce = ctx.span("cop")
        repl.append((cs, ce, agree(ctx.match.spans["cop"].text, plural)))
    return finish(replace_spans(ctx.match.question, repl))
