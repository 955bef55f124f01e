"""Derive the noun lexicon in `rules/lexicon/` from WordNet, once, at development time.

Why a build step: WordNet takes seconds to load and is not on every user's machine, while the
engine needs a few thousand facts about a fixed vocabulary. So this module (the only one that
imports nltk, inflect and spaCy's lookup tables) turns the Visual Genome vocabulary plus the
hand-curated lists into plain TSV files that `contrastgen.language.lexicon` reads at run time.

Why conservative: for each vocabulary noun we keep ONE WordNet sense (a curated override from
`senses.tsv`, else the most frequent sense that denotes something visible), and two nouns are
synonyms only when they share that sense (plus the hand-written pairs of `synonyms.tsv`). A noun
is a kind of another only when the other's sense is a hypernym of its sense. A wrong link would
yield a wrong proven answer; a missing one only a missing perturbation.

Outputs (each with a header saying how to regenerate it):
- `nouns.tsv`: name, plural, canonical, category, kinds, chosen synset, one row per noun;
- `aliases.tsv`: vocabulary entries that are another form of a noun ("men" -> "man");
- `irregular_plurals.tsv`: WordNet's irregular plurals that the suffix rules get wrong;
- `may_denote.tsv`: the LOOSE "may be a kind of" relation for claims of absence (below).
(`contrastgen lexicon build` also regenerates the phraser's `articles.tsv` over the same forms.)

Why a second, loose relation: the one-sense rule is right for proving what IS there, wrong for
proving what is NOT. "Are there any dishes? -> no" is false when a bowl is there, though the bowl's
chosen sense is a container: the word "bowl" may denote a dish. So `may_denote.tsv` records, per
noun A, the nouns B with ANY sense under ANY sense of A (the same edited hypernym graph, people
words only in their person senses, plus the loose-only links of `may_denote_edits.tsv`), and marks
nouns whose loose set is too large to trust as "cannot say".

Curated inputs, beside the outputs: senses, synonyms, people, plural_only, uncountable,
not_nouns, respellings, extra_nouns, kinds, compound_modifiers, categories, hypernym_edits,
may_denote_edits, inflection_rules (each file's header says what it is for).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contrastgen.errors import InputError
from contrastgen.jsonio import write_text
from contrastgen.language.lexicon import (
    ALIASES_FILE,
    CANNOT_SAY,
    INFLECTION_RULES_FILE,
    IRREGULAR_FILE,
    MAY_DENOTE_FILE,
    NOUNS_FILE,
    PLURAL_ONLY_FILE,
    UNCOUNTABLE_FILE,
    iter_data_lines,
    normalize,
    read_pairs,
    read_word_list,
)

OBJECTS_VOCAB = "objects_vocab.txt"
SENSES_FILE = "senses.tsv"
SYNONYMS_FILE = "synonyms.tsv"
CATEGORIES_FILE = "categories.tsv"
EXTRA_NOUNS_FILE = "extra_nouns.tsv"
PEOPLE_FILE = "people.txt"
NOT_NOUNS_FILE = "not_nouns.txt"
RESPELLINGS_FILE = "respellings.tsv"
KINDS_FILE = "kinds.tsv"
HYPERNYM_EDITS_FILE = "hypernym_edits.tsv"
COMPOUND_MODIFIERS_FILE = "compound_modifiers.txt"
MAY_DENOTE_EDITS_FILE = "may_denote_edits.tsv"
GENERATED_FILES = (NOUNS_FILE, ALIASES_FILE, IRREGULAR_FILE, MAY_DENOTE_FILE)

# A noun that more than this many vocabulary nouns may denote BEYOND its strict kinds is marked
# "cannot say" in may_denote.tsv: its WordNet senses sit so high ("object", "thing", "unit",
# "part") that nearly anything may be one, and WordNet's filing of everyday objects under them is
# too patchy to prove absence from. 100 is about 6% of the vocabulary; below it are the broad but
# well-filed kinds that questions use ("food" adds 49, "animal" 36, "container" 30).
VAGUE_ABOVE = 100

# Lexicographer files whose senses denote things one can see in a photograph; a sense outside them
# ("monitor" the proctor is noun.person, fine; "plate" the home plate is noun.artifact, which is
# why senses.tsv exists) is chosen only when a word has no visible sense at all.
_VISIBLE_LEXNAMES = (
    "noun.artifact", "noun.animal", "noun.person", "noun.plant", "noun.food", "noun.body",
    "noun.object", "noun.substance", "noun.location", "noun.phenomenon", "noun.shape",
)

# A word whose first sense is of one of these kinds keeps it.
_FIRST_SENSE_LEXNAMES = ("noun.Tops", "noun.animal", "noun.artifact", "noun.food", "noun.plant", "noun.body")

# Lexicographer files of abstractions that no annotated object is: the loose relation ignores such
# senses ("dish" and "bag" share only "cup of tea", an activity one likes; "candle" and "cd" only the
# candela, a unit). States, attributes, events and processes stay: the build chose one of them for
# "shadow", "spot" and "wave", and "fire" and "flame" are processes.
_ABSTRACT_LEXNAMES = (
    "noun.act", "noun.cognition", "noun.feeling", "noun.motive", "noun.quantity",
    "noun.relation", "noun.time",
)

# Senses a people word (people.txt) may take, in the strict and in the loose relation alike.
_PERSON_LEXNAMES = ("noun.person", "noun.group", "noun.Tops")

_REGEN = "Regenerate: `make lexicon` (contrastgen lexicon build --vocab VG_VOCAB_DIR --wordnet NLTK_DATA_DIR)."


@dataclass
class Noun:
    """A noun being built: its forms, chosen sense and what the build derived from it."""

    name: str
    plural: str
    synset: Any = None  # nltk Synset or None
    canonical: str = ""
    category: str | None = None
    kinds: set[str] = field(default_factory=set)


def find_wordnet(search_path: list[str] | None = None) -> Path:
    """The `corpora/wordnet` directory on nltk's search path (NLTK_DATA first), or an InputError."""
    if search_path is None:
        import nltk.data

        env = [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
        search_path = env + [p for p in nltk.data.path if p not in env]
    for root in search_path:
        candidate = Path(root) / "corpora" / "wordnet"
        if (candidate / "data.noun").is_file():
            return candidate
    raise InputError(
        "WordNet not found: set NLTK_DATA to a directory holding corpora/wordnet "
        "(contrastgen lexicon build --wordnet DIR), or run python -m nltk.downloader wordnet",
        path=os.environ.get("NLTK_DATA") or None,
    )


def load_wordnet(wordnet_dir: Path) -> Any:
    """A WordNet reader over `wordnet_dir` (nltk's reader, without nltk's lazy global loader)."""
    import warnings

    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    # nltk only opens corpora under its data path (its path-security check); register the root
    root = str(Path(wordnet_dir).resolve().parent.parent)
    if root not in nltk.data.path:
        nltk.data.path.append(root)

    with warnings.catch_warnings():  # "multilingual functions are not available": not needed here
        warnings.simplefilter("ignore", UserWarning)
        return WordNetCorpusReader(str(wordnet_dir), None)


class Inflector:
    """Singular/plural at build time: spaCy's lookup lemmatizer checked against inflect."""

    def __init__(self, plural_only: set[str], uncountable: set[str], wordnet: Any,
                 rules_file: Path | None = None) -> None:
        import inflect
        from spacy.lookups import load_lookups

        self._engine = inflect.engine()
        self._lemmas = load_lookups("en", ["lemma_lookup"]).get_table("lemma_lookup")
        self._plural_only = plural_only
        self._uncountable = uncountable
        self._wn = wordnet
        self._rules_file = rules_file

    def _is_noun(self, word: str) -> bool:
        return bool(self._wn.synsets(word.replace(" ", "_"), pos="n"))

    def plural(self, word: str) -> str:
        if word in self._plural_only or word in self._uncountable or not re.search("[a-z]", word):
            return word
        plural = self._engine.plural_noun(word) or word
        if word.endswith("man") and plural == word + "s":
            # inflect says "gentlemans"; the curated suffix rules (with human, ottoman, ... as
            # exceptions) say "gentlemen"
            plural = self._rule_plural(word)
        return plural

    def _rule_plural(self, word: str) -> str:
        from contrastgen.language.lexicon import _read_suffix_rules

        to_plural, _, invariant = _read_suffix_rules(self._rules_file)
        if any(p.search(word) for p in invariant):
            return word
        for r in to_plural:
            if r.pattern.search(word):
                return r.pattern.sub(r.replacement, word, count=1)
        return word + "s"

    def singular(self, word: str) -> str:
        """The singular of a vocabulary word; the word itself when it is already singular.

        spaCy's lookup lemma is trusted only when inflect pluralises it back to the word, and
        inflect's own guess only when WordNet knows it as a noun ("bus" must not become "bu").
        """
        if word in self._plural_only or word in self._uncountable:
            return word
        prefix, _, head = word.rpartition(" ")
        prefix = prefix + " " if prefix else ""
        lemma = self._lemmas.get(head)
        if lemma == head:
            return word
        if lemma and self._engine.plural_noun(lemma) == head:
            return prefix + lemma
        guess = self._engine.singular_noun(head)
        if guess and guess != head and self._engine.plural_noun(guess) == head and self._is_noun(guess):
            return prefix + guess
        return word


def _read_vocab(vocab_dir: Path) -> list[str]:
    path = vocab_dir / OBJECTS_VOCAB
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("object vocabulary not found (pass --vocab DIR)", path=str(path)) from None
    words: list[str] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        w = " ".join(raw.lower().split())
        if not w:
            continue
        if "\t" in raw or "," in raw:
            raise InputError("expected one object name per line", path=str(path), record=f"line {lineno}")
        words.append(w)
    if not words:
        raise InputError("vocabulary is empty", path=str(path))
    return words


def _synset(wn: Any, name: str, path: Path, lineno: int) -> Any:
    try:
        return wn.synset(name)
    except Exception:  # nltk raises WordNetError or ValueError for unknown / malformed names
        raise InputError(f"unknown WordNet synset {name!r}", path=str(path), record=f"line {lineno}") from None


def _read_senses(wn: Any, curated: Path) -> dict[str, Any]:
    """senses.tsv: word -> synset, or None for "-" (keep the word unlinked)."""
    path = curated / SENSES_FILE
    out: dict[str, Any] = {}
    for lineno, fields in iter_data_lines(path):
        if len(fields) != 2:
            raise InputError("expected word<TAB>synset|-", path=str(path), record=f"line {lineno}")
        word = " ".join(fields[0].lower().split())
        if word in out:
            raise InputError(f"{word!r} is listed twice", path=str(path), record=f"line {lineno}")
        out[word] = None if fields[1] == "-" else _synset(wn, fields[1], path, lineno)
    return out


def _read_categories(wn: Any, curated: Path) -> list[tuple[str, set[Any]]]:
    path = curated / CATEGORIES_FILE
    rows: list[tuple[str, set[Any]]] = []
    for lineno, fields in iter_data_lines(path):
        if len(fields) != 2:
            raise InputError("expected category<TAB>synsets", path=str(path), record=f"line {lineno}")
        rows.append((fields[0], {_synset(wn, s, path, lineno) for s in fields[1].split()}))
    return rows


def _read_synonyms(curated: Path) -> list[list[str]]:
    """synonyms.tsv: canonical <TAB> comma-separated synonyms, hand-written."""
    path = curated / SYNONYMS_FILE
    groups: list[list[str]] = []
    for lineno, fields in iter_data_lines(path):
        if len(fields) != 2:
            raise InputError("expected canonical<TAB>synonym, synonym", path=str(path), record=f"line {lineno}")
        members = [" ".join(w.lower().split()) for w in fields[1].split(",") if w.strip()]
        groups.append([" ".join(fields[0].lower().split()), *members])
    return groups


def _choose_sense(wn: Any, word: str, is_person_word: bool) -> Any:
    """The sense of `word` the vocabulary most likely means, or None.

    People words (people.txt) take their first sense that denotes a person or a group of people.
    Any other word takes its first sense if that denotes a visible thing, else its first visible
    sense, but never a person sense: WordNet's person senses of object words ("mug", "screw",
    "poster") would make a mug a kind of person.
    """
    senses = wn.synsets(word.replace(" ", "_"), pos="n")
    if is_person_word:
        for s in senses:
            if s.lexname() in _PERSON_LEXNAMES:
                return s
        return None
    senses = [s for s in senses if s.lexname() != "noun.person"]
    if senses and senses[0].lexname() == "noun.plant":
        # "banana", "broccoli", "pumpkin": a photographed plant that is also food is the food
        for s in senses:
            if s.lexname() == "noun.food":
                return s
    if senses and senses[0].lexname() in _FIRST_SENSE_LEXNAMES:
        return senses[0]
    for s in senses:
        if s.lexname() in _VISIBLE_LEXNAMES:
            return s
    for s in senses:  # signs, logos, coins: visible only as the things that carry them
        if s.lexname() in ("noun.communication", "noun.possession"):
            return s
    return None


@dataclass(frozen=True)
class HypernymEdits:
    """Curated corrections to WordNet's hypernym links (hypernym_edits.tsv), by synset name."""

    cut: frozenset[tuple[str, str]]
    add: dict[str, tuple[Any, ...]]

    def up(self, s: Any) -> list[Any]:
        links = [h for h in s.hypernyms() + s.instance_hypernyms() if (s.name(), h.name()) not in self.cut]
        return links + list(self.add.get(s.name(), ()))

    def closure(self, synset: Any) -> set[Any]:
        """The sense and all its hypernyms under the edited graph."""
        return set(synset.closure(self.up)) | {synset}

    def with_links(self, add: dict[str, tuple[Any, ...]]) -> HypernymEdits:
        """These edits plus more added links (the loose-only ones of may_denote_edits.tsv)."""
        merged = {k: tuple(v) for k, v in self.add.items()}
        for child, parents in add.items():
            merged[child] = merged.get(child, ()) + tuple(parents)
        return HypernymEdits(self.cut, merged)


def _read_hypernym_edits(wn: Any, curated: Path) -> HypernymEdits:
    path = curated / HYPERNYM_EDITS_FILE
    cut: set[tuple[str, str]] = set()
    add: dict[str, list[Any]] = defaultdict(list)
    for lineno, fields in iter_data_lines(path):
        if len(fields) != 3 or fields[0] not in ("cut", "add"):
            raise InputError("expected cut|add<TAB>synset<TAB>hypernym synset", path=str(path), record=f"line {lineno}")
        child, parent = (_synset(wn, f, path, lineno) for f in fields[1:])
        linked = parent in child.hypernyms() + child.instance_hypernyms()
        if fields[0] == "cut":
            if not linked:
                raise InputError(f"{parent.name()} is not a hypernym of {child.name()}", path=str(path), record=f"line {lineno}")
            cut.add((child.name(), parent.name()))
        else:
            add[child.name()].append(parent)
    return HypernymEdits(frozenset(cut), {k: tuple(v) for k, v in add.items()})


@dataclass(frozen=True)
class LooseEdits:
    """may_denote_edits.tsv: links only the loose relation follows, and nouns it never decides."""

    add: dict[str, tuple[Any, ...]]  # synset name -> extra hypernyms, as in HypernymEdits
    vague: frozenset[str]  # nouns marked "cannot say" whatever their loose set


def _read_loose_edits(wn: Any, curated: Path) -> LooseEdits:
    path = curated / MAY_DENOTE_EDITS_FILE
    add: dict[str, list[Any]] = defaultdict(list)
    vague: set[str] = set()
    for lineno, fields in iter_data_lines(path):
        if fields[0] == "add" and len(fields) == 3:
            child, parent = (_synset(wn, f, path, lineno) for f in fields[1:])
            add[child.name()].append(parent)
        elif fields[0] == "vague" and len(fields) == 2:
            vague.add(normalize(fields[1]))
        else:
            raise InputError("expected add<TAB>synset<TAB>hypernym synset, or vague<TAB>noun",
                             path=str(path), record=f"line {lineno}")
    return LooseEdits({k: tuple(v) for k, v in add.items()}, frozenset(vague))


@dataclass
class Curated:
    """The hand-curated inputs of the build (every file in rules/lexicon/ that is not generated)."""

    directory: Path
    plural_only: set[str]
    uncountable: set[str]
    respellings: dict[str, str]  # vocabulary entry -> the word it stands for ("pant" -> "pants")
    not_nouns: set[str]
    extra_nouns: list[str]
    people: set[str]
    senses: dict[str, Any]  # word -> Synset, or None to keep the word unlinked
    synonyms: list[list[str]]  # canonical first
    kinds: dict[str, str]  # noun -> what it is a kind of, for nouns without a usable sense
    modifiers: set[str]
    categories: list[tuple[str, set[Any]]]
    edits: HypernymEdits
    loose: LooseEdits

    @classmethod
    def read(cls, wn: Any, d: Path) -> Curated:
        plural_only_rows = [fields for _, fields in iter_data_lines(d / PLURAL_ONLY_FILE)]
        respellings = {normalize(f[1]): normalize(f[0]) for f in plural_only_rows if len(f) > 1}
        respellings.update(read_pairs(d / RESPELLINGS_FILE, "vocabulary entry<TAB>word"))
        return cls(
            directory=d,
            plural_only={normalize(f[0]) for f in plural_only_rows},
            uncountable=set(read_word_list(d / UNCOUNTABLE_FILE)),
            respellings=respellings,
            not_nouns=set(read_word_list(d / NOT_NOUNS_FILE)),
            extra_nouns=read_word_list(d / EXTRA_NOUNS_FILE),
            people=set(read_word_list(d / PEOPLE_FILE)),
            senses=_read_senses(wn, d),
            synonyms=_read_synonyms(d),
            kinds=dict(read_pairs(d / KINDS_FILE, "noun<TAB>kind")),
            modifiers=set(read_word_list(d / COMPOUND_MODIFIERS_FILE)),
            categories=_read_categories(wn, d),
            edits=_read_hypernym_edits(wn, d),
            loose=_read_loose_edits(wn, d),
        )


def _collect_nouns(words: list[str], inflector: Inflector, respellings: dict[str, str]) -> tuple[dict[str, Noun], dict[str, str]]:
    """Group vocabulary entries into nouns (by singular) and aliases (their other spellings)."""
    nouns: dict[str, Noun] = {}
    aliases: dict[str, str] = {}
    for w in words:
        name = inflector.singular(respellings.get(w, w))
        if name not in nouns:
            nouns[name] = Noun(name=name, plural=inflector.plural(name))
        if w != name:
            aliases[w] = name
    # an alias that is just the plural of its noun is redundant: forms() already has it
    aliases = {a: n for a, n in aliases.items() if nouns[n].plural != a}
    return nouns, aliases


def _assign_senses(nouns: dict[str, Noun], wn: Any, cur: Curated) -> None:
    """One WordNet sense per noun: curated, else chosen, else that of its joined spelling."""
    for noun in nouns.values():
        if noun.name in cur.senses:
            noun.synset = cur.senses[noun.name]
            continue
        noun.synset = _choose_sense(wn, noun.name, noun.name in cur.people)
        if noun.synset is None and " " in noun.name:
            # "arm rest", "sun glasses": a spaced spelling of a word WordNet knows
            for variant in (noun.name.replace(" ", ""), noun.name.replace(" ", "-")):
                if variant not in cur.senses and not wn.lemmas(variant, pos="n"):
                    continue  # only an exact WordNet word: "letter s" is not "letters"
                sense = cur.senses[variant] if variant in cur.senses else _choose_sense(wn, variant, variant in cur.people)
                if sense is not None:
                    noun.synset = sense
                    break


def _group_synonyms(nouns: dict[str, Noun], cur: Curated) -> None:
    """Set each noun's canonical name: nouns sharing a sense, plus the curated groups, are one set.

    The representative is the curated group's first word, else the set's most frequent word
    (the VG vocabulary is ordered by frequency). A curated member without a sense of its own
    ("motor bike") then takes the sense of its set.
    """
    order = {n: i for i, n in enumerate(nouns)}
    by_synset: dict[Any, list[str]] = defaultdict(list)
    for noun in nouns.values():
        if noun.synset is not None:
            by_synset[noun.synset].append(noun.name)
    groups = [members for members in by_synset.values() if len(members) > 1]
    for group in cur.synonyms:
        unknown = [w for w in group if w not in nouns]
        if unknown:
            raise InputError(f"synonyms not in the vocabulary: {', '.join(unknown)}", path=str(cur.directory / SYNONYMS_FILE))
        groups.append(group)
    parent = {n: n for n in nouns}

    def find(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for group in groups:
        for other in group[1:]:
            a, b = find(group[0]), find(other)
            if a != b:
                keep, drop = (a, b) if order[a] <= order[b] or a == group[0] else (b, a)
                parent[drop] = keep
    for group in cur.synonyms:  # the curated canonical wins
        root = find(group[0])
        for n in nouns:
            if find(n) == root:
                parent[n] = group[0]
        parent[group[0]] = group[0]
    for noun in nouns.values():
        noun.canonical = find(noun.name)
    sense_of_set: dict[str, Any] = {}
    for noun in sorted(nouns.values(), key=lambda n: (n.name != n.canonical, order[n.name])):
        if noun.synset is not None:
            sense_of_set.setdefault(noun.canonical, noun.synset)
    for noun in nouns.values():
        if noun.synset is None and noun.name not in cur.senses:
            noun.synset = sense_of_set.get(noun.canonical)


def _derive_kinds_and_categories(nouns: dict[str, Noun], cur: Curated) -> None:
    """Kinds: the canonical names whose sense is a hypernym of a noun's sense (edited graph).
    Category: the first curated row whose synsets meet that hypernym closure; synonyms share
    the canonical's category (else the most frequent member's)."""
    synsets_of: dict[Any, set[str]] = defaultdict(set)
    for noun in nouns.values():
        if noun.synset is not None:
            synsets_of[noun.synset].add(noun.canonical)
    for noun in nouns.values():
        if noun.synset is None:
            continue
        closure = cur.edits.closure(noun.synset)
        for s in closure:
            noun.kinds |= synsets_of.get(s, set())
        noun.kinds.discard(noun.canonical)
        for category, roots in cur.categories:
            if closure & roots:
                noun.category = category
                break
    order = {n: i for i, n in enumerate(nouns)}
    set_category: dict[str, str] = {}
    for noun in sorted(nouns.values(), key=lambda n: (n.name != n.canonical, order[n.name])):
        if noun.category is not None:
            set_category.setdefault(noun.canonical, noun.category)
    for noun in nouns.values():
        noun.category = set_category.get(noun.canonical, noun.category)


def _apply_hand_kinds(nouns: dict[str, Noun], inflector: Inflector, cur: Curated) -> None:
    """Nouns without a sense get the kinds and category of what kinds.tsv says they are, and a
    compound whose modifier keeps the kind ("left hand", "man's head") those of its head noun."""
    kind_of = dict(cur.kinds)
    for noun in nouns.values():
        if noun.synset is not None or " " not in noun.name or noun.name in cur.senses:
            continue
        modifier, head = noun.name.rsplit(" ", 1)
        if modifier in cur.modifiers or modifier.endswith("'s"):
            kind_of.setdefault(noun.name, head)
    for name, kind in sorted(kind_of.items()):
        noun = nouns.get(inflector.singular(name))
        general = nouns.get(inflector.singular(kind))
        if noun is None or general is None:
            raise InputError(f"{name!r} or {kind!r} is not a known noun", path=str(cur.directory / KINDS_FILE))
        if noun.synset is None and general.synset is not None:
            noun.kinds = {general.canonical} | general.kinds
            noun.category = general.category


def build_lexicon(vocab_dir: Path, curated_dir: Path, wordnet_dir: Path | None = None,
                  nltk_data: list[str] | None = None) -> dict[str, str]:
    """Build the generated lexicon files; returns {file name: text}. Nothing is written.

    `wordnet_dir` is a `corpora/wordnet` directory; without it, one is looked for under the NLTK
    data directories `nltk_data` (by default as nltk looks: NLTK_DATA, then its own places).
    """
    vocab = _read_vocab(vocab_dir)  # before WordNet: a wrong path should fail in milliseconds
    wn = load_wordnet(wordnet_dir or find_wordnet(nltk_data))
    cur = Curated.read(wn, curated_dir)
    inflector = Inflector(cur.plural_only, cur.uncountable, wn, curated_dir / INFLECTION_RULES_FILE)
    words = [w for w in vocab if w not in cur.not_nouns] + sorted(cur.plural_only) + cur.extra_nouns
    nouns, aliases = _collect_nouns(words, inflector, cur.respellings)
    _assign_senses(nouns, wn, cur)
    _group_synonyms(nouns, cur)
    _derive_kinds_and_categories(nouns, cur)
    _apply_hand_kinds(nouns, inflector, cur)
    return {
        NOUNS_FILE: _render_nouns(nouns),
        ALIASES_FILE: _render_aliases(aliases),
        IRREGULAR_FILE: _render_irregular(wn, curated_dir),
        MAY_DENOTE_FILE: _render_may_denote(*_derive_may_denote(nouns, wn, cur)),
    }


def _word_senses(wn: Any, noun: Noun, cur: Curated) -> set[Any]:
    """Every WordNet sense the noun's name may have, for the loose relation.

    All noun senses of the word (or of its joined spelling, as `_assign_senses` falls back to),
    plus the chosen one, except across the curated person boundary: a people word (people.txt)
    keeps only its person senses ("man" is no chess piece, so a rook may not be a man), any
    other word none ("mug" the gullible person may not be a person).
    """
    senses = wn.synsets(noun.name.replace(" ", "_"), pos="n")
    if not senses and " " in noun.name:
        for variant in (noun.name.replace(" ", ""), noun.name.replace(" ", "-")):
            if wn.lemmas(variant, pos="n"):
                senses = wn.synsets(variant, pos="n")
                break
    if noun.name in cur.people:
        kept = {s for s in senses if s.lexname() in _PERSON_LEXNAMES}
    else:
        kept = {s for s in senses if s.lexname() not in _ABSTRACT_LEXNAMES and s.lexname() != "noun.person"}
    return kept | ({noun.synset} if noun.synset is not None else set())


def _senses_by_canonical(nouns: dict[str, Noun], wn: Any, cur: Curated) -> dict[str, set[Any]]:
    """The senses of each synonym set: any member's name may be the one an annotator used."""
    out: dict[str, set[Any]] = defaultdict(set)
    for noun in nouns.values():
        out[noun.canonical] |= _word_senses(wn, noun, cur)
    return out


def _loose_kinds(senses_of: dict[str, set[Any]], graph: HypernymEdits) -> dict[str, set[str]]:
    """canonical B -> canonical As such that some sense of B lies under some sense of A."""
    owners: dict[Any, set[str]] = defaultdict(set)
    for name, senses in senses_of.items():
        for s in senses:
            owners[s].add(name)
    closures: dict[Any, set[Any]] = {}
    kinds: dict[str, set[str]] = {}
    for name, senses in senses_of.items():
        found: set[str] = set()
        for s in senses:
            if s not in closures:
                closures[s] = graph.closure(s)
            for h in closures[s]:
                found |= owners.get(h, set())
        found.discard(name)
        kinds[name] = found
    return kinds


def _strict_hyponyms(nouns: Iterable[Noun]) -> dict[str, set[str]]:
    """canonical A -> canonical names that are kinds of it, as `Lexicon` derives them from nouns.tsv."""
    out: dict[str, set[str]] = defaultdict(set)
    for noun in nouns:
        for k in noun.kinds:
            if k != noun.canonical:
                out[k].add(noun.canonical)
    return out


def _derive_may_denote(nouns: dict[str, Noun], wn: Any, cur: Curated) -> tuple[dict[str, set[str]], dict[str, int]]:
    """({noun: names that may denote it beyond its strict hyponyms}, {vague noun: how many}).

    A noun that kinds.tsv (or its compound head) made a kind of K does NOT inherit what K's other
    senses may be: the compound names K's chosen sense ("trash bag" is no bag of game, "stop sign"
    no sign of the zodiac), so it may be only what its own WordNet senses, if any, and its strict
    kinds say.
    """
    loose = _loose_kinds(_senses_by_canonical(nouns, wn, cur), cur.edits.with_links(cur.loose.add))
    strict = _strict_hyponyms(nouns.values())
    extra: dict[str, set[str]] = defaultdict(set)
    for b, kinds in loose.items():
        for a in kinds:
            if b not in strict.get(a, ()):
                extra[a].add(b)
    vague = _vague_nouns(extra, nouns, cur)
    return {a: names for a, names in extra.items() if a not in vague}, vague


def _vague_nouns(extra: dict[str, set[str]], nouns: dict[str, Noun], cur: Curated) -> dict[str, int]:
    """{canonical noun: its count of extra names} for the nouns absence claims may not rest on:
    more than VAGUE_ABOVE extra names, or `vague` in may_denote_edits.tsv."""
    unknown = sorted(w for w in cur.loose.vague if w not in nouns)
    if unknown:
        raise InputError(f"vague nouns not in the vocabulary: {', '.join(unknown)}",
                         path=str(cur.directory / MAY_DENOTE_EDITS_FILE))
    listed = {nouns[w].canonical for w in cur.loose.vague}
    return {a: len(extra.get(a, ())) for a in sorted(set(extra) | listed)
            if a in listed or len(extra[a]) > VAGUE_ABOVE}


def _render_nouns(nouns: dict[str, Noun]) -> str:
    lines = [
        "# Nouns of the Visual Genome / GQA object vocabulary, with their number, synonyms, kinds and category.",
        "# Source: GENERATED by contrastgen.language.lexicon_build from ../shared/data/vocab/vg-1750-700-450/objects_vocab.txt,",
        "# WordNet 3.0 (one sense per noun: senses.tsv, else the most frequent visible sense), spaCy's lookup",
        "# lemmatizer and inflect, and the curated lists beside this file. Do not edit by hand.",
        "# Columns: name (singular, or the plural-only word) <TAB> plural <TAB> canonical (synonym-set representative)",
        "# <TAB> category (- if none) <TAB> kinds (comma-separated canonical names it is a kind of, - if none)",
        "# <TAB> chosen WordNet synset (- if none).",
        f"# {_REGEN}",
    ]
    for name in sorted(nouns):
        n = nouns[name]
        kinds = ",".join(sorted(n.kinds)) or "-"
        synset = n.synset.name() if n.synset is not None else "-"
        lines.append("\t".join((n.name, n.plural, n.canonical, n.category or "-", kinds, synset)))
    return "\n".join(lines) + "\n"


def _render_may_denote(extra: dict[str, set[str]], vague: dict[str, int]) -> str:
    lines = [
        "# Which nouns MAY denote a noun, for claims that rest on absence: \"Are there any dishes? -> no\" must",
        "# rule out a bowl, whose chosen sense (nouns.tsv) is a container but whose name may mean a dish.",
        "# B may denote A when ANY WordNet noun sense of B (or of a synonym) lies, through hypernyms and",
        "# instance hypernyms, under ANY sense of A (or of a synonym), in the graph edited by",
        "# hypernym_edits.tsv plus the loose-only links of may_denote_edits.tsv. Except: a people word",
        "# (people.txt) counts only in its person senses, any other word never in one; abstract senses",
        "# (acts, cognition, feelings, motives, quantities, relations, times) never count; a noun without",
        "# WordNet senses (kinds.tsv, compounds) may be only its strict kinds.",
        "# Source: GENERATED by contrastgen.language.lexicon_build from WordNet 3.0 and the curated lists beside this",
        "# file. Do not edit by hand.",
        "# Columns: canonical name A (nouns.tsv) <TAB> comma-separated canonical names that may denote A",
        "# BEYOND its strict hyponyms (the nouns.tsv rows with A among their kinds); nouns to which the loose",
        "# relation adds nothing are not listed. The full set (contrastgen.language.lexicon.Lexicon.may_denote) is",
        "# A itself, its strict hyponyms and this row.",
        f"# `{CANNOT_SAY}` instead of names: cannot say, no claim of absence may rest on A (absence_decidable",
        f"# is False): more than {VAGUE_ABOVE} names beyond the strict hyponyms, or `vague` in",
        "# may_denote_edits.tsv; the comment gives that count.",
        f"# {_REGEN}",
    ]
    for a in sorted(set(extra) | set(vague)):
        if a in vague:
            lines.append(f"{a}\t{CANNOT_SAY}  # {vague[a]} names beyond the strict hyponyms")
        else:
            lines.append(f"{a}\t{','.join(sorted(extra[a]))}")
    return "\n".join(lines) + "\n"


def _render_aliases(aliases: dict[str, str]) -> str:
    lines = [
        "# Vocabulary entries that are another form of a noun in nouns.tsv: plurals the vocabulary lists as",
        '# separate names ("men", "traffic lights") and lemmas it got wrong ("pant" for "pants").',
        "# Source: GENERATED by contrastgen.language.lexicon_build from ../shared/data/vocab/vg-1750-700-450/objects_vocab.txt",
        "# and plural_only.txt. Columns: alias <TAB> name in nouns.tsv. Do not edit by hand.",
        f"# {_REGEN}",
    ]
    lines += [f"{a}\t{aliases[a]}" for a in sorted(aliases)]
    return "\n".join(lines) + "\n"


def _render_irregular(wn: Any, curated_dir: Path) -> str:
    """WordNet's noun.exc plurals that the regular suffix rules would get wrong."""
    from contrastgen.language.lexicon import _read_suffix_rules

    to_plural, to_singular, invariant = _read_suffix_rules(curated_dir / INFLECTION_RULES_FILE)

    def rule_singular(w: str) -> str:
        if any(p.search(w) for p in invariant):
            return w
        for r in to_singular:
            if r.pattern.search(w):
                return r.pattern.sub(r.replacement, w, count=1)
        return w

    exc_path = Path(str(wn.root)) / "noun.exc"
    try:
        exc_text = exc_path.read_text(encoding="utf-8")
    except OSError:
        raise InputError("WordNet's noun.exc not found beside data.noun", path=str(exc_path)) from None
    pairs: dict[str, str] = {}
    for raw in exc_text.splitlines():
        parts = raw.split()
        if len(parts) < 2 or not re.fullmatch(r"[a-z]+", parts[0]) or not re.fullmatch(r"[a-z]+", parts[1]):
            continue
        plural, singular = parts[0], parts[1]
        if rule_singular(plural) != singular:
            pairs.setdefault(singular, plural)
    lines = [
        "# Irregular noun plurals for words outside the vocabulary (\"geese\" -> \"goose\"), used before the suffix",
        "# rules of inflection_rules.tsv. Source: GENERATED from WordNet 3.0's noun.exc, keeping the pairs those",
        "# rules get wrong (first singular when WordNet lists several). Columns: singular <TAB> plural.",
        f"# {_REGEN}",
    ]
    lines += [f"{s}\t{pairs[s]}" for s in sorted(pairs)]
    return "\n".join(lines) + "\n"


def surface_forms(files: dict[str, str]) -> list[str]:
    """Every surface name the generated files know: singulars, plurals and aliases, sorted."""
    forms: set[str] = set()
    for name, columns in ((NOUNS_FILE, (0, 1)), (ALIASES_FILE, (0,))):
        for line in files[name].splitlines():
            if line and not line.startswith("#"):
                fields = line.split("\t")
                forms.update(fields[i] for i in columns)
    return sorted(forms)


def write_lexicon(files: dict[str, str], out_dir: Path) -> None:
    """Write each generated file atomically (a failed build leaves the old files intact)."""
    for name, text in sorted(files.items()):
        write_text(out_dir / name, text)
