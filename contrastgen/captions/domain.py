"""What a caption's words mean for each family of scene graphs: GQA's (open, named by the lexicon)
and CLEVR's (closed, named by the CLEVR vocabulary).

Why one object per family: the generator asks the same few questions of any graph (the world of
one image, the kind a noun names, whether an attribute may be said of a noun, which relations a
negative may put in a relation's place) and must not learn which family it reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from contrastgen.captions.vocabulary import CaptionVocabulary, load_vocabulary
from contrastgen.captions.world import ClevrWorld, GqaWorld, GraphNames, World
from contrastgen.datasets.clevr_vocab import RELATION_NAMES, Vocabulary
from contrastgen.datasets.clevr_vocab import load_vocabulary as load_clevr_vocabulary
from contrastgen.language.lexicon import Lexicon
from contrastgen.language.noun_classes import AttributeKinds, attribute_kinds

_UNASKED = object()  # a relation `GqaDomain.opposite` has not yet answered for (None is an answer)
# CLEVR's relations are each the other's opposite, as its scenes compute them (left/right from
# the camera's left direction, front/behind from its front one)
_CLEVR_OPPOSITES = {"to the left of": "to the right of", "to the right of": "to the left of",
                    "in front of": "behind", "behind": "in front of"}


class Domain(Protocol):
    name: str
    lex: Lexicon
    vocab: CaptionVocabulary
    replace_relations: tuple[str, ...]  # the relations replace_rel says, in the positive and the negative

    def world(self, image_id: str, graph: Mapping[str, Any]) -> World: ...

    def kind_of(self, noun: str) -> str: ...

    def graph_kind(self, name: str) -> str: ...

    def may_kinds(self, noun: str) -> frozenset[str]: ...

    def noun_of(self, kind: str) -> str: ...

    def allows(self, noun: str, attribute: str) -> bool: ...

    def says_of(self, noun: str, attribute: str) -> bool: ...

    def antisymmetric(self, relation: str) -> bool: ...

    def opposite(self, relation: str) -> str | None: ...

    def alternatives(self, attribute: str) -> tuple[str, ...]: ...

    def allowed_alternatives(self, noun: str, attribute: str) -> tuple[str, ...]: ...

    def provable(self, attribute: str) -> bool: ...

    def attributes_of(self, noun: str, attributes: tuple[str, ...], provable: bool) -> tuple[str, ...]: ...


def _allowed_alternatives(domain: Domain, noun: str, attribute: str) -> tuple[str, ...]:
    return tuple(a for a in domain.alternatives(attribute) if domain.allows(noun, a))


def _attributes_of(domain: Domain, noun: str, attributes: tuple[str, ...], provable: bool) -> tuple[str, ...]:
    return tuple(a for a in attributes if (not provable or domain.provable(a)) and domain.says_of(noun, a))


@dataclass
class GqaDomain:
    lex: Lexicon
    vocab: CaptionVocabulary
    kinds: AttributeKinds
    name: str = "gqa"
    # answers remembered for the process: the same few thousand nouns and relations recur
    _antisymmetric: dict[str, bool] = field(default_factory=dict, repr=False)
    _may_kinds: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _allows: dict[tuple[str, str], bool] = field(default_factory=dict, repr=False)
    _kinds: dict[str, str] = field(default_factory=dict, repr=False)
    _names: GraphNames | None = field(default=None, repr=False)
    # (noun, attribute) -> (may a caption say it of the noun, may a negative say it in its place)
    _attribute_answers: dict[tuple[str, str], tuple[bool, bool]] = field(default_factory=dict, repr=False)
    _opposites: dict[str, str | None] = field(default_factory=dict, repr=False)
    _allowed_alternatives: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict, repr=False)
    _says_of: dict[tuple[str, str], bool] = field(default_factory=dict, repr=False)
    _replace_relations: tuple[str, ...] | None = field(default=None, repr=False)

    @classmethod
    def load(cls) -> GqaDomain:
        return cls(Lexicon.load(), load_vocabulary(), attribute_kinds())

    @property
    def replace_relations(self) -> tuple[str, ...]:
        """The lexicon's relations with an opposite; listed once (every image's replace_rel asks)."""
        found = self._replace_relations
        if found is None:
            found = self._replace_relations = tuple(sorted(r for r in self.lex.relations if self.lex.opposite_relation(r)))
        return found

    def world(self, image_id: str, graph: Mapping[str, Any]) -> World:
        if self._names is None:
            self._names = GraphNames(self.lex, self.vocab)
        return GqaWorld(graph, self.lex, self.vocab, self.may_kinds, self._names)

    def kind_of(self, noun: str) -> str:
        """The kind a caption's noun names (what the plausibility counts are kept under)."""
        found = self._kinds.get(noun)
        if found is None:
            found = self._kinds[noun] = self.lex.canonical(noun)
        return found

    def graph_kind(self, name: str) -> str:
        """The kind of an object the graph names so."""
        return self.kind_of(name)

    def may_kinds(self, noun: str) -> frozenset[str]:
        """The kinds of object the noun may denote (`world.GqaWorld.may_be` lists their objects)."""
        found = self._may_kinds.get(noun)
        if found is None:
            lex = self.lex
            # people cross-classify both ways: an object listed as a man may be the boy a caption
            # names, since "man" may denote a boy (the question path's people rule, made symmetric)
            found = self._may_kinds[noun] = (lex.may_denote(noun) | lex.broader(noun) | {lex.canonical(noun)}
                                             | lex.people_who_may_be(noun))
        return found

    def noun_of(self, kind: str) -> str:
        return kind

    def allows(self, noun: str, attribute: str) -> bool:
        """May a negative say the attribute of the noun (rules/attribute_kinds.tsv: "brunette" of hair
        and people, not of shoes; no colour of a people noun)? A negative that says what no one
        says of such a thing would be told by its words alone."""
        found = self._allows.get((noun, attribute))
        if found is None:
            found = self._allows[noun, attribute] = self.says_of(noun, attribute) and self.kinds.allows(
                self.lex.category(noun), self.vocab.attribute_type(attribute), attribute)
        return found

    def says_of(self, noun: str, attribute: str) -> bool:
        """May any caption, true or false, say the attribute of the noun? Not a colour of people or
        a group of people ("a brown woman", "a silver man"): said of people a colour reads as their
        skin, which no graph's colour of a person (their clothes) shows; and a class of phrase only
        true captions said would tell them from their negatives."""
        key = (noun, attribute)
        found = self._says_of.get(key)
        if found is None:  # remembered: each new list of attributes an object has asks of each
            found = self._says_of[key] = not (self.lex.is_person(noun) and self.vocab.attribute_type(attribute) == "color")
        return found

    def antisymmetric(self, relation: str) -> bool:
        found = self._antisymmetric.get(relation)
        if found is None:
            found = self._antisymmetric[relation] = (self.lex.opposite_relation(relation) is not None
                                                     or relation in self.vocab.asymmetric)
        return found

    def opposite(self, relation: str) -> str | None:
        found = self._opposites.get(relation, _UNASKED)
        if found is _UNASKED:
            found = self._opposites[relation] = self.lex.opposite_relation(relation)
        return found  # type: ignore[return-value]

    def alternatives(self, attribute: str) -> tuple[str, ...]:
        """What a negative may say in the attribute's place: the other basic colours, or its opposites."""
        return self.vocab.same_class(attribute)

    def allowed_alternatives(self, noun: str, attribute: str) -> tuple[str, ...]:
        """The `alternatives` of the attribute a negative may say of the noun (`allows`), in their
        order; remembered, as every image's attribute kinds ask of the same nouns and attributes."""
        key = (noun, attribute)
        found = self._allowed_alternatives.get(key)
        if found is None:
            found = self._allowed_alternatives[key] = _allowed_alternatives(self, noun, attribute)
        return found

    def provable(self, attribute: str) -> bool:
        return self.vocab.provable(attribute)

    def attributes_of(self, noun: str, attributes: tuple[str, ...], provable: bool) -> tuple[str, ...]:
        """Of an object's `attributes`, those any caption may say of the noun (`says_of`); with
        `provable`, only those a negative could say in their place. Remembered per noun and
        attribute, not per list: a corpus of 75,000 images lists most nouns with many combinations
        of attributes (half the lists an image asks of are new to the process after 10,000
        images), but the same few thousand pairs of a noun and an attribute."""
        answers = self._attribute_answers
        out = []
        for a in attributes:
            found = answers.get((noun, a))
            if found is None:
                found = answers[noun, a] = (self.says_of(noun, a), self.provable(a))
            if found[0] and (found[1] or not provable):
                out.append(a)
        return tuple(out)


