"""The run-time lexicon: number, synonyms, kinds and categories of Visual Genome / GQA nouns.

Why a precomputed table and not WordNet: the engine asks these questions millions of times, and
WordNet takes seconds to load and cannot be assumed present on a user's machine. Everything here is
read from plain data files in `rules/lexicon/` (produced once by `contrastgen lexicon build`, see
`contrastgen.language.lexicon_build`, plus hand-curated lists), so this module imports neither nltk nor
inflect nor spaCy and loads in milliseconds.

Why conservative: the engine proves answers from scene graphs. A wrong synonym or a wrong
"is a kind of" would produce a wrong gold answer, whereas a missing one only costs a perturbation.
So unknown words get no synonyms, no hyponyms and no category, and number is guessed by the
regular English suffix rules in `rules/lexicon/inflection_rules.tsv`.

Claims of absence are the exception, and err the other way: "no dish" must rule out every object
the word may denote, so `may_denote` widens the one-sense hyponyms by every WordNet sense
(`may_denote.tsv`), and `absence_decidable` refuses words too vague, or too unknown, to decide.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from contrastgen.errors import InputError
from contrastgen.resources import lexicon_dir, rules_file

DEFAULT_RULES_DIR = lexicon_dir()

# File names, shared with the build so both sides agree on them.
NOUNS_FILE = "nouns.tsv"
ALIASES_FILE = "aliases.tsv"
IRREGULAR_FILE = "irregular_plurals.tsv"
INFLECTION_RULES_FILE = "inflection_rules.tsv"
UNCOUNTABLE_FILE = "uncountable.txt"
PLURAL_ONLY_FILE = "plural_only.txt"
UNANNOTATED_FILE = "unannotated_prone.txt"
COLORS_FILE = "colors.txt"
MAY_DENOTE_FILE = "may_denote.tsv"
PERSON_FACETS_FILE = "person_facets.tsv"  # people nouns' gender and age: who may be whom
CANNOT_SAY = "?"  # may_denote.tsv's mark for a noun too vague to claim absent
RELATIONS_FILE = "relations.tsv"  # in the parent rules/ directory


def _default_rules_dir() -> Path:
    """`rules/lexicon`, wherever the `contrastgen.rules` package lives (checkout or wheel)."""
    return lexicon_dir()


@functools.lru_cache(maxsize=1 << 16)  # every lookup of every candidate name passes here
def normalize(word: str) -> str:
    """Lower-case and collapse whitespace: how every lexicon lookup compares words."""
    return " ".join(str(word).lower().split())


def iter_data_lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Yield (line number, tab-separated fields) of a data file, skipping blanks and `#` comments."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("lexicon data file not found (run `make lexicon`?)", path=str(path)) from None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        yield lineno, [f.strip() for f in line.split("\t")]


def read_word_list(path: Path) -> list[str]:
    """One entry per line (the first tab-separated field), normalised."""
    return [normalize(fields[0]) for _, fields in iter_data_lines(path)]


@dataclass(frozen=True)
class NounEntry:
    """One row of `nouns.tsv`: a vocabulary noun as the lexicon knows it."""

    name: str  # the singular (or plural-only) form
    plural: str
    canonical: str  # representative of the synonym set
    category: str | None
    kinds: tuple[str, ...]  # canonical names this noun is a kind of (transitively)
    synset: str | None  # the WordNet sense chosen at build time, for transparency


@dataclass(frozen=True)
class _SuffixRule:
    pattern: re.Pattern[str]
    replacement: str


def _read_suffix_rules(path: Path) -> tuple[list[_SuffixRule], list[_SuffixRule], list[re.Pattern[str]]]:
    """Read `inflection_rules.tsv`: (direction, regex, replacement) rows, first match wins."""
    to_plural: list[_SuffixRule] = []
    to_singular: list[_SuffixRule] = []
    invariant: list[re.Pattern[str]] = []
    for lineno, fields in iter_data_lines(path):
        if len(fields) < 2:
            raise InputError("expected direction<TAB>regex[<TAB>replacement]", path=str(path), record=f"line {lineno}")
        direction, regex = fields[0], fields[1]
        replacement = fields[2] if len(fields) > 2 else ""
        try:
            pattern = re.compile(regex)
        except re.error as exc:
            raise InputError(f"bad regex ({exc})", path=str(path), record=f"line {lineno}") from None
        if direction == "plural":
            to_plural.append(_SuffixRule(pattern, replacement))
        elif direction == "singular":
            to_singular.append(_SuffixRule(pattern, replacement))
        elif direction == "invariant":
            invariant.append(pattern)
        else:
            raise InputError(f"unknown direction {direction!r}", path=str(path), record=f"line {lineno}")
    return to_plural, to_singular, invariant


def read_pairs(path: Path, expected: str) -> list[tuple[str, str]]:
    """A two-column data file, normalised; a row with another shape names its line."""
    pairs = []
    for lineno, fields in iter_data_lines(path):
        if len(fields) != 2:
            raise InputError(f"expected {expected}", path=str(path), record=f"line {lineno}")
        pairs.append((normalize(fields[0]), normalize(fields[1])))
    return pairs


def _read_nouns(path: Path) -> dict[str, NounEntry]:
    entries: dict[str, NounEntry] = {}
    for lineno, fields in iter_data_lines(path):
        if len(fields) != 6:
            raise InputError("expected 6 tab-separated fields", path=str(path), record=f"line {lineno}")
        name, plural, canonical, category, kinds, synset = fields
        entries[name] = NounEntry(
            name=name,
            plural=plural,
            canonical=canonical,
            category=category if category != "-" else None,
            kinds=tuple(k for k in kinds.split(",") if k and k != "-"),
            synset=synset if synset != "-" else None,
        )
    return entries


class Lexicon:
    """Answers questions about nouns, colours and relations from the data in `rules/lexicon/`.

    Every method lower-cases and strips its input. Build one with `Lexicon.load()` (cached).
    """

    def __init__(self, rules_dir: Path) -> None:
        """Read every data file of `rules_dir` (and `../relations.tsv`); errors name file and line."""
        self.rules_dir = d = Path(rules_dir)
        self._entries = _read_nouns(d / NOUNS_FILE)
        self._to_plural, self._to_singular, self._invariant = _read_suffix_rules(d / INFLECTION_RULES_FILE)
        self._uncountable = frozenset(read_word_list(d / UNCOUNTABLE_FILE))
        self._plural_only = frozenset(read_word_list(d / PLURAL_ONLY_FILE))
        self.colors: frozenset[str] = frozenset(read_word_list(d / COLORS_FILE))

        # surface form -> entry name (the singular or plural-only name), and number tables
        self._name_of: dict[str, str] = {e.name: e.name for e in self._entries.values()}
        self._singular_to_plural = {e.name: e.plural for e in self._entries.values()}
        self._plural_to_singular: dict[str, str] = {}
        for e in self._entries.values():
            self._name_of.setdefault(e.plural, e.name)
            if e.plural != e.name:
                self._plural_to_singular.setdefault(e.plural, e.name)
        self._aliases: dict[str, list[str]] = defaultdict(list)  # name -> vocabulary aliases
        for alias, name in read_pairs(d / ALIASES_FILE, "alias<TAB>known name"):
            if name not in self._entries:
                raise InputError(f"alias of unknown noun {name!r}", path=str(d / ALIASES_FILE), record=alias)
            self._name_of.setdefault(alias, name)
            self._aliases[name].append(alias)
        for singular, plural in read_pairs(d / IRREGULAR_FILE, "singular<TAB>plural"):
            self._singular_to_plural.setdefault(singular, plural)
            self._plural_to_singular.setdefault(plural, singular)

        # synonym sets and (transitive) hyponyms, keyed by canonical name
        self._members: dict[str, list[str]] = defaultdict(list)
        hyponyms: dict[str, set[str]] = defaultdict(set)
        for e in self._entries.values():
            self._members[e.canonical].append(e.name)
            for k in e.kinds:
                if k != e.canonical:
                    hyponyms[k].add(e.canonical)
        self._hyponyms = {k: frozenset(v) for k, v in hyponyms.items()}
        # every kind a noun written so may be a kind of, over all the entries it may be ("glasses":
        # spectacles, a device, and drinking glasses, containers)
        broader: dict[str, set[str]] = defaultdict(set)
        readings: dict[str, set[str]] = defaultdict(set)
        for e in self._entries.values():
            for form in (e.name, e.plural):
                broader[form].update(e.kinds)
                readings[form].add(e.canonical)
        self._broader = {k: frozenset(v) for k, v in broader.items()}
        self._readings = {k: frozenset(v) for k, v in readings.items()}

        listed = {self.canonical(w) for w in read_word_list(d / UNANNOTATED_FILE)}
        self._unannotated = frozenset(listed.union(*(self._hyponyms.get(g, frozenset()) for g in listed)))
        self._loose, self._vague = self._read_may_denote(d / MAY_DENOTE_FILE)
        self._add_cross_classified_people(d / PERSON_FACETS_FILE)

        self._opposite: dict[str, str] = {}
        self._symmetric: set[str] = set()
        for rel, other in read_pairs(d.parent / RELATIONS_FILE, "relation<TAB>opposite|symmetric"):
            if other == "symmetric":
                self._symmetric.add(rel)
            else:
                self._opposite[rel] = other
        self.relations: frozenset[str] = frozenset(self._opposite) | frozenset(self._opposite.values()) | frozenset(self._symmetric)

    def _add_cross_classified_people(self, path: Path) -> None:
        """People cross-classify (person_facets.tsv): a catcher may be a man, a man a player, so
        each people noun may denote every other whose gender and age do not exclude it, and an
        absence claimed of one must rule out objects of all of those ("Are there catchers? no"
        is not shown while a man is there)."""
        self._people_facets: dict[str, tuple[str, str]] = {}
        if not path.is_file():
            return
        facets: dict[str, tuple[str, str]] = {}
        for _, fields in iter_data_lines(path):
            if len(fields) >= 3 and normalize(fields[0]) in self._entries:
                facets[self.canonical(fields[0])] = (fields[1].strip(), fields[2].strip())

        def compatible(a: tuple[str, str], b: tuple[str, str]) -> bool:
            return all(x == "-" or y == "-" or x == y for x, y in zip(a, b, strict=True))

        for word, mine in facets.items():
            others = {o for o, theirs in facets.items() if o != word and compatible(mine, theirs)}
            if others:
                self._loose[word] = self._loose.get(word, frozenset()) | frozenset(others)
        self._people_facets = facets

    def may_be_same_person(self, a: str, b: str) -> bool:
        """Might a `b` be the `a` the words say (two people nouns that cross-classify: "player",
        "catcher"; never "man", "woman")? False where either is no people noun."""
        ca, cb = self.canonical(a), self.canonical(b)
        return ca != cb and ca in self._people_facets and cb in self._may_denote_people(ca)

    @functools.cached_property
    def _person_kinds(self) -> frozenset[str]:
        """Every noun of the person category (nouns.tsv), groups of people ("crowd", "family")
        and people nouns of no known gender or age ("worker") among them, and the people nouns
        of person_facets.tsv."""
        return frozenset(c for c, e in self._entries.items() if e.canonical == c and e.category == "person") \
            | frozenset(self._people_facets)

    def is_person(self, word: str) -> bool:
        """Does the word name a person or a group of people?"""
        return self.canonical(word) in self._person_kinds

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - the lexicon lives as long as the process
    def people_who_may_be(self, word: str) -> frozenset[str]:
        """The people nouns an object may be listed under and still be, or hold, what the people
        noun `word` names: so no absence or uniqueness of `word` may be claimed while one is
        there. A people noun of person_facets.tsv may be what another that may denote it names
        ("man" may denote a boy: a man listed may be the boy), and what a group or a people noun
        of no known gender or age names ("crowd", "worker") may be anyone; a group or such a noun
        may be what any people noun names. Empty for any other noun."""
        c = self.canonical(word)
        kinds = self._person_kinds
        if c not in kinds:
            return frozenset()
        faceted = frozenset(self._people_facets)
        if c not in faceted:
            return kinds - {c}
        return frozenset(p for p in faceted if p != c and c in self.may_denote(p)) | (kinds - faceted)

    def _may_denote_people(self, canonical: str) -> frozenset[str]:
        return self._loose.get(canonical, frozenset()) & frozenset(self._people_facets)

    def _read_may_denote(self, path: Path) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
        """may_denote.tsv: canonical name -> the names that may also denote it, and the names
        marked `?` (too vague to claim absent). Every name must be a canonical noun of nouns.tsv,
        so a stale file fails here rather than silently widening nothing."""
        loose: dict[str, frozenset[str]] = {}
        vague: set[str] = set()
        canonicals = {e.canonical for e in self._entries.values()}
        for lineno, fields in iter_data_lines(path):
            if len(fields) != 2:
                raise InputError(f"expected name<TAB>names|{CANNOT_SAY}", path=str(path), record=f"line {lineno}")
            word = normalize(fields[0])
            names = [] if fields[1] == CANNOT_SAY else [normalize(n) for n in fields[1].split(",") if n.strip()]
            unknown = [n for n in (word, *names) if n not in canonicals]
            if unknown:
                raise InputError(f"not a canonical noun of {NOUNS_FILE}: {', '.join(unknown)}",
                                 path=str(path), record=f"line {lineno}")
            if fields[1] == CANNOT_SAY:
                vague.add(word)
            else:
                loose[word] = frozenset(names)
        return loose, frozenset(vague)

    # -- construction -------------------------------------------------------------------------

    @staticmethod
    def load(rules_dir: str | Path | None = None) -> Lexicon:
        """The lexicon in `rules_dir` (default: the project's `rules/lexicon`), loaded once per directory."""
        return _load(Path(rules_dir).resolve() if rules_dir is not None else _default_rules_dir().resolve())

    # -- number -------------------------------------------------------------------------------

    def _entry_name(self, w: str) -> str | None:
        return self._name_of.get(w)

    def _split_head(self, w: str) -> tuple[str, str]:
        """('traffic ', 'lights'): number is carried by the last word of a compound."""
        i = w.rfind(" ")
        return (w[: i + 1], w[i + 1 :]) if i >= 0 else ("", w)

    def _rule_singular(self, w: str) -> str:
        if any(p.search(w) for p in self._invariant):
            return w
        for rule in self._to_singular:
            if rule.pattern.search(w):
                return rule.pattern.sub(rule.replacement, w, count=1)
        return w

    def _rule_plural(self, w: str) -> str:
        if any(p.search(w) for p in self._invariant):
            return w
        for rule in self._to_plural:
            if rule.pattern.search(w):
                return rule.pattern.sub(rule.replacement, w, count=1)
        return w + "s"

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - the lexicon lives as long as the process
    def singular(self, word: str) -> str:
        """Singular form: "men"->"man", "buses"->"bus"; plural-only and uncountable words unchanged."""
        w = normalize(word)
        if w in self._plural_only or w in self._uncountable:
            return w
        name = self._entry_name(w)
        if name is not None:
            return name
        if w in self._plural_to_singular:
            return self._plural_to_singular[w]
        if w in self._singular_to_plural:
            return w
        prefix, head = self._split_head(w)
        if prefix:
            return prefix + self.singular(head)
        return self._rule_singular(w)

    @functools.lru_cache(maxsize=65536)  # noqa: B019
    def plural(self, word: str) -> str:
        """Plural form: "man"->"men"; uncountable and plural-only words unchanged."""
        w = normalize(word)
        if not w or w in self._plural_only or w in self._uncountable:
            return w
        name = self._entry_name(w)
        if name is not None:
            return self._entries[name].plural if name in self._entries else name
        if w in self._singular_to_plural:
            return self._singular_to_plural[w]
        if w in self._plural_to_singular:
            return w
        prefix, head = self._split_head(w)
        if prefix:
            return prefix + self.plural(head)
        if self._rule_singular(w) != w:  # already plural by the suffix rules
            return w
        return self._rule_plural(w)

    def is_plural(self, word: str) -> bool:
        """Grammatical number of the surface word: "jeans" and "men" are plural, "bus" is not."""
        w = normalize(word)
        if w in self._plural_only:
            return True
        if w in self._uncountable:
            return False
        if w not in self._name_of and " " in w:  # "blue jeans": the head carries the number
            return self.is_plural(self._split_head(w)[1])
        return self.singular(w) != w

    # -- meaning ------------------------------------------------------------------------------

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - hot path of generation; lives with the process
    def _entry(self, word: str) -> NounEntry | None:
        name = self._entry_name(normalize(word))
        if name is None:
            name = self._entry_name(self.singular(word))
        return self._entries.get(name) if name is not None else None

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - hot path of generation; lives with the process
    def canonical(self, word: str) -> str:
        """One singular representative per synonym set: "motorbikes"->"motorcycle"."""
        e = self._entry(word)
        return e.canonical if e is not None else self.singular(word)

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - hot path of generation; lives with the process
    def forms(self, word: str) -> frozenset[str]:
        """Every surface name of the same kind: singular and plural of each synonym, and aliases."""
        w = normalize(word)
        e = self._entry(w)
        if e is None:
            return frozenset({w, self.singular(w), self.plural(w)})
        out: set[str] = set()
        for name in self._members[e.canonical]:
            member = self._entries[name]
            out.update((member.name, member.plural))
            out.update(self._aliases.get(name, ()))
        return frozenset(out)

    def hyponyms(self, word: str) -> frozenset[str]:
        """Canonical vocabulary names that are kinds of `word` ("animal" -> dog, cat, ...)."""
        return self._hyponyms.get(self.canonical(word), frozenset())

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - hot path of generation; lives with the process
    def names_of_kinds(self, word: str) -> tuple[frozenset[str], frozenset[str]]:
        """The kinds `word` denotes (its own and every kind of it), and every surface name of them
        that reads back as one of them ("glasses" is a form of "glass" but names spectacles):
        what a claim that `word` denotes one object must rule out, asked once per candidate name."""
        kinds = frozenset({self.canonical(word)} | self.hyponyms(word))
        names = frozenset(n.lower() for k in kinds for n in self.forms(k) if self.canonical(n) in kinds)
        return kinds, names

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - hot path of generation; lives with the process
    def is_a(self, specific: str, general: str) -> bool:
        """True if `specific` names the same kind as `general` or a kind of it."""
        s, g = self.canonical(specific), self.canonical(general)
        return s == g or s in self._hyponyms.get(g, frozenset())

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - hot path of generation; lives with the process
    def may_denote(self, word: str) -> frozenset[str]:
        """Canonical names of every kind that `word` may denote: itself, its strict hyponyms, and
        the nouns with SOME sense under some sense of `word` ("dish" -> bowl, plate, pizza, ...).

        Why looser than `hyponyms`: a "no" that rests on absence ("Are there any dishes? -> no")
        must rule out every object the word can denote, not only its chosen sense's kinds; a bowl
        filed by the build as a container may still be the dish the question means. Incomplete
        where `absence_decidable` is False (no claim of absence may rest on it then).
        """
        c = self.canonical(word)
        return frozenset({c}) | self._hyponyms.get(c, frozenset()) | self._loose.get(c, frozenset())

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - hot path of generation; lives with the process
    def absence_decidable(self, word: str) -> bool:
        """Can the lexicon say which objects would make `word` present? False for unknown words
        (nothing is known of their kinds) and for words marked too vague in may_denote.tsv
        ("thing", "object": WordNet's kinds of them cannot be trusted to be complete)."""
        return self.is_known(word) and self.canonical(word) not in self._vague

    def category(self, word: str) -> str | None:
        """A coarse category ("animal", "furniture", ...) for picking similar distractors."""
        e = self._entry(word)
        if e is None:
            return None
        canon = self._entries.get(e.canonical, e)
        return canon.category if canon.category is not None else e.category

    def kinds(self, word: str) -> tuple[str, ...]:
        """Canonical vocabulary names that `word` is a kind of (its hypernyms in the vocabulary)."""
        e = self._entry(word)
        return e.kinds if e is not None else ()

    def broader(self, word: str) -> frozenset[str]:
        """Canonical names of the kinds any noun written as `word` is a kind of, whichever entry
        the word is ("glasses" is a device as spectacles and a container as drinking glasses):
        an object listed under one of them may be what the word names."""
        w = normalize(word)
        return self._broader.get(w, frozenset()) | frozenset(self.kinds(w))

    def readings(self, word: str) -> frozenset[str]:
        """Canonical names of every noun written as `word` ("glasses": spectacles, and the plural
        of glass): what an object listed under that name may be."""
        w = normalize(word)
        return self._readings.get(w, frozenset()) | {self.canonical(w)}

    def synonyms(self, word: str) -> frozenset[str]:
        """Singular vocabulary names with the same meaning as `word` (itself included when known)."""
        e = self._entry(word)
        return frozenset(self._members[e.canonical]) if e is not None else frozenset()

    def synset(self, word: str) -> str | None:
        """The WordNet sense the build chose for `word` (for inspection only)."""
        e = self._entry(word)
        return e.synset if e is not None else None

    def _head_if_unknown(self, w: str) -> str:
        """The head noun of a compound the lexicon does not know ("blue jeans" -> "jeans")."""
        return self._split_head(w)[1] if w not in self._name_of and " " in w else w

    def is_uncountable(self, word: str) -> bool:
        w = self._head_if_unknown(normalize(word))
        return w in self._uncountable or self.singular(w) in self._uncountable

    def is_plural_only(self, word: str) -> bool:
        w = self._head_if_unknown(normalize(word))
        return w in self._plural_only or self.singular(w) in self._plural_only

    def is_unannotated_prone(self, word: str) -> bool:
        """Objects scene graphs often leave out (sky, hands, shirts): never claim them absent."""
        return self.canonical(word) in self._unannotated

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - hot path of generation; lives with the process
    def is_known(self, word: str) -> bool:
        """In the vocabulary, in any form."""
        w = normalize(word)
        return w in self._name_of or self.singular(w) in self._name_of

    # -- colours and relations ----------------------------------------------------------------

    def is_color(self, attr: str) -> bool:
        return normalize(attr) in self.colors

    def opposite_relation(self, rel: str) -> str | None:
        return self._opposite.get(normalize(rel))

    def is_symmetric_relation(self, rel: str) -> bool:
        return normalize(rel) in self._symmetric


@functools.cache
def _load(rules_dir: Path) -> Lexicon:
    return Lexicon(rules_dir)


@functools.cache
def attribute_opposites() -> dict[str, frozenset[str]]:
    """rules/attribute_opposites.tsv, both ways: attribute -> the attributes it excludes."""
    out: dict[str, set[str]] = {}
    for _, cols in iter_data_lines(rules_file("attribute_opposites.tsv")):
        if len(cols) == 2 and all(c.strip() for c in cols):
            a, b = normalize(cols[0]), normalize(cols[1])
            out.setdefault(a, set()).add(b)
            out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}
