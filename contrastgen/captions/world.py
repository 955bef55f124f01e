"""One image as a caption's proofs see it: which objects a noun may denote, which attributes an
object provably lacks, which relations provably do not hold.

Why two worlds: a GQA scene graph is open (annotators leave objects out, list a few attributes),
so a claim that no object is a cat rests on the lexicon (every kind "cat" may denote, no
unannotated-prone kind) and an object lacks an attribute only where the graph lists its opposite
or its one colour. A CLEVR scene lists every object with exactly one shape, size, colour and
material (a closed world), so the scene's object count proves absence and every object lacks the
values of its type it does not have. The proofs (`contrastgen.captions.proofs`) ask the same
questions of both.

What a noun may denote (`may_be`) errs wide, because a negative's proof quantifies over it: the
objects of every kind the word may denote (`Lexicon.may_denote`: hyponyms, other senses, people
nouns that cross-classify), of the kinds it is a kind of (`Lexicon.broader`: an object listed as
"animal" may be the dog), and of vague or unknown names ("thing"), which may be anything. An
object's name is read every way it may be (`Lexicon.readings`: "glasses" may be spectacles or
drinking glasses). A noun whose objects the graph cannot list (unannotated-prone, too vague) has
no `may_be` at all.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from contrastgen.captions.vocabulary import CaptionVocabulary, sayable_relation
from contrastgen.datasets.clevr_vocab import ATTRIBUTE_TYPES, Vocabulary
from contrastgen.language.lexicon import Lexicon

Fact = dict[str, Any]
MAX_REMEMBERED = 1 << 16  # spellings of relations `GraphNames` keeps for a run
_UNASKED = object()  # a noun `GqaWorld.may_be` has not yet answered for (None is an answer)
_KNOWN_COMPOUNDS: dict[str, bool] = {}  # "glass window" -> is it a noun of the lexicon (one lexicon per process)


@dataclass(frozen=True)
class GraphName:
    """What the lexicon says of one object name of a graph, as `GqaWorld` needs it."""

    readings: frozenset[str]  # every kind an object so named may be
    decidable: bool  # False: the name says nothing certain, the object may be anything
    kind: str | None  # the kind a caption calls it by; None where a caption cannot say the name
    noun: str  # the word a caption says for it


class GraphNames:
    """The lexicon's answers about graph names and attribute lists, remembered for a run.

    Why: a corpus says the same few thousand names and attribute lists over and over (75,000
    graphs of ~16 objects each), and each answer costs several lexicon look-ups. One of these
    lives on the domain, so every image of a run shares it; the answers depend only on the
    lexicon and the caption vocabulary, which a run does not change."""

    def __init__(self, lex: Lexicon, vocab: CaptionVocabulary):
        self.lex, self.vocab = lex, vocab
        self._names: dict[str, GraphName] = {}
        self._sayable: dict[frozenset[str], tuple[str, ...]] = {}
        self.relations: dict[str, str] = {}  # a relation as a graph writes it -> as a caption says it
        self.written_names: dict[str, str] = {}  # an object name as a graph writes it -> in lower case, single spaces
        self.attribute_lists: dict[tuple[str, ...], frozenset[str]] = {}  # a list as written -> its attributes, said so
        self._listable: dict[str, bool] = {}
        self._relation_rules: dict[str, tuple[str | None, bool]] = {}
        self._not_compound: dict[tuple[str, str], str | None] = {}  # (noun, attribute) -> "ATTRIBUTE NOUN", or None
        self._sayable_relations: dict[str, bool] = {}

    def sayable_relation(self, relation: str) -> bool:
        """`vocabulary.sayable_relation`, remembered for the first `MAX_REMEMBERED` relations:
        every edge of every image asks it of one of a few hundred."""
        found = self._sayable_relations.get(relation)
        if found is None:
            found = sayable_relation(relation)
            if len(self._sayable_relations) < MAX_REMEMBERED:
                self._sayable_relations[relation] = found
        return found

    def relation(self, written: str) -> str:
        """The relation in lower case with single spaces ("to the left of"); remembered for the
        first `MAX_REMEMBERED` spellings (a corpus has a few hundred; a hostile one any number)."""
        said = " ".join(written.lower().split())
        if len(self.relations) < MAX_REMEMBERED:
            self.relations[written] = said
        return said

    def written_name(self, written: str) -> str:
        """An object's name in lower case with single spaces; remembered as `relation` is."""
        said = " ".join(written.lower().split())
        if len(self.written_names) < MAX_REMEMBERED:
            self.written_names[written] = said
        return said

    def attribute_list(self, written: tuple[str, ...]) -> frozenset[str]:
        """An object's attributes in lower case with single spaces; remembered as `relation` is
        (a corpus lists a few thousand combinations)."""
        said = frozenset(" ".join(a.lower().split()) for a in written)
        if len(self.attribute_lists) < MAX_REMEMBERED:
            self.attribute_lists[written] = said
        return said

    def name(self, name: str) -> GraphName:
        found = self._names.get(name)
        if found is None:
            lex = self.lex
            decidable = lex.absence_decidable(name)
            # "a someone": a noun that takes no article cannot be a phrase's noun
            sayable = name.replace(" ", "").isalpha() and name not in self.vocab.determinerless
            kind = lex.canonical(name) if decidable and sayable else None
            # a vocabulary's wrong lemma of a plural-only noun ("stair", "pant") is said as the
            # noun itself: "brown stair" takes neither an article nor a plural verb
            noun = lex.singular(name) if lex.is_plural_only(name) else name
            found = self._names[name] = GraphName(lex.readings(name), decidable, kind, noun)
        return found

    def listable(self, noun: str) -> bool:
        """Can the graph list the objects the noun may denote: a noun the lexicon knows, neither
        too vague nor of objects graphs often leave out? (What `GqaWorld.may_be` asks of every
        noun a negative draws, in every image.)"""
        found = self._listable.get(noun)
        if found is None:
            lex = self.lex
            found = self._listable[noun] = lex.absence_decidable(noun) and not lex.is_unannotated_prone(noun)
        return found

    def relation_rules(self, relation: str) -> tuple[str | None, bool]:
        """(the relation's opposite, whether it cannot hold both ways): what a proof that it does
        not hold between two objects may rest on."""
        found = self._relation_rules.get(relation)
        if found is None:
            opposite = self.lex.opposite_relation(relation)
            found = self._relation_rules[relation] = (opposite, opposite is not None or relation in self.vocab.asymmetric)
        return found

    def not_compound(self, noun: str, attributes: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """(attribute, "ATTRIBUTE NOUN") of each attribute the lexicon does not read as one noun
        with `noun` (`GqaWorld.compound`'s part that holds in every image). Remembered per noun
        and attribute (None where it is a compound), as `GqaDomain.attributes_of` is: the lists
        recur far less than the pairs."""
        words_of = self._not_compound
        out = []
        for a in attributes:
            words = words_of.get((noun, a), _UNASKED)
            if words is _UNASKED:
                words = f"{a} {noun}"
                if _known_compound(self.lex, words):
                    words = None
                words_of[noun, a] = words  # pairs of the vocabulary's nouns and sayable attributes
            if words is not None:
                out.append((a, words))
        return tuple(out)

    def sayable(self, attributes: frozenset[str]) -> tuple[str, ...]:
        """The attributes a caption may say of an object: sayable words the graph does not
        contradict (an object listed both "open" and "closed" is said to be neither)."""
        found = self._sayable.get(attributes)
        if found is None:
            opposites = self.vocab.opposites
            found = self._sayable[attributes] = tuple(sorted(
                a for a in attributes if self.vocab.sayable(a) and not attributes & opposites.get(a, frozenset())))
        return found


def _known_compound(lex: Lexicon, words: str) -> bool:
    """Is "ATTRIBUTE NOUN" a noun of the lexicon ("glass window")? Remembered for the process."""
    known = _KNOWN_COMPOUNDS.get(words)
    if known is None:
        known = _KNOWN_COMPOUNDS[words] = lex.is_known(words)
    return known


class Thing(NamedTuple):
    """An object a caption may name: its id, the noun a caption calls it by, its kind (what the
    plausibility counts are kept under) and the attributes a caption may say of it. A named
    tuple: every object of every image is one."""

    id: str
    noun: str
    kind: str
    attributes: tuple[str, ...]
    box: tuple[float, float, float, float]


class World(Protocol):
    dataset: str
    width: float
    height: float
    things: list[Thing]  # the objects a caption may name, in the graph's order
    edges: list[tuple[str, str, str]]  # (subject, relation, object) a caption may say
    memo: dict[Any, Any]  # answers the proofs remember for this image

    def may_be(self, noun: str) -> tuple[str, ...] | None: ...

    def may_be_anything(self) -> frozenset[str]: ...

    def thing(self, oid: str) -> Thing | None: ...

    def compound(self, attribute: str, noun: str) -> bool: ...

    def before(self, noun: str, attributes: tuple[str, ...]) -> list[str]: ...

    def excluded(self, oid: str, attribute: str) -> Fact | None: ...

    def holds(self, subject: str, relation: str, obj: str) -> bool: ...

    def relation_false(self, subject: str, relation: str, obj: str) -> Fact | None: ...

    def closure_facts(self) -> list[Fact]: ...

    def graph_name(self, oid: str) -> str: ...


class GqaWorld:
    """A GQA scene graph: open, the lexicon decides what a noun may denote.

    Read straight from the graph (no `scene.SceneIndex`): captions need names, attributes and
    edges, once per image, and a million-question corpus has 75,000 images."""

    dataset = "gqa"

    def __init__(self, graph: Mapping[str, Any], lex: Lexicon, vocab: CaptionVocabulary,
                 may_kinds: Callable[[str], frozenset[str]], names: GraphNames | None = None):
        self.lex, self.vocab, self.may_kinds = lex, vocab, may_kinds
        names = self._names = names or GraphNames(lex, vocab)
        self.width, self.height = float(graph["width"]), float(graph.get("height") or 0.0)
        self._may: dict[str, tuple[str, ...] | None] = {}
        self.memo: dict[Any, Any] = {}
        self.names: dict[str, str] = {}
        self.attributes: dict[str, frozenset[str]] = {}
        things: list[Thing] = []
        written_edges: list[tuple[str, str, str]] = []
        readings, anything = [], []
        relation_names, written_names, attribute_lists = names.relations, names.written_names, names.attribute_lists
        for oid, o in graph["objects"].items():
            written = str(o["name"])
            name = written_names.get(written)
            if name is None:
                name = names.written_name(written)
            written_attrs = tuple(o.get("attributes") or ())
            attrs = attribute_lists.get(written_attrs)
            if attrs is None:
                attrs = names.attribute_list(written_attrs)
            self.names[oid], self.attributes[oid] = name, attrs
            said = names.name(name)
            readings.append((oid, said.readings))
            if not said.decidable:
                # a name that says nothing certain (unknown, too vague): the object may be
                # whatever a caption names
                anything.append(oid)
            elif said.kind is not None:
                things.append(Thing(oid, said.noun, said.kind, names.sayable(attrs),
                                    (float(o["x"]), float(o["y"]), float(o["w"]), float(o["h"]))))
            relations = o.get("relations")
            if relations:
                # a relation's spelling is "" only where it is blank, and then asked again
                written_edges.extend([(oid, relation_names.get(r["name"]) or names.relation(r["name"]), str(r["object"]))
                                      for r in relations])
        # each edge once, in the graph's order (a dict keeps its keys' order, and is tested for one as a set is)
        self._edges = dict.fromkeys(written_edges)
        self._anything, self._readings = frozenset(anything), readings
        self._anything_listed = tuple(anything)  # in the graph's order, as `may_be` lists objects
        self._read_as: frozenset[str] | None = None  # every kind an object of the image may be, once asked
        self.things = things
        self._things = known = {t.id: t for t in things}
        sayable = names.sayable_relation
        self.edges = [e for e in self._edges if e[0] != e[2] and e[0] in known and e[2] in known and sayable(e[1])]
        self._by_name = frozenset(self.names.values())

    def compound(self, attribute: str, noun: str) -> bool:
        """Would "ATTRIBUTE NOUN" read as one noun ("glass window", "hot dog")? Then the attribute
        cannot be said before the noun: a reader takes the longer noun."""
        words = f"{attribute} {noun}"
        return _known_compound(self.lex, words) or words in self._by_name

    def before(self, noun: str, attributes: tuple[str, ...]) -> list[str]:
        """The attributes that may be said before the noun: those `compound` does not read as one
        noun with it (the lexicon's answer remembered for the run, the image's names asked here)."""
        by_name = self._by_name
        return [a for a, words in self._names.not_compound(noun, attributes) if words not in by_name]

    def thing(self, oid: str) -> Thing | None:
        return self._things.get(oid)

    def may_be(self, noun: str) -> tuple[str, ...] | None:
        found = self._may.get(noun, _UNASKED)
        if found is not _UNASKED:
            return found  # type: ignore[return-value]
        if not self._names.listable(noun):
            found = None
        else:
            kinds = self.may_kinds(noun)
            read_as = self._read_as
            if read_as is None:
                read_as = self._read_as = frozenset().union(*(r for _, r in self._readings))
            if kinds.isdisjoint(read_as):
                # most nouns a negative draws are of no object here: only the vague ones may be them
                found = self._anything_listed
            else:
                found = tuple(oid for oid, readings in self._readings
                              if oid in self._anything or not kinds.isdisjoint(readings))
        self._may[noun] = found
        return found

    def may_be_anything(self) -> frozenset[str]:
        """The objects whose name says nothing certain: every noun whose objects can be listed may
        denote them, so no noun is provably absent while one is there."""
        return self._anything

    def excluded(self, oid: str, attribute: str) -> Fact | None:
        """The fact that shows the object lacks `attribute`: an opposite it carries, or its one
        colour where that colour may not be called `attribute` (rules/caption_colors.tsv)."""
        attrs = self.attributes[oid]
        if attribute in attrs:
            return None
        opposite = min(attrs & self.vocab.opposites.get(attribute, frozenset()), default=None)
        if opposite is not None:
            return {"fact": "not_attribute", "id": oid, "attribute": attribute, "because": "opposite",
                    "value": opposite}
        if attribute in self.vocab.basic_colors:
            colors = [a for a in attrs if a in self.vocab.color_terms or self.lex.is_color(a)]
            if len(colors) == 1 and attribute not in self.vocab.color_terms.get(colors[0], {attribute}):
                return {"fact": "not_attribute", "id": oid, "attribute": attribute, "because": "color",
                        "value": colors[0]}
        return None

    def holds(self, subject: str, relation: str, obj: str) -> bool:
        return (subject, relation, obj) in self._edges

    def relation_false(self, subject: str, relation: str, obj: str) -> Fact | None:
        opposite, antisymmetric = self._names.relation_rules(relation)
        return _relation_false(self._edges, opposite, antisymmetric, subject, relation, obj)

    def closure_facts(self) -> list[Fact]:
        return []

    def graph_name(self, oid: str) -> str:
        return self.names[oid]


class ClevrWorld:
    """A CLEVR or Super-CLEVR scene: closed, every object listed with one value of each type."""

    dataset = "clevr"

    def __init__(self, graph: Mapping[str, Any], vocab: Vocabulary):
        self.vocab = vocab
        self.memo: dict[Any, Any] = {}
        self.width, self.height = float(graph["width"]), float(graph.get("height") or 0.0)
        self.objects: dict[str, Mapping[str, Any]] = {str(k): v for k, v in graph["objects"].items()}
        self._values: dict[str, dict[str, str]] = {}
        for oid, o in self.objects.items():
            self._values[oid] = {vocab.type_of_value[a]: a for a in o.get("attributes") or ()
                                 if a in vocab.type_of_value}
        self.things = [Thing(oid, vocab.shape_names.get(o["name"], o["name"]), o["name"],
                             tuple(sorted(self._values[oid].values())),
                             (float(o["x"]), float(o["y"]), float(o["w"]), float(o["h"])))
                       for oid, o in self.objects.items()]
        self._things = {t.id: t for t in self.things}
        self._edges = {(oid, r["name"], str(r["object"])) for oid, o in self.objects.items()
                       for r in o.get("relations") or ()}
        self.edges = sorted(e for e in self._edges if e[0] != e[2])
        self._opposites = {"to the left of": "to the right of", "to the right of": "to the left of",
                           "in front of": "behind", "behind": "in front of"}

    def thing(self, oid: str) -> Thing | None:
        return self._things.get(oid)

    def may_be(self, noun: str) -> tuple[str, ...] | None:
        value = self.vocab.words["Shape"].get(noun)
        if not value or value == "thing":
            return None
        return tuple(oid for oid, o in self.objects.items() if self.vocab.shape_matches(o["name"], value))

    def may_be_anything(self) -> frozenset[str]:
        return frozenset()  # a closed scene names every object's shape

    def excluded(self, oid: str, attribute: str) -> Fact | None:
        kind = self.vocab.type_of_value.get(attribute)
        have = self._values[oid].get(kind) if kind in ATTRIBUTE_TYPES else None
        if have is None or have == attribute:
            return None
        return {"fact": "not_attribute", "id": oid, "attribute": attribute, "because": "closed", "value": have}

    def holds(self, subject: str, relation: str, obj: str) -> bool:
        return (subject, relation, obj) in self._edges

    def relation_false(self, subject: str, relation: str, obj: str) -> Fact | None:
        opposite = self._opposites.get(relation)
        return _relation_false(self._edges, opposite, opposite is not None, subject, relation, obj)

    def closure_facts(self) -> list[Fact]:
        return [{"fact": "object_count", "count": len(self.objects)}]

    def compound(self, attribute: str, noun: str) -> bool:
        return f"{attribute} {noun}" in self.vocab.words["Shape"]

    def before(self, noun: str, attributes: tuple[str, ...]) -> list[str]:
        return [a for a in attributes if not self.compound(a, noun)]

    def graph_name(self, oid: str) -> str:
        return str(self.objects[oid]["name"])


def _relation_false(edges: Collection[tuple[str, str, str]], opposite: str | None,
                    antisymmetric: bool, subject: str, relation: str, obj: str) -> Fact | None:
    """The edge that shows `subject relation obj` does not hold: the opposite relation between
    them, or (for a relation that cannot hold both ways) the relation the other way round. None
    where the graph says neither, or also says the relation itself (a contradiction)."""
    if subject == obj or (subject, relation, obj) in edges:
        return None
    by = None
    if opposite is not None and (subject, opposite, obj) in edges:
        by = {"subject": subject, "name": opposite, "object": obj}
    elif antisymmetric and (obj, relation, subject) in edges:
        by = {"subject": obj, "name": relation, "object": subject}
    if by is None:
        return None
    return {"fact": "not_relation", "subject": subject, "relation": relation, "object": obj, "because": by}