@dataclass
class ClevrDomain:
    lex: Lexicon
    vocab: CaptionVocabulary
    clevr: Vocabulary
    name: str = "clevr"
    replace_relations: tuple[str, ...] = tuple(sorted(RELATION_NAMES.values()))

    @classmethod
    def load(cls) -> ClevrDomain:
        return cls(Lexicon.load(), load_vocabulary(), load_clevr_vocabulary())

    def world(self, image_id: str, graph: Mapping[str, Any]) -> World:
        return ClevrWorld(graph, self.clevr)

    def kind_of(self, noun: str) -> str:
        return self.clevr.words["Shape"].get(noun, noun)

    def graph_kind(self, name: str) -> str:
        return name

    def may_kinds(self, noun: str) -> frozenset[str]:
        value = self.kind_of(noun)
        return frozenset(s for s, c in self.clevr.shape_category.items() if value in (s, c)) | {value}

    def noun_of(self, kind: str) -> str:
        return self.clevr.shape_names.get(kind, kind)

    def allows(self, noun: str, attribute: str) -> bool:
        return attribute in self.clevr.type_of_value

    def says_of(self, noun: str, attribute: str) -> bool:
        return True

    def antisymmetric(self, relation: str) -> bool:
        return relation in self.replace_relations

    def opposite(self, relation: str) -> str | None:
        return _CLEVR_OPPOSITES.get(relation)

    def alternatives(self, attribute: str) -> tuple[str, ...]:
        """The other values of the attribute's type (CLEVR's colours, sizes or materials)."""
        kind = self.clevr.type_of_value.get(attribute)
        return tuple(v for v in self.clevr.values.get(kind, ()) if v != attribute) if kind else ()

    def allowed_alternatives(self, noun: str, attribute: str) -> tuple[str, ...]:
        return _allowed_alternatives(self, noun, attribute)

    def provable(self, attribute: str) -> bool:
        return attribute in self.clevr.type_of_value

    def attributes_of(self, noun: str, attributes: tuple[str, ...], provable: bool) -> tuple[str, ...]:
        return _attributes_of(self, noun, attributes, provable)


def load_domain(name: str) -> Domain:
    return ClevrDomain.load() if name == "clevr" else GqaDomain.load()
