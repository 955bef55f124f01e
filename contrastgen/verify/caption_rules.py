"""The rules a caption's proof may rest on, read by the verifier with its own few lines of parsing.

Why its own reading: the caption generator reads the same files (`contrastgen.captions.vocabulary`,
`contrastgen.language.lexicon`); a bug in one reader (a colour row dropped, a hypernym missed) must
not make both agree on a wrong proof. What the verifier trusts:
- rules/caption_colors.tsv: which basic colour terms a listed colour may also be called;
- rules/asymmetric_relations.txt and rules/relations.tsv: which relations cannot hold both ways;
- rules/lexicon/nouns.tsv's `kinds` column: the kinds a noun is a kind of (an object listed under
  one of them may be the noun's object);
- rules/lexicon/person_facets.tsv's first column and nouns.tsv's person category: the people
  nouns and groups of people (no colour is put on one; an object listed under a people noun
  that may denote another may be that other, and a group or a people noun of no known gender
  or age may be, or hold, anyone);
- rules/clevr/metadata_*.json: CLEVR's shapes, Super-CLEVR's shape names and categories, and the
  type of each size, colour and material.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import orjson

from contrastgen.errors import InputError
from contrastgen.resources import rules_resource
from contrastgen.verify.rules import normalize_name


def _lines(*parts: str) -> list[list[str]]:
    node = rules_resource(*parts)
    if not node.is_file():
        raise InputError("rules file missing (the caption verifier reads it)", path="rules/" + "/".join(parts))
    rows = []
    for raw in node.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0]
        if line.strip():
            rows.append([c.strip().lower() for c in line.split("\t")])
    return rows


@dataclass(frozen=True)
class CaptionRules:
    basic_colors: frozenset[str]  # the colour terms a negative may say
    color_terms: dict[str, frozenset[str]]  # listed colour -> basic terms it may be called
    asymmetric: frozenset[str]  # relations that cannot hold both ways, besides those with an opposite
    hypernyms: dict[str, frozenset[str]]  # noun (any listed form) -> the surface names of its kinds
    synonyms: dict[str, frozenset[str]]  # a row's name -> every name and plural of its canonical noun
    typed_attributes: frozenset[str]  # the attribute values of rules/attribute_types.tsv
    people: frozenset[str]  # the people nouns of rules/lexicon/person_facets.tsv
    person_kinds: frozenset[str]  # nouns.tsv's canonical nouns of the person category ("crowd", "worker")
    clevr_shapes: dict[str, str]  # word -> CLEVR shape value or Super-CLEVR category
    clevr_category: dict[str, str]  # Super-CLEVR shape -> its category
    clevr_types: dict[str, str]  # CLEVR size, colour or material value -> its type


def _nouns() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """From nouns.tsv (name, plural, canonical, category, kinds, synset): each name's and plural's
    kinds, as the surface names of the nouns listed under those kinds; and each name's synonyms,
    the names and plurals of every row with the canonical noun of the row of that name (a
    plural is left out: "glasses" names spectacles, whatever glass's plural is)."""
    rows = [cols for cols in _lines("lexicon", "nouns.tsv") if len(cols) >= 5]
    forms: dict[str, set[str]] = {}
    canonical_of: dict[str, str] = {}
    for name, plural, canonical, *_ in rows:
        forms.setdefault(canonical, set()).update({name, plural})
        canonical_of[name] = canonical
    hypernyms: dict[str, frozenset[str]] = {}
    for name, plural, _canonical, _category, kinds, *_ in rows:
        names = frozenset(f for k in kinds.split(",") if k.strip() and k.strip() != "-"
                          for f in forms.get(k.strip(), {k.strip()}))
        for word in (name, plural):
            hypernyms[word] = hypernyms.get(word, frozenset()) | names
    synonyms = {word: frozenset(forms[c]) for word, c in canonical_of.items()}
    # a vocabulary's other form of a listed noun ("stair" for "stairs") has that noun's kinds
    # and synonyms: a graph or an older caption may say it
    for alias, name, *_ in _lines("lexicon", "aliases.tsv"):
        if name in hypernyms:
            hypernyms.setdefault(alias, hypernyms[name])
        if name in synonyms:
            synonyms.setdefault(alias, synonyms[name])
    return hypernyms, synonyms


@functools.lru_cache(maxsize=1)
def load_caption_rules() -> CaptionRules:
    terms = {row[0]: tuple(c.strip() for c in row[1].split(",") if c.strip())
             for row in _lines("caption_colors.tsv") if len(row) == 2}
    relations = _lines("relations.tsv")
    asymmetric = {row[0] for row in _lines("asymmetric_relations.txt")}
    asymmetric |= {row[0] for row in relations if len(row) == 2 and row[1] != "symmetric"}
    hypernyms, synonyms = _nouns()
    clevr = orjson.loads(rules_resource("clevr", "metadata_clevr.json").read_bytes())["types"]
    superclevr = orjson.loads(rules_resource("clevr", "metadata_superclevr.json").read_bytes())["types"]
    shapes = {s: s for s in clevr["Shape"]}
    shapes.update({category: category for category in superclevr["Shape"]})
    shapes.update({name: shape for shape, name in superclevr["Shapename"].items()})
    category = {shape: c for c, members in superclevr["Shape"].items() for shape in members}
    types = {v: kind.lower() for kind in ("Size", "Color", "Material") for v in clevr[kind]}
    return CaptionRules(
        basic_colors=frozenset(c for c, may in terms.items() if may and may[0] == c),
        color_terms={c: frozenset(may) for c, may in terms.items()},
        asymmetric=frozenset(normalize_name(r) for r in asymmetric),
        hypernyms=hypernyms, synonyms=synonyms,
        typed_attributes=frozenset(row[0] for row in _lines("attribute_types.tsv") if row),
        people=frozenset(row[0] for row in _lines("lexicon", "person_facets.tsv") if len(row) >= 3),
        person_kinds=frozenset(row[0] for row in _lines("lexicon", "nouns.tsv")
                               if len(row) >= 5 and row[0] == row[2] and row[3] == "person"),
        clevr_shapes=shapes, clevr_category=category, clevr_types=types)
