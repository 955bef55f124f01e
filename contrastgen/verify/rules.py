"""The plain data files the verifier trusts, read with its own tiny parser.

Why its own parser: the verifier must not share code with the generator, or a bug in a shared
reader (a dropped line, a mis-split column) would make both sides agree on the same wrong
answer. The files are simple enough ('#' comments, one entry per line, tab-separated columns)
that a dozen lines re-read them independently.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable

from contrastgen.errors import InputError
from contrastgen.resources import rules_resource

_RELATIONS = ("relations.tsv",)
_COLORS = ("lexicon", "colors.txt")
_UNANNOTATED_PRONE = ("lexicon", "unannotated_prone.txt")
_TEMPLATES = ("templates.json",)
_ATTRIBUTE_TYPES = ("attribute_types.tsv",)
_ATTRIBUTE_OPPOSITES = ("attribute_opposites.tsv",)
_SINGLE_VALUED = ("single_valued_types.txt",)
_PRONOUNS = ("pronouns.txt",)
_NOUNS = ("lexicon", "nouns.tsv")
_PHRASES = ("phrases.json",)
_ATTRIBUTE_WORDS = (("lexicon", "attributes.txt"), ("lexicon", "extra_attributes.txt"), _COLORS)
_KINDS_NOT_SAID = ("lexicon", "kinds_not_said.tsv")
_HAIR_COLORS = ("hair_colors.tsv",)
_SEVERAL_COLORED = ("several_colored.tsv",)
_SYMMETRIC = "symmetric"


@functools.lru_cache(maxsize=65536)
def _normalize_str(text: str) -> str:
    return text.strip().lower()


def normalize_name(text: object) -> str:
    """Scene-graph names and relations are compared lower-cased and stripped (the evidence contract, docs/output-formats.md).

    Cached: the same few thousand names recur in every record of a run.
    """
    return _normalize_str(text) if isinstance(text, str) else str(text).strip().lower()


@dataclass(frozen=True)
class VerifyRules:
    """Relation opposites, symmetric relations, colour terms, unannotated-prone names, id suffixes.

    `unannotated_prone_source` is the file the prone names came from, or None when that file is
    absent; callers report it so that a pass never silently hides a check that did not run.
    `template_suffixes` maps a template id to the letter in its perturbations' ids (`_n1`); when
    empty, ids are only checked to have the shape `<qid>_<letters><rank>`.
    """

    opposites: dict[str, str]
    symmetric: frozenset[str]
    colors: frozenset[str]
    unannotated_prone: frozenset[str]
    unannotated_prone_source: str | None = None
    template_suffixes: dict[str, str] = field(default_factory=dict)
    # GQA attribute type -> its values (rules/attribute_types.tsv), for `query: TYPE` in programs
    attribute_types: dict[str, frozenset[str]] = field(default_factory=dict)
    # attribute -> the attributes it excludes (rules/attribute_opposites.tsv, both ways), and the
    # types of which one listed value excludes every other (rules/single_valued_types.txt): what a
    # program's "no" about an attribute must rest on
    attribute_opposites: dict[str, frozenset[str]] = field(default_factory=dict)
    single_valued: frozenset[str] = frozenset()
    pronouns: frozenset[str] = frozenset()  # "select: he (12)": the ids say who, not the word
    # what the words around a program edit's new name may say (rules/phrases.json, rules/lexicon):
    # determiners that say whose a thing is ("her"), the articles and demonstratives a noun phrase
    # opens with, the words that say an attribute, and (name, general noun) pairs no reader takes
    # for the object ("the container" for a spoon)
    possessives: frozenset[str] = frozenset()
    determiners: frozenset[str] = frozenset()
    attribute_words: frozenset[str] = frozenset()
    kinds_not_said: frozenset[tuple[str, str]] = frozenset()
    # hair colour -> the graph names it may be said of (rules/hair_colors.tsv over nouns.tsv)
    hair_colors: dict[str, frozenset[str]] = field(default_factory=dict)
    # graph names whose one listed colour excludes no other (rules/several_colored.tsv)
    several_colored: frozenset[str] = frozenset()

    def is_unannotated_prone(self, name: str) -> bool:
        """True if `name`, or a naive singular of it, is prone to be missing from scene graphs.

        The singular forms are deliberately crude ("hands" -> "hand", "glasses" -> "glass"):
        over-matching can only make the verifier stricter, never let an unsound absence pass.
        """
        n = normalize_name(name)
        forms = {n}
        if n.endswith("ies"):
            forms.add(n[:-3] + "y")
        if n.endswith("es"):
            forms.add(n[:-2])
        if n.endswith("s"):
            forms.add(n[:-1])
        return not forms.isdisjoint(self.unannotated_prone)


def _entries(text: str) -> list[str]:
    """Non-blank lines with '#' comments removed."""
    out = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            out.append(line)
    return out


def _resource(parts: tuple[str, ...]) -> Traversable:
    return rules_resource(*parts)


def _read_required(parts: tuple[str, ...]) -> tuple[str, str]:
    node = _resource(parts)
    name = "rules/" + "/".join(parts)
    if not node.is_file():
        raise InputError("rules file missing (the verifier needs it)", path=name)
    return node.read_text(encoding="utf-8"), name


def parse_relations(text: str, *, path: str = "rules/relations.tsv") -> tuple[dict[str, str], frozenset[str]]:
    """`relation<TAB>opposite` or `relation<TAB>symmetric` per line."""
    opposites: dict[str, str] = {}
    symmetric: set[str] = set()
    for raw in text.splitlines():
        if not raw.split("#", 1)[0].strip():
            continue
        cols = [c.strip() for c in raw.split("#", 1)[0].split("\t")]
        if len(cols) != 2 or not all(cols):
            raise InputError("expected two tab-separated columns", path=path, record=raw.strip())
        rel, other = normalize_name(cols[0]), normalize_name(cols[1])
        if other == _SYMMETRIC:
            symmetric.add(rel)
        else:
            opposites[rel] = other
    return opposites, frozenset(symmetric)


def parse_word_list(text: str) -> frozenset[str]:
    """One entry per line; '#' starts a comment."""
    return frozenset(normalize_name(e) for e in _entries(text))


def parse_attribute_types(text: str) -> dict[str, frozenset[str]]:
    """`value<TAB>type` lines -> type -> values."""
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        cols = line.split("#", 1)[0].split("\t")
        if len(cols) >= 2 and cols[0].strip() and cols[1].strip():
            out.setdefault(cols[1].strip().lower(), set()).add(normalize_name(cols[0]))
    return {k: frozenset(v) for k, v in out.items()}


def parse_pairs(text: str) -> dict[str, frozenset[str]]:
    """`a<TAB>b` lines, read both ways: a -> {b}, b -> {a}."""
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        cols = [normalize_name(c) for c in line.split("#", 1)[0].split("\t")]
        if len(cols) == 2 and all(cols):
            out.setdefault(cols[0], set()).add(cols[1])
            out.setdefault(cols[1], set()).add(cols[0])
    return {k: frozenset(v) for k, v in out.items()}


def parse_pair_set(text: str) -> frozenset[tuple[str, str]]:
    """`a<TAB>b` lines, read one way: the pairs (a, b)."""
    out = set()
    for line in text.splitlines():
        cols = [normalize_name(c) for c in line.split("#", 1)[0].split("\t")]
        if len(cols) >= 2 and cols[0] and cols[1]:
            out.add((cols[0], cols[1]))
    return frozenset(out)


def parse_template_suffixes(text: str, *, path: str = "rules/templates.json") -> dict[str, str]:
    """Template id -> `id_suffix` from templates.json; the patterns themselves are not read."""
    try:
        data = json.loads(text)
        out = {str(t["id"]): str(t["id_suffix"]) for t in data["templates"]}
        path_entry = data.get("program_path")
        if isinstance(path_entry, dict):  # the program path's records, beside the templates'
            out[str(path_entry["id"])] = str(path_entry["id_suffix"])
        return out
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"cannot read template ids and id_suffix ({exc!r})", path=path) from None


def expand_prone(prone: frozenset[str], nouns_tsv: str) -> frozenset[str]:
    """Add every form, synonym and kind of a listed name, as unannotated_prone.txt's header says.

    "body part" covers "hand" and "hands", "clothing" covers "shirts": the list names general
    nouns and nouns.tsv (columns: name, plural, canonical, category, kinds, synset) says which
    vocabulary nouns are forms, synonyms (same canonical) or kinds of them. Only the table is
    read, never the lexicon code, so the expansion stays independent of the generator.
    """
    rows = []
    for raw in nouns_tsv.splitlines():
        if raw.startswith("#") or not raw.strip():
            continue
        cols = [c.strip().lower() for c in raw.split("\t")]
        if len(cols) < 5:
            continue
        name, plural, canonical, kinds = cols[0], cols[1], cols[2], cols[4]
        rows.append((name, plural, canonical, set() if kinds == "-" else {k.strip() for k in kinds.split(",")}))
    covered = set(prone)
    covered |= {canonical for name, plural, canonical, _ in rows if name in prone or plural in prone}
    out = set(prone)
    for name, plural, canonical, kinds in rows:
        if {name, plural, canonical} & covered or kinds & covered:
            out |= {name, plural}
    return frozenset(out)


def _noun_rows(nouns_tsv: str) -> list[tuple[str, str, str, str, set[str]]]:
    """nouns.tsv's (name, plural, canonical, category, kinds), lower-cased; a synonym takes its
    canonical noun's category, as the lexicon's own reading does."""
    rows = []
    for raw in nouns_tsv.splitlines():
        if raw.startswith("#") or not raw.strip():
            continue
        cols = [c.strip().lower() for c in raw.split("\t")]
        if len(cols) >= 5:
            rows.append((cols[0], cols[1], cols[2], cols[3], set() if cols[4] == "-" else
                         {k.strip() for k in cols[4].split(",")}))
    own = {name: category for name, _, canonical, category, _ in rows if name == canonical and category != "-"}
    return [(n, p, c, own.get(c, cat), kinds) for n, p, c, cat, kinds in rows]


def names_in(classes: frozenset[str], nouns_tsv: str) -> frozenset[str]:
    """The graph names (each noun's singular and plural) of a category in `classes`, or whose
    canonical noun, or a kind it is a kind of, is in `classes` ("beard": a kind of hair)."""
    return frozenset(w for name, plural, canonical, category, kinds in _noun_rows(nouns_tsv)
                     if category in classes or canonical in classes or kinds & classes for w in (name, plural))


def parse_hair_colors(text: str, nouns_tsv: str) -> dict[str, frozenset[str]]:
    """rules/hair_colors.tsv (value <TAB> categories and nouns) -> value -> graph names that take it."""
    out: dict[str, frozenset[str]] = {}
    for raw in text.splitlines():
        cols = [c.strip().lower() for c in raw.split("#", 1)[0].split("\t")]
        if len(cols) >= 2 and cols[0]:
            out[cols[0]] = names_in(frozenset(c.strip() for c in cols[1].split(",") if c.strip()), nouns_tsv)
    return out


@functools.lru_cache(maxsize=1)
def load_rules() -> VerifyRules:
    """Read the shipped rules once per process.

    `unannotated_prone.txt` may be absent (it is built separately); then no name counts as
    prone and `unannotated_prone_source` is None, which the CLI reports. When the lexicon's
    generated `nouns.tsv` is present, the list is expanded by it (`expand_prone`).
    """
    rel_text, rel_path = _read_required(_RELATIONS)
    opposites, symmetric = parse_relations(rel_text, path=rel_path)
    color_text, _ = _read_required(_COLORS)
    prone_node = _resource(_UNANNOTATED_PRONE)
    if prone_node.is_file():
        prone = parse_word_list(prone_node.read_text(encoding="utf-8"))
        prone_source: str | None = "rules/" + "/".join(_UNANNOTATED_PRONE)
        nouns_node = _resource(_NOUNS)
        if nouns_node.is_file():
            prone = expand_prone(prone, nouns_node.read_text(encoding="utf-8"))
            prone_source += " (expanded by rules/lexicon/nouns.tsv)"
    else:
        prone, prone_source = frozenset(), None
    templates_node = _resource(_TEMPLATES)
    suffixes = (parse_template_suffixes(templates_node.read_text(encoding="utf-8"))
                if templates_node.is_file() else {})
    types_node = _resource(_ATTRIBUTE_TYPES)
    types = parse_attribute_types(types_node.read_text(encoding="utf-8")) if types_node.is_file() else {}
    opposites_text, _ = _read_required(_ATTRIBUTE_OPPOSITES)
    single_text, _ = _read_required(_SINGLE_VALUED)
    phrases = json.loads(_read_required(_PHRASES)[0])
    nouns_text = _read_required(_NOUNS)[0]
    several = frozenset(normalize_name(e.split("\t")[0]) for e in _entries(_read_required(_SEVERAL_COLORED)[0]))
    return VerifyRules(
        hair_colors=parse_hair_colors(_read_required(_HAIR_COLORS)[0], nouns_text),
        several_colored=names_in(several, nouns_text),
        possessives=frozenset(normalize_name(w) for w in phrases["possessives"]),
        determiners=frozenset(normalize_name(w) for w in phrases["determiners"]),
        attribute_words=frozenset().union(*(parse_word_list(_read_required(f)[0]) for f in _ATTRIBUTE_WORDS)),
        kinds_not_said=parse_pair_set(_read_required(_KINDS_NOT_SAID)[0]),
        attribute_types=types,
        attribute_opposites=parse_pairs(opposites_text),
        single_valued=parse_word_list(single_text),
        pronouns=parse_word_list(_read_required(_PRONOUNS)[0]),
        template_suffixes=suffixes,
        opposites=opposites,
        symmetric=symmetric,
        colors=parse_word_list(color_text),
        unannotated_prone=prone,
        unannotated_prone_source=prone_source,
    )
