"""The verifier's own reading of rules/lexicon/nouns.tsv: which graph names a noun can denote.

Why its own reader: the word check must not share code with the generator's lexicon, or a bug
in one expansion (a dropped hyponym, a wrong plural) would make generator and verifier agree on
the same wrong denotation. The table is plain tab-separated text; this reads it in a few lines.

Two denotations: `strict` (the noun's forms, synonyms and kinds below it in the table, as the
generator's definite references use), and `loose` (also every name that *may* be a kind of it,
from may_denote.tsv, when that file is present): a "no" that rests on absence must hold for the
loose one, since a reader may take a bowl for a dish.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from contrastgen.resources import rules_resource
from contrastgen.verify.rules import normalize_name

_NOUNS = ("lexicon", "nouns.tsv")
_MAY_DENOTE = ("lexicon", "may_denote.tsv")
_ALIASES = ("lexicon", "aliases.tsv")
_PERSON_FACETS = ("lexicon", "person_facets.tsv")


@dataclass(frozen=True, eq=False)  # hashed by identity: one table per process, used as a cache key
class NounTable:
    by_name: dict[str, str]  # singular name -> canonical
    by_plural: dict[str, str]  # plural -> canonical (a name wins over a plural: "glasses")
    strict: dict[str, frozenset[str]]  # canonical -> surface names that denote it
    loose: dict[str, frozenset[str]]  # canonical -> surface names that may denote it
    undecidable: frozenset[str]  # canonicals whose absence the table cannot decide
    loose_source: str | None  # the may-denote file read, or None

    def canonical(self, word: str) -> str | None:
        w = normalize_name(word)
        return self.by_name.get(w) or self.by_plural.get(w)

    def __hash__(self) -> int:
        return id(self)

    def is_noun(self, word: str) -> bool:
        return self.canonical(word) is not None

    def names(self, word: str, *, loose: bool = False) -> frozenset[str]:
        """Surface names the word denotes (itself included, so unknown graph names still work)."""
        w = normalize_name(word)
        c = self.canonical(w)
        out = {w}
        if c is not None:
            out |= self.strict.get(c, frozenset())
            if loose:
                out |= self.loose.get(c, frozenset())
        return frozenset(out)

    def absence_decidable(self, word: str) -> bool:
        c = self.canonical(word)
        return c is not None and c not in self.undecidable


def _read(parts: tuple[str, ...]) -> str | None:
    node = rules_resource(*parts)
    return node.read_text(encoding="utf-8") if node.is_file() else None


def _rows(text: str) -> list[list[str]]:
    """Tab-separated columns of the non-comment lines, a trailing '# comment' removed."""
    return [[c.strip().lower() for c in raw.split("#", 1)[0].split("\t")] for raw in text.splitlines()
            if raw.strip() and not raw.startswith("#")]


def parse_nouns(nouns_tsv: str, may_denote_tsv: str | None, aliases_tsv: str | None = None,
                person_facets_tsv: str | None = None) -> NounTable:
    rows, by_name = _noun_rows(nouns_tsv, aliases_tsv)
    by_plural, strict = _strict_names(rows, by_name)
    forms_of: dict[str, set[str]] = {}
    for name, c in by_name.items():
        forms_of.setdefault(c, set()).add(name)
    for plural, c in by_plural.items():
        forms_of.setdefault(c, set()).add(plural)
    loose, undecidable = _may_denote(may_denote_tsv or "", by_name, by_plural, forms_of)
    _people_may_denote(person_facets_tsv or "", by_name, forms_of, loose)
    return NounTable(by_name, by_plural, {k: frozenset(v) for k, v in strict.items()},
                     {k: frozenset(v) for k, v in loose.items()}, frozenset(undecidable),
                     "rules/" + "/".join(_MAY_DENOTE) if may_denote_tsv is not None else None)


def _noun_rows(nouns_tsv: str, aliases_tsv: str | None) -> tuple[list[list[str]], dict[str, str]]:
    """nouns.tsv's rows (name, plural, canonical, -, kinds), each alias a row of its own, and the
    canonical of every name."""
    rows = [cols for cols in _rows(nouns_tsv) if len(cols) >= 5]
    by_name: dict[str, str] = {cols[0]: cols[2] for cols in rows}
    # "handlebar" is another form of "handlebars": a name of its kind, as nouns.tsv's own forms are,
    # and of every kind that noun is a kind of ("pajama", like "pajamas", is a kind of pants)
    kinds_of = {cols[0]: cols[4] for cols in rows}
    for cols in _rows(aliases_tsv or ""):
        if len(cols) >= 2 and cols[1] in by_name and cols[0] not in by_name:
            rows.append([cols[0], cols[0], by_name[cols[1]], "-", kinds_of.get(cols[1], "-")])
            by_name[cols[0]] = by_name[cols[1]]
    return rows, by_name


def _strict_names(rows: list[list[str]], by_name: dict[str, str]) -> tuple[dict[str, str], dict[str, set[str]]]:
    """The canonical of every plural, and the names that denote each canonical: its forms and
    those of every kind below it."""
    by_plural: dict[str, str] = {}
    strict: dict[str, set[str]] = {}
    for cols in rows:
        name, plural, canonical, kinds = cols[0], cols[1], cols[2], cols[4]
        by_plural.setdefault(plural, canonical)
        # "glasses" is glass's plural but also a noun of its own (spectacles): not a form of glass
        forms = {name} | ({plural} if by_name.get(plural, canonical) == canonical else set())
        for target in {canonical} | ({k.strip() for k in kinds.split(",")} if kinds != "-" else set()):
            strict.setdefault(target, set()).update(forms)
    return by_plural, strict


def _may_denote(text: str, by_name: dict[str, str], by_plural: dict[str, str],
                forms_of: dict[str, set[str]]) -> tuple[dict[str, set[str]], set[str]]:
    """may_denote.tsv: the names each canonical may denote, and those whose absence it cannot
    decide ("?")."""
    loose: dict[str, set[str]] = {}
    undecidable: set[str] = set()
    for cols in _rows(text):
        if len(cols) < 2:
            continue
        c = by_name.get(cols[0]) or by_plural.get(cols[0]) or cols[0]
        if cols[1] == "?":
            undecidable.add(c)
            continue
        for other in (n.strip() for n in cols[1].split(",") if n.strip()):
            oc = by_name.get(other) or by_plural.get(other)
            loose.setdefault(c, set()).update(forms_of.get(oc, {other}) if oc else {other})
    return loose, undecidable


def _people_may_denote(text: str, by_name: dict[str, str], forms_of: dict[str, set[str]],
                       loose: dict[str, set[str]]) -> None:
    """People cross-classify (person_facets.tsv): a people noun may denote every other whose
    gender and age do not exclude it ("catchers" may be the man in the picture; "women" never)."""
    facets = {cols[0]: (cols[1], cols[2]) for cols in _rows(text) if len(cols) >= 3}
    for word, mine in facets.items():
        c = by_name.get(word) or word
        for other, theirs in facets.items():
            if other != word and all(x == "-" or y == "-" or x == y for x, y in zip(mine, theirs, strict=True)):
                oc = by_name.get(other) or other
                loose.setdefault(c, set()).update(forms_of.get(oc, {other}))


@functools.lru_cache(maxsize=1)
def load_nouns() -> NounTable:
    nouns = _read(_NOUNS)
    if nouns is None:
        from contrastgen.errors import InputError
        raise InputError("rules file missing (the verifier reads it)", path="rules/" + "/".join(_NOUNS))
    return parse_nouns(nouns, _read(_MAY_DENOTE), _read(_ALIASES), _read(_PERSON_FACETS))
