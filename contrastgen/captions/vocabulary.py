"""The words a caption may say, and what the rules say about them.

Why a vocabulary of its own: a caption names an object with one attribute before its noun ("a
black dog"), and a negative replaces that attribute or adds one. A word there must read as an
adjective (GQA's "brushing teeth" or "in the background" do not), and a negative's attribute must
be one the graph can show an object lacks: a basic colour term (`rules/caption_colors.tsv`) or
one side of an opposite pair (`rules/attribute_opposites.tsv`). Sizes, materials and ages may be
said of a positive's object; a negative never claims them absent, since graphs list them too
loosely for that. Relations are said as GQA names them ("to the left of", "wearing"); a relation
may be claimed not to hold only where its opposite (`rules/relations.tsv`) or its converse shows
it, and only relations that cannot hold both ways have a converse (`rules/asymmetric_relations.txt`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from contrastgen.language.lexicon import (
    attribute_opposites,
    iter_data_lines,
    normalize,
    read_word_list,
)
from contrastgen.resources import lexicon_dir, rules_file

# GQA attribute types that English says before a noun in a known order (rules/adjective_order.tsv):
# a positive's attribute is one of these, a basic colour or an opposite
_SAYABLE_TYPES_FILE = "adjective_order.tsv"
_MAX_RELATION_WORDS = 4


@dataclass(frozen=True)
class CaptionVocabulary:
    """Which attributes and relations captions may say, and the colour and relation rules."""

    basic_colors: tuple[str, ...]  # the colour terms a negative may say
    color_terms: dict[str, frozenset[str]]  # listed colour -> basic terms it may also be called
    opposites: dict[str, frozenset[str]]  # attribute -> the attributes it excludes
    typed: dict[str, frozenset[str]]  # attribute -> its GQA types (rules/attribute_types.tsv)
    sayable_types: frozenset[str]
    asymmetric: frozenset[str]  # relations that cannot hold both ways (beyond those with an opposite)
    determinerless: frozenset[str] = frozenset()  # nouns that take no article ("someone"): never a caption's noun

    def sayable(self, attribute: str) -> bool:
        """May a caption put this attribute before a noun?"""
        a = normalize(attribute)
        return (a in self.color_terms or a in self.opposites
                or bool(self.typed.get(a, frozenset()) & self.sayable_types))

    def provable(self, attribute: str) -> bool:
        """May a negative claim an object lacks this attribute (a basic colour or an opposite)?"""
        a = normalize(attribute)
        return a in self.basic_colors or a in self.opposites

    def attribute_type(self, attribute: str) -> str:
        """"color" for a colour, else the attribute's first GQA type ("" when it has none)."""
        a = normalize(attribute)
        if a in self.color_terms:
            return "color"
        types = sorted(self.typed.get(a, ()))
        return types[0] if types else ""

    def same_class(self, attribute: str) -> tuple[str, ...]:
        """The provable attributes a negative may put in this one's place: the basic colours for a
        colour, the opposites for one side of an opposite pair."""
        a = normalize(attribute)
        if a in self.basic_colors:
            return tuple(c for c in self.basic_colors if c != a)
        return tuple(sorted(self.opposites.get(a, ())))


def _read_color_terms() -> dict[str, tuple[str, ...]]:
    """rules/caption_colors.tsv: listed colour -> the basic terms it may be called, itself first
    when it is a basic term."""
    path = rules_file("caption_colors.tsv")
    out: dict[str, tuple[str, ...]] = {}
    for _, cols in iter_data_lines(path):
        if len(cols) == 2:
            out[normalize(cols[0])] = tuple(normalize(c) for c in cols[1].split(",") if c.strip())
    return out


def _read_types() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for _, cols in iter_data_lines(rules_file("attribute_types.tsv")):
        if len(cols) >= 2:
            out.setdefault(normalize(cols[0]), set()).add(cols[1].strip())
    return {k: frozenset(v) for k, v in out.items()}


@functools.lru_cache(maxsize=1)
def load_vocabulary() -> CaptionVocabulary:
    terms = _read_color_terms()
    basic = tuple(c for c, may in terms.items() if may and may[0] == c)
    sayable_types = frozenset(cols[0].strip() for _, cols in iter_data_lines(rules_file(_SAYABLE_TYPES_FILE))
                              if cols and cols[0].strip())
    return CaptionVocabulary(
        basic_colors=basic, color_terms={c: frozenset(may) for c, may in terms.items()}, opposites=attribute_opposites(), typed=_read_types(),
        sayable_types=sayable_types,
        asymmetric=frozenset(read_word_list(rules_file("asymmetric_relations.txt"))),
        determinerless=frozenset(read_word_list(lexicon_dir() / "determinerless.txt")))


@functools.lru_cache(maxsize=4096)
def sayable_relation(name: str) -> bool:
    """A relation a caption can say between two noun phrases: a few plain lower-case words."""
    words = name.split()
    return 0 < len(words) <= _MAX_RELATION_WORDS and all(w.isalpha() for w in words) and name != "and"
