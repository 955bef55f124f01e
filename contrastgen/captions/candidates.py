"""The candidate pairs of one image: a true caption and a negative of one kind, with its proof.

The kinds are SugarCrepe's seven and ARO's two swaps:

| kind | positive | negative | why it is false |
|---|---|---|---|
| replace_obj | "a black dog (to the left of a car)" | "a black cat ..." | no object may be a cat |
| replace_att | "a black dog ..." | "a white dog ..." | every object that may be a dog lacks white |
| replace_rel | "a dog to the left of a car" | "a dog to the right of a car" | no pair stands so |
| swap_obj | "a dog to the left of a car" | "a car to the left of a dog" | no pair stands so |
| swap_att | "a white plate and a brown table" | "a brown plate and a white table" | no brown plate (or no white table) |
| add_obj | "a black dog and a car" | "a black dog and a cat" | no object may be a cat |
| add_att | "a dog to the left of a blue car" | "a dog to the left of a red car" | no car is red (or no pair) |
| aro_relation | "the dog is to the left of the car" | "the car is to the left of the dog" | the one car is not so |
| aro_attribute | "the white plate and the brown table" | "the brown plate and the white table" | the one plate is not brown |

Why each kind draws its positives from the words its negatives may use: a text-only classifier
learns any word that occurs on one side only. So the slot a kind changes holds, in the positive,
a word of the same class the negative may put there: a replaced noun is one whose absence the
graph could show, a replaced attribute a basic colour or one side of an opposite pair, a
replaced relation one with an opposite; substitute nouns are drawn by their frequency in the
corpus, as positives' nouns are. Which candidate becomes the image's pair is `balance`'s choice.

The add kinds have two forms. SugarCrepe's (`sugarcrepe`) adds to a true caption, the base, and
keeps the base as the positive ("a black dog" / "a black dog and a cat"); every word of the
positive is then in the negative too, so a classifier trained on such pairs learns that the
longer caption is false, whatever is added. The `matched` form keeps the negative (the base and
an addition the graph proves false) and makes the positive the same base with a *true* addition
in the same place and of the same class of word: another object of the image, called by a noun
whose absence could be proven ("and a car" / "and a cat"), or a provable attribute the object
has, the negative's being one of its alternatives ("blue car" / "red car"). The pair still asks
whether a model notices content that is not in the image, and the length no longer tells.

A negative is drawn only among the changes the graph can prove (an attribute every object the
noun may denote provably lacks, a relation the graph denies of every pair the phrases may denote,
ARO attribute pairs one of the two objects provably lacks), not drawn and then refused: the
balancing reads a kind's candidates one at a time and mostly takes the first, so what a kind
draws before its first candidate is most of what it costs. `_candidate` still proves each one.

A swap is tried only over a relation that cannot hold both ways, and is kept only where the graph
shows the swapped relation does not hold (so "near" is never swapped, and neither is a pair the
graph relates both ways).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, NamedTuple

from contrastgen.captions.caption import Caption, Phrase
from contrastgen.captions.domain import Domain
from contrastgen.captions.proofs import Proof, fitting_pairs, prove_false, prove_true
from contrastgen.captions.world import Thing, World

KINDS = ("replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att", "add_obj", "add_att",
         "aro_relation", "aro_attribute")
CHANGE_OF = {"replace_obj": "object", "replace_att": "attribute", "replace_rel": "relation",
             "swap_obj": "object", "swap_att": "attribute", "add_obj": "object", "add_att": "attribute",
             "aro_relation": "relation", "aro_attribute": "attribute"}
MATCHED, SUGARCREPE = "matched", "sugarcrepe"
ADD_FORMS = (MATCHED, SUGARCREPE)  # how add_obj and add_att pairs are formed (see the module's docstring)
ADD_KINDS = ("add_obj", "add_att")
TRIES = 8  # positives tried per kind and image
ALTERNATIVES = 4  # negatives tried per positive
_UNASKED = object()  # not yet asked of this image (None is an answer)

class Candidate(NamedTuple):
    """A pair with its proofs (a named tuple: an image makes some twenty)."""

    kind: str
    positive: Caption
    witnesses: tuple[str, ...]  # the object each phrase of the positive was written from
    negative: Caption
    change: dict[str, Any]
    proof: Proof
    positive_facts: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class NounPool:
    """Nouns a negative may add or put in a noun's place, drawn by their frequency in the corpus."""

    nouns: tuple[str, ...]
    cum_weights: tuple[float, ...]

    def draw(self, rng: random.Random, k: int) -> list[str]:
        if not self.nouns:
            return []
        return list(dict.fromkeys(rng.choices(self.nouns, cum_weights=self.cum_weights, k=k)))


