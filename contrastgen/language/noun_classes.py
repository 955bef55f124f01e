"""What kinds of noun take which attributes, and which people nouns may name the same person:
the run-time reading of rules/attribute_kinds.tsv and rules/lexicon/person_facets.tsv (both built
from the corpus and WordNet by benchmarks/make_noun_classes.py, so WordNet is not needed here), and
of two hand-written lists: rules/hair_colors.tsv (values said only of hair and people) and
rules/several_colored.tsv (kinds whose one listed colour excludes no other).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from contrastgen.language.lexicon import Lexicon
from contrastgen.resources import rules_file


def _rows(name: str, *parts: str) -> list[list[str]]:
    path = rules_file(name, *parts)
    return [[c.strip() for c in line.split("\t")] for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]


@dataclass(frozen=True)
class AttributeKinds:
    """rules/attribute_kinds.tsv: the GQA types each category is seen with, and the values seen
    only of living things."""

    types_of: dict[str, frozenset[str]]  # category -> the attribute types GQA says of it
    animate_only: dict[str, frozenset[str]]  # value -> the living categories it is said of
    animate: frozenset[str]

    def allows(self, category: str | None, kind: str, value: str) -> bool:
        """May `value` (of GQA type `kind`) be said of an object of `category`? Unknown categories
        and categories the corpus says nothing of are not restricted."""
        if category is None:
            return True
        types = self.types_of.get(category)
        if types is not None and kind not in types:
            return False
        living = self.animate_only.get(value.lower())
        return living is None or category in living


@functools.lru_cache(maxsize=1)
def attribute_kinds() -> AttributeKinds:
    types_of: dict[str, set[str]] = {}
    said_of: dict[str, set[str]] = {}
    animate: frozenset[str] = frozenset()
    for cols in _rows("attribute_kinds.tsv"):
        if cols[0] == "@animate":
            animate = frozenset(c for c in cols[1].split(",") if c)
            continue
        if len(cols) < 3:
            continue
        value, kind, categories = cols[0].lower(), cols[1], {c for c in cols[2].split(",") if c}
        said_of.setdefault(value, set()).update(categories)
        for c in categories:
            types_of.setdefault(c, set()).add(kind)
    animate_only = {v: frozenset(cats) for v, cats in said_of.items() if cats and cats <= animate}
    return AttributeKinds({c: frozenset(t) for c, t in types_of.items()}, animate_only, animate)


@functools.lru_cache(maxsize=1)
def person_facets() -> dict[str, tuple[str, str]]:
    """rules/lexicon/person_facets.tsv: people noun (canonical) -> (gender, age), "-" for none."""
    return {cols[0]: (cols[1], cols[2]) for cols in _rows("lexicon", "person_facets.tsv") if len(cols) >= 3}


def may_be_same_person(a: str, b: str, facets: dict[str, tuple[str, str]]) -> bool:
    """Two people nouns may name one person unless their genders or their ages differ."""
    (ga, aa), (gb, ab) = facets[a], facets[b]
    return (ga == "-" or gb == "-" or ga == gb) and (aa == "-" or ab == "-" or aa == ab)


@dataclass(frozen=True)
class HairColors:
    """rules/hair_colors.tsv: colour values said only of hair and people, and what may take them."""

    takers: dict[str, frozenset[str]]  # value -> lexicon categories and canonical nouns

    def allows(self, value: str, noun: str, lex: Lexicon) -> bool:
        """May `value` be said of an object named `noun`? Any value that is no hair colour may;
        a hair colour only of a listed category or a kind of a listed noun ("beard": hair)."""
        takers = self.takers.get(value.strip().lower())
        if takers is None:
            return True
        return lex.category(noun) in takers or any(lex.is_a(noun, t) for t in takers)


@functools.lru_cache(maxsize=1)
def hair_colors() -> HairColors:
    return HairColors({cols[0].lower(): frozenset(c.strip() for c in cols[1].split(",") if c.strip())
                       for cols in _rows("hair_colors.tsv") if len(cols) >= 2})


@functools.lru_cache(maxsize=1)
def several_colored_categories() -> frozenset[str]:
    """rules/several_colored.tsv: categories whose one listed colour does not exclude another (a
    person in pink shoes listed as white, a bus's parts)."""
    return frozenset(cols[0] for cols in _rows("several_colored.tsv") if cols and cols[0])
