"""Why a caption is true, and why a negative is false, in facts a reader can check on the graph.

A caption with indefinite phrases ("a white dog to the left of a car") says that some objects
fit it. It is true on its witnesses: the objects it was written from, with the attribute and the
edge the graph lists. It is false only if nothing could fit it, which is shown one of two ways:
- `empty_phrase`: every object a phrase's noun may denote (`World.may_be`, the whole list stated
  as a `may_be` fact) provably lacks the phrase's attribute, or there is none ("a white dog": each
  dog, animal or thing in the picture is listed with another colour);
- `no_pair`: for a relation, every pair of objects the two phrases may denote provably stands in
  no such relation (the opposite edge, or the converse of a relation that cannot hold both ways).
A caption with definite phrases (ARO's "the dog is to the left of the car") presupposes that each
noun denotes exactly one object (`referents`: each `may_be` is one object); it is false when its
claim fails of those two objects.

A phrase whose noun has no `may_be` (unannotated-prone, too vague) proves nothing, and no proof
quantifies over an object that two phrases may both denote.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from contrastgen.captions.caption import Caption, Phrase
from contrastgen.captions.world import Fact, World

MAX_PAIRS = 16  # a `no_pair` proof over more pairs than this is not attempted: its record would be long


@dataclass(frozen=True)
class Proof:
    """How a negative is false (`empty_phrase`, `no_pair`, `referents`) and the facts it rests on."""

    kind: str
    facts: list[Fact]


def may_be_fact(noun: str, ids: tuple[str, ...]) -> Fact:
    return {"fact": "may_be", "noun": noun, "ids": list(ids)}


def prove_true(caption: Caption, world: World, witnesses: tuple[str, ...]) -> list[Fact] | None:
    """The facts that make `caption` true of `witnesses` (one object per phrase), or None."""
    facts: list[Fact] = []
    for phrase, oid in zip(caption.phrases, witnesses, strict=True):
        thing = world.thing(oid)
        if thing is None or (phrase.attribute and phrase.attribute not in thing.attributes):
            return None
        facts.append({"fact": "object", "id": oid, "name": world.graph_name(oid),
                      "attributes": [phrase.attribute] if phrase.attribute else []})
        if phrase.definite:
            if world.may_be(phrase.noun) != (oid,):
                return None
            facts.append(may_be_fact(phrase.noun, (oid,)))
    if caption.shape == "relation":
        subject, obj = witnesses
        if not world.holds(subject, caption.relation, obj):
            return None
        facts.append({"fact": "relation", "subject": subject, "name": caption.relation, "object": obj})
    if caption.definite:
        facts.extend(world.closure_facts())
    return facts


def prove_false(caption: Caption, world: World) -> Proof | None:
    if caption.definite:
        return _referents(caption, world)
    for phrase in caption.phrases:
        proof = _empty_phrase(phrase, world)
        if proof is not None:
            return proof
    if caption.shape == "relation":
        return _no_pair(caption, world)
    return None


def _fitting(phrase: Phrase, world: World) -> tuple[tuple[str, ...], list[Fact]] | None:
    """(the objects that may fit the phrase, the facts that rule out the others), or None when
    the noun's objects cannot be listed; remembered per world, as candidates repeat phrases."""
    key = ("fitting", phrase.noun, phrase.attribute)
    if key not in world.memo:
        world.memo[key] = _find_fitting(phrase, world)
    return world.memo[key]


def _find_fitting(phrase: Phrase, world: World) -> tuple[tuple[str, ...], list[Fact]] | None:
    members = world.may_be(phrase.noun)
    if members is None:
        return None
    facts: list[Fact] = [may_be_fact(phrase.noun, members)]
    fitting = []
    for oid in members:
        reason = world.excluded(oid, phrase.attribute) if phrase.attribute else None
        if reason is None:
            fitting.append(oid)
        else:
            facts.append(reason)
    return tuple(fitting), facts


def _empty_phrase(phrase: Phrase, world: World) -> Proof | None:
    found = _fitting(phrase, world)
    if found is None or found[0]:
        return None
    return Proof("empty_phrase", [*found[1], *world.closure_facts()])


def fitting_pairs(phrases: tuple[Phrase, ...], world: World) -> tuple[list[tuple[str, str]], list[Fact]] | None:
    """(every pair of objects two phrases may denote, the facts that rule out the others): the
    pairs a `no_pair` proof must show unrelated. None where it cannot be tried (a noun whose
    objects cannot be listed, an object both may denote, more than MAX_PAIRS pairs)."""
    first, second = (_fitting(p, world) for p in phrases)
    if first is None or second is None:
        return None
    subjects, objects = first[0], second[0]
    if set(subjects) & set(objects) or len(subjects) * len(objects) > MAX_PAIRS:
        return None
    return list(product(subjects, objects)), first[1] + second[1]


def _no_pair(caption: Caption, world: World) -> Proof | None:
    found = fitting_pairs(caption.phrases, world)
    if found is None:
        return None
    pairs, facts = found
    for s, o in pairs:
        reason = world.relation_false(s, caption.relation, o)
        if reason is None:
            return None
        facts.append(reason)
    return Proof("no_pair", facts + world.closure_facts())


def _referents(caption: Caption, world: World) -> Proof | None:
    referents = []
    facts: list[Fact] = []
    for phrase in caption.phrases:
        members = world.may_be(phrase.noun)
        if members is None or len(members) != 1:
            return None
        referents.append(members[0])
        facts.append(may_be_fact(phrase.noun, members))
    if len(set(referents)) != len(referents):
        return None
    if caption.shape == "relation":
        reason = world.relation_false(referents[0], caption.relation, referents[1])
        if reason is None:
            return None
        return Proof("referents", facts + [reason] + world.closure_facts())
    for phrase, oid in zip(caption.phrases, referents, strict=True):
        reason = world.excluded(oid, phrase.attribute) if phrase.attribute else None
        if reason is not None:
            return Proof("referents", facts + [reason] + world.closure_facts())
    return None