class ImageCandidates:
    """Every kind's candidate pairs for one image, each kind drawn with a generator of its own
    seeded from the image's (so the same image and seed give the same candidates)."""

    def __init__(self, world: World, domain: Domain, pool: NounPool, rng: random.Random, *,
                 add_form: str = MATCHED):
        self.world, self.domain, self.pool = world, domain, pool
        self.add_form = add_form
        # a generator per kind: how many candidates of a kind are drawn (the balancing stops at
        # the first that keeps it even; the add kinds' form changes how much they draw) then
        # leaves every other kind's draws as they are
        self._seeds = {kind: rng.getrandbits(64) for kind in KINDS}
        self.things = {t.id: t for t in world.things}
        self._true: dict[tuple[Caption, tuple[str, ...]], tuple[dict[str, Any], ...] | None] = {}
        self._said: dict[str, list[str]] = {}  # thing id -> what a caption may say of it
        self._provable: dict[str, list[str]] = {}  # thing id -> what a negative could say in its place
        self._edge_lists: dict[str, list[tuple[str, str, str]]] = {}
        self._between: dict[tuple[str, str], list[str]] | None = None
        self._decided: dict[tuple[str, str], frozenset[str]] = {}  # `_decided_between`, once asked
        self._partners_of: dict[str, list[Thing]] = {}
        self._denoted: dict[str, frozenset[str] | None] = {}  # thing id -> what its noun may denote
        self._absences: dict[tuple[str, str], bool] = {}  # (noun, attribute) -> provably on nothing the noun may denote
        self._telling: bool | None = None  # `_phrases_can_tell_apart`, once asked

    def of_kind(self, kind: str, limit: int) -> list[Candidate]:
        return list(islice(self.drawn(kind), limit))

    def drawn(self, kind: str) -> Iterator[Candidate]:
        """The kind's candidates as they are drawn, each pair once; drawn lazily, so that a caller
        who needs fewer pays for fewer."""
        if not self.possible(kind):
            return
        rng = random.Random(self._seeds[kind])
        make: Callable[[random.Random], Iterator[Candidate]] = getattr(self, "_" + kind)
        seen: set[tuple[Caption, Caption]] = set()
        for cand in make(rng):
            key = (cand.positive, cand.negative)
            if key not in seen:
                seen.add(key)
                yield cand

    def possible(self, kind: str) -> bool:
        """Could the kind have any candidate in this image? False only where no draw of its
        generator could make one: such a kind would otherwise spend every try finding nothing.

        What this catches is an object whose name says nothing certain (`World.may_be_anything`):
        every listable noun may denote it, so no noun is absent (replace_obj and add_obj need
        one), and where it provably lacks none of the attributes the image's phrases may say, a
        phrase may denote it whatever attribute it says, so no pair of phrases denotes disjoint
        objects (a `no_pair` proof, all replace_rel and swap_obj have) and no swapped phrase is
        empty (swap_att). The kinds whose tries cost little when they find nothing are not asked.
        Each kind's generator is seeded apart, so skipping one changes no other kind's draws."""
        anything = self.world.may_be_anything()
        if not anything:
            return True
        if kind in ("replace_obj", "add_obj"):
            return False
        if kind in ("replace_rel", "swap_obj", "swap_att"):
            return self._phrases_can_tell_apart(anything)
        return True

    def _phrases_can_tell_apart(self, anything: frozenset[str]) -> bool:
        """Does each object of `anything` provably lack some attribute a phrase may say? Else a
        phrase may denote it whatever it says."""
        found = self._telling
        if found is None:
            said = {a for t in self.world.things for a in self._attributes(t)}
            excluded = self.world.excluded
            found = self._telling = all(any(excluded(oid, a) is not None for a in said) for oid in anything)
        return found

    # -- positives ---------------------------------------------------------------------------

    def _contradicted(self, s: str, r: str, o: str) -> bool:
        """Does the graph also say the edge does not hold (its opposite, or its converse for a
        relation that cannot hold both ways)? Then it is no positive."""
        w, d = self.world, self.domain
        opposite = d.opposite(r) if d.name == "gqa" else None
        return (opposite is not None and w.holds(s, opposite, o)) or (d.antisymmetric(r) and w.holds(o, r, s))

    def _attributes(self, thing: Thing, *, provable: bool = False) -> list[str]:
        """The attributes a caption may say of the thing (the world leaves out what the graph
        contradicts); with `provable`, only those a negative could say in its place."""
        said = self._provable if provable else self._said
        found = said.get(thing.id)
        if found is None:
            found = said[thing.id] = self.world.before(
                thing.noun, self.domain.attributes_of(thing.noun, thing.attributes, provable))
        return found

    def _phrase(self, thing: Thing, rng: random.Random, *, attribute: str | None = None,
                chance: float = 0.5) -> Phrase:
        """The thing's noun, with `attribute`, or with one of its attributes at random half the time."""
        if attribute is None:
            options = self._attributes(thing)
            attribute = rng.choice(options) if options and rng.random() < chance else ""
        return Phrase(thing.noun, attribute)

    def _decidable(self, noun: str) -> bool:
        return self.world.may_be(noun) is not None

    def _edges_of(self, relations: str) -> list[tuple[str, str, str]]:
        """The graph's edges of a class of relations: `any`, `replaceable` (those replace_rel
        says), `antisymmetric` (those a swap may be proven false of); listed once per image."""
        found = self._edge_lists.get(relations)
        if found is None and relations == "any":
            found = self._edge_lists[relations] = list(self.world.edges)
        elif found is None:
            d = self.domain
            keep: Callable[[str], bool] = {
                "replaceable": set(d.replace_relations).__contains__,
                "antisymmetric": d.antisymmetric}[relations]
            found = self._edge_lists[relations] = [e for e in self.world.edges if keep(e[1])]
        return found

    def _edges(self, rng: random.Random, relations: str) -> list[tuple[str, str, str]]:
        """Up to TRIES edges of the relations asked for, at random, none the graph contradicts."""
        edges = self._edges_of(relations)
        picked = rng.sample(edges, min(TRIES, len(edges)))
        return [e for e in picked if not self._contradicted(*e)]

    def _relation_positive(self, rng: random.Random, relations: str, chance: float = 0.5,
                           hopeful: Callable[[tuple[str, str, str]], bool] | None = None,
                           ) -> Iterator[tuple[Caption, tuple[str, str]]]:
        """Positives over up to `TRIES` edges. With `hopeful` (may a candidate come of a positive
        over this edge, whatever its phrases say? False only where none can), the edges after the
        last hopeful one are not tried: their phrases' draws would make positives the kind then
        refuses, and the kind's generator draws nothing else after them (a kind's draws are its
        own). The edges before it still draw their phrases, so every positive comes out as before."""
        edges = self._edges(rng, relations)
        if hopeful is not None:
            while edges and not hopeful(edges[-1]):
                edges.pop()
        for s, r, o in edges:
            phrases = (self._phrase(self.things[s], rng, chance=chance), self._phrase(self.things[o], rng, chance=chance))
            yield Caption("relation", phrases, r), (s, o)

    def _pair_positive(self, rng: random.Random, chance: float = 0.5) -> Iterator[tuple[Caption, tuple[str, str]]]:
        for a, b in self._distinct_pairs(list(self.things.values()), rng):
            yield Caption("pair", (self._phrase(a, rng, chance=chance), self._phrase(b, rng, chance=chance))), (a.id, b.id)

    def _distinct_pairs(self, things: list[Thing], rng: random.Random) -> Iterator[tuple[Thing, Thing]]:
        """`TRIES` draws of two of the things, each kept where a pair may name both (`_distinct`);
        lazy, so a caller's own draws between two pairs come in the order they always did."""
        if len(things) < 2:
            return
        for _ in range(TRIES):
            a, b = rng.sample(things, 2)
            if self._distinct(a, b):
                yield a, b

    def _distinct(self, a: Thing, b: Thing) -> bool:
        """Two things a pair may name together: of different kinds, neither noun able to denote
        the other's object."""
        if a.kind == b.kind:
            return False
        denoted = self._denoted
        for x, y in ((a, b), (b, a)):
            members = denoted.get(x.id, _UNASKED)
            if members is _UNASKED:
                found = self.world.may_be(x.noun)
                members = denoted[x.id] = None if found is None else frozenset(found)
            if members is None or y.id in members:
                return False
        return True

    def _object_positive(self, rng: random.Random, chance: float = 1.0) -> Iterator[tuple[Caption, tuple[str]]]:
        things = list(self.things.values())
        for t in rng.sample(things, min(TRIES, len(things))):
            yield Caption("object", (self._phrase(t, rng, chance=chance),)), (t.id,)

    def _mixed_positive(self, rng: random.Random) -> Iterator[tuple[Caption, tuple[str, ...]]]:
        """Positives of every indefinite shape, interleaved."""
        sources: list[Iterator[tuple[Caption, tuple[str, ...]]]] = [
            self._object_positive(rng), self._relation_positive(rng, "any"), self._pair_positive(rng)]
        while sources:
            for source in list(sources):
                item = next(source, None)
                if item is None:
                    sources.remove(source)
                else:
                    yield item

    # -- candidates --------------------------------------------------------------------------

    def _candidate(self, kind: str, positive: Caption, witnesses: tuple[str, ...], negative: Caption,
                   change: dict[str, Any]) -> Candidate | None:
        compound = self.world.compound
        for p in negative.phrases:
            if p.attribute and compound(p.attribute, p.noun):
                return None  # "a glass window" reads as one noun
        if any(p.attribute and p.noun.split(" ", 1)[0] == p.attribute for c in (positive, negative) for p in c.phrases):
            return None  # "a glass glass", "an orange orange": the word said twice
        # the negative first: most refusals are negatives the graph cannot prove false, and its
        # proof's phrases are remembered per image, while the positive's proof would be wasted
        proof = prove_false(negative, self.world)
        if proof is None:
            return None
        key = (positive, witnesses)
        facts = self._true.get(key, _UNASKED)
        if facts is _UNASKED:
            found = prove_true(positive, self.world, witnesses)
            facts = self._true[key] = None if found is None else tuple(found)
        if facts is None:
            return None
        return Candidate(kind, positive, witnesses, negative, {"kind": CHANGE_OF[kind], **change}, proof, facts)

    def _replace_obj(self, rng: random.Random) -> Iterator[Candidate]:
        for positive, witnesses in self._mixed_positive(rng):
            i = rng.randrange(len(positive.phrases))
            phrase = positive.phrases[i]
            if not self._decidable(phrase.noun):
                continue
            for noun in self.pool.draw(rng, ALTERNATIVES * 2)[:ALTERNATIVES]:
                if noun == phrase.noun or self.world.may_be(noun) != () or (
                        phrase.attribute and not self.domain.allows(noun, phrase.attribute)):
                    continue
                other = positive.phrases[1 - i].noun if len(positive.phrases) == 2 else None
                if other is not None and self.domain.kind_of(other) == self.domain.kind_of(noun):
                    continue
                cand = self._candidate("replace_obj", positive, witnesses, positive.with_phrase(i, phrase.with_noun(noun)),
                                       {"phrase": i, "from": phrase.noun, "to": noun})
                if cand is not None:
                    yield cand

    def _attribute_positives(self, rng: random.Random) -> Iterator[tuple[Caption, tuple[str, ...], int]]:
        """Positives whose phrase `i` says a provable attribute of a noun whose objects are known."""
        for positive, witnesses in self._mixed_positive(rng):
            i = rng.randrange(len(positive.phrases))
            thing = self.things[witnesses[i]]
            options = self._attributes(thing, provable=True)
            if not options or not self._decidable(thing.noun):
                continue
            phrase = positive.phrases[i].with_attribute(rng.choice(options))
            yield positive.with_phrase(i, phrase), witnesses, i

    def _replace_att(self, rng: random.Random) -> Iterator[Candidate]:
        for positive, witnesses, i in self._attribute_positives(rng):
            phrase = positive.phrases[i]
            options = [a for a in self.domain.allowed_alternatives(phrase.noun, phrase.attribute)
                       if self._absent(phrase.noun, a)]
            for attribute in rng.sample(options, min(ALTERNATIVES, len(options))):
                cand = self._candidate("replace_att", positive, witnesses,
                                       positive.with_phrase(i, phrase.with_attribute(attribute)),
                                       {"phrase": i, "from": phrase.attribute, "to": attribute})
                if cand is not None:
                    yield cand

    def _replace_rel(self, rng: random.Random) -> Iterator[Candidate]:
        allowed = set(self.domain.replace_relations)

        def replaceable(edge: tuple[str, str, str]) -> bool:
            """The relations a replacement may draw from (what the edge alone decides)."""
            return bool(self._decided_between(edge[0], edge[2]) & allowed - {edge[1]})

        for positive, witnesses in self._relation_positive(rng, "replaceable", hopeful=replaceable):
            options = sorted(self._decided_between(*witnesses) & allowed - {positive.relation})
            options = self._provable_relations(positive, options)
            for relation in rng.sample(options, min(ALTERNATIVES, len(options))):
                negative = Caption("relation", positive.phrases, relation)
                cand = self._candidate("replace_rel", positive, witnesses, negative,
                                       {"from": positive.relation, "to": relation})
                if cand is not None:
                    yield cand

    def _provable_relations(self, positive: Caption, relations: list[str]) -> list[str]:
        """The relations the graph shows hold between no pair of objects the positive's two phrases
        may denote (what `proofs.prove_false` asks of a replaced relation): only these are drawn,
        so that a positive whose phrases fit several objects offers no replacement to refuse."""
        if not relations:
            return relations
        found = fitting_pairs(positive.phrases, self.world)
        if found is None:
            return []
        pairs = found[0]
        relation_false = self.world.relation_false
        return [r for r in relations if all(relation_false(s, r, o) is not None for s, o in pairs)]

    def _decided_between(self, s: str, o: str) -> frozenset[str]:
        """The relations the graph shows do not hold from `s` to `o` (the opposites of its edges
        from s to o, and the antisymmetric relations of its edges from o to s): the only ones a
        replacement could be proven false with. Remembered per pair: replace_rel asks it of an edge
        when it decides where to stop trying, and again of the positive over it."""
        found = self._decided.get((s, o))
        if found is not None:
            return found
        if self._between is None:
            self._between = {}
            for a, r, b in self._edges_of("any"):
                self._between.setdefault((a, b), []).append(r)
        out = {self.domain.opposite(r) for r in self._between.get((s, o), ())} - {None}
        out |= {r for r in self._between.get((o, s), ()) if self.domain.antisymmetric(r)}
        found = self._decided[s, o] = frozenset(out)  # type: ignore[arg-type]
        return found

    def _swap_obj(self, rng: random.Random) -> Iterator[Candidate]:
        for positive, witnesses in self._relation_positive(rng, "antisymmetric", hopeful=self._swappable):
            a, b = positive.phrases
            if self.domain.kind_of(a.noun) == self.domain.kind_of(b.noun):
                continue  # "a man near a man": the swap says the same
            cand = self._candidate("swap_obj", positive, witnesses, positive.swapped(),
                                   {"from": [a.noun, b.noun], "to": [b.noun, a.noun]})
            if cand is not None:
                yield cand

    def _swappable(self, edge: tuple[str, str, str]) -> bool:
        """May a swap_obj candidate come of a positive over the edge, whatever attributes its phrases
        say? Not where the two objects are of one kind (the swap says the same) or a phrase's noun
        cannot have its objects listed (the swapped caption then has no proof: `proofs`). That
        holds because a positive's phrase is said of its own object, which a listable noun lists
        (`World.may_be`), so no such phrase denotes nothing; a test holds both worlds to it."""
        a, b = self.things[edge[0]], self.things[edge[2]]
        kind_of = self.domain.kind_of
        return kind_of(a.noun) != kind_of(b.noun) and self._decidable(a.noun) and self._decidable(b.noun)

    def _two_attributes(self, positive: Caption, witnesses: tuple[str, ...], rng: random.Random) -> Caption | None:
        """The positive with an attribute on both phrases, two different ones, or None."""
        phrases = []
        for phrase, oid in zip(positive.phrases, witnesses, strict=True):
            options = self._attributes(self.things[oid])
            if not options:
                return None
            phrases.append(phrase.with_attribute(rng.choice(options)))
        if phrases[0].attribute == phrases[1].attribute:
            return None
        return Caption(positive.shape, tuple(phrases), positive.relation)

    def _swap_att(self, rng: random.Random) -> Iterator[Candidate]:
        sources = [self._pair_positive(rng), self._relation_positive(rng, "any")]
        for source in sources:
            for positive, witnesses in source:
                positive = self._two_attributes(positive, witnesses, rng)
                if positive is None:
                    continue
                a, b = positive.phrases
                if not all(self.domain.allows(p.noun, q.attribute) for p, q in ((a, b), (b, a))):
                    continue
                if not (self._absent(a.noun, b.attribute) or self._absent(b.noun, a.attribute)):
                    continue  # neither swapped phrase can be shown empty
                cand = self._candidate("swap_att", positive, witnesses, positive.attributes_swapped(),
                                       {"from": [a.attribute, b.attribute], "to": [b.attribute, a.attribute]})
                if cand is not None:
                    yield cand

    def _add_obj(self, rng: random.Random) -> Iterator[Candidate]:
        for base, witnesses in self._object_positive(rng, chance=0.5):
            present = base.phrases[0]
            partners = self._partners(self.things[witnesses[0]]) if self.add_form == MATCHED else []
            if self.add_form == MATCHED and not partners:
                continue
            for noun in self.pool.draw(rng, ALTERNATIVES * 2)[:ALTERNATIVES]:
                if self.world.may_be(noun) != () or self.domain.kind_of(noun) == self.domain.kind_of(present.noun):
                    continue
                negative = Caption("pair", (present, Phrase(noun)))
                change: dict[str, Any] = {"phrase": 1, "to": noun}
                positive = base
                if partners:
                    partner = rng.choice(partners)
                    positive, witnesses = Caption("pair", (present, Phrase(partner.noun))), (witnesses[0], partner.id)
                    change["true"] = partner.noun
                cand = self._candidate("add_obj", positive, witnesses, negative, change)
                if cand is not None:
                    yield cand

    def _partners(self, thing: Thing) -> list[Thing]:
        """The objects a matched add_obj caption may add to `thing`'s phrase: ones a pair may name
        with it, called by a noun whose absence the graph could show elsewhere (the class of noun
        a negative adds, so that no noun is one a text-only model could learn is always true)."""
        found = self._partners_of.get(thing.id)
        if found is None:
            found = self._partners_of[thing.id] = [
                t for t in self.things.values() if t.id != thing.id and self._decidable(t.noun) and self._distinct(thing, t)]
        return found

    def _add_att(self, rng: random.Random) -> Iterator[Candidate]:
        sources = [self._relation_positive(rng, "any", chance=0.3), self._pair_positive(rng, chance=0.3)]
        for source in sources:
            for base, witnesses in source:
                bare = [i for i, p in enumerate(base.phrases) if not p.attribute and self._decidable(p.noun)]
                if not bare:
                    continue
                i = rng.choice(bare)
                phrase = base.phrases[i]
                for true, attribute in self._added_attributes(witnesses[i], phrase.noun, rng):
                    positive = base if true is None else base.with_phrase(i, phrase.with_attribute(true))
                    change: dict[str, Any] = {"phrase": i, "to": attribute}
                    if true is not None:
                        change["true"] = true
                    cand = self._candidate("add_att", positive, witnesses,
                                           base.with_phrase(i, phrase.with_attribute(attribute)), change)
                    if cand is not None:
                        yield cand

    def _added_attributes(self, oid: str, noun: str, rng: random.Random) -> list[tuple[str | None, str]]:
        """Up to ALTERNATIVES (the true attribute the caption adds, the one its negative adds):
        in the matched form a provable attribute the object has and one of its alternatives ("red"
        and "blue"; the same class of word in the same place), in SugarCrepe's form (None, an
        alternative of any provable attribute it has)."""
        if self.add_form == MATCHED:
            options = [(a, b) for a in self._attributes(self.things[oid], provable=True)
                       for b in self.domain.allowed_alternatives(noun, a) if self._absent(noun, b)]
        else:
            options = [(None, b) for b in self._added_options(oid) if self.domain.allows(noun, b) and self._absent(noun, b)]
        return rng.sample(options, min(ALTERNATIVES, len(options)))

    def _added_options(self, oid: str) -> list[str]:
        """Attributes a negative may add to a phrase: the alternatives of the provable attributes
        its object has (so a colour where it has one colour, an opposite where it has one side)."""
        out: dict[str, None] = {}
        for a in self._attributes(self.things[oid], provable=True):
            out.update(dict.fromkeys(self.domain.alternatives(a)))
        return list(out)

    def _absent(self, noun: str, attribute: str) -> bool:
        """Does the graph show that nothing the noun may denote has the attribute (what a
        negative's phrase needs to be proven empty)? The replacements and additions of an
        attribute are drawn only among these, so that a noun with an object of no listed colour
        offers no colour to refuse; remembered per image, as the kinds ask of the same nouns."""
        key = (noun, attribute)
        found = self._absences.get(key)
        if found is None:
            members = self.world.may_be(noun)
            excluded = self.world.excluded
            found = self._absences[key] = members is not None and all(
                excluded(oid, attribute) is not None for oid in members)
        return found

    def _unique(self, thing: Thing) -> bool:
        return self.world.may_be(thing.noun) == (thing.id,)

    def _aro_relation(self, rng: random.Random) -> Iterator[Candidate]:
        unique = {t.id for t in self.things.values() if self._unique(t)}
        edges = [e for e in self._edges_of("antisymmetric") if e[0] in unique and e[2] in unique]
        for s, r, o in rng.sample(edges, min(TRIES, len(edges))):
            if self._contradicted(s, r, o):
                continue
            a, b = self.things[s], self.things[o]
            positive = Caption("relation", (Phrase(a.noun, definite=True), Phrase(b.noun, definite=True)), r)
            cand = self._candidate("aro_relation", positive, (s, o), positive.swapped(),
                                   {"from": [a.noun, b.noun], "to": [b.noun, a.noun]})
            if cand is not None:
                yield cand

    def _aro_attribute(self, rng: random.Random) -> Iterator[Candidate]:
        unique = [t for t in self.things.values() if self._unique(t) and self._attributes(t)]
        for a, b in self._distinct_pairs(unique, rng):
            # only the attribute pairs whose swap the graph shows false of one of the two objects
            # (each is the one object its noun may denote)
            options = [(x, y) for x in self._attributes(a) for y in self._attributes(b)
                       if x != y and self.domain.allows(a.noun, y) and self.domain.allows(b.noun, x)
                       and (self._absent(a.noun, y) or self._absent(b.noun, x))]
            if not options:
                continue
            pa, pb = rng.choice(options)
            positive = Caption("pair", (Phrase(a.noun, pa, definite=True), Phrase(b.noun, pb, definite=True)))
            cand = self._candidate("aro_attribute", positive, (a.id, b.id), positive.attributes_swapped(),
                                   {"from": [pa, pb], "to": [pb, pa]})
            if cand is not None:
                yield cand
