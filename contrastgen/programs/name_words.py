"""Which words of an object's span say the program's name for it, and in which number.

Why apart from `wording`: GQA says a name in more ways than the program writes it. The program
says `select: furniture` where the words say "piece of furniture", `pants` for "trousers", `bike`
for "bicycle", `traffic light` for "any traffic lights", and `orange` for "the ripe orange" (with
a `filter ripe`). A new name must replace exactly the words that say the old one, and be said in
the same number, or the new question asks something else than the edited program.

A span reads as the name when, after adjectives that filters narrowing the object say and an
optional classifier ("piece of", rules/lexicon/classifiers.txt), its last words are the name or
one of the forms nouns.tsv lists for its kind (a synonym, a plural, a respelling), which the
verifier reads from the same table, and that the table reads back as the same kind ("glasses" is
listed as a plural of "glass" but names spectacles). Anything else ("trashes", a plural the table
does not give an uncountable noun) is refused: the words then say something the program does not.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import regex

from contrastgen.language.lexicon import Lexicon, read_word_list
from contrastgen.language.nounphrase import attribute_words, phrase_words
from contrastgen.programs.wording import Span, follows_indefinite
from contrastgen.resources import lexicon_dir

_WORDS = regex.compile(r"\S+")
# before a plural, these make it indefinite ("Are there any traffic lights?"): any object of the
# kind makes the answer, so a new name need not be a group's
_INDEFINITE_PLURAL = frozenset({"any", "some"})
# how far back a possessive may say whose a noun's thing is (past a conjunct: "X's A and B")
_POSSESSIVE_WINDOW = 5
_MODIFIERS_AT_MOST = 5  # words read back from a noun for its determiner


@functools.cache
def classifiers() -> frozenset[str]:
    """rules/lexicon/classifiers.txt: "piece of", "item of"... said before a mass noun."""
    return frozenset(read_word_list(lexicon_dir() / "classifiers.txt"))


@dataclass(frozen=True)
class SaidName:
    """The words a new name replaces, and how it must be said there."""

    span: Span
    plural: bool  # "the trousers", "pieces of furniture", "any traffic lights": a new name in the plural
    definite: bool  # a determined plural ("the flowers": one object named so): only a group named in the plural may replace it
    indefinite: bool = False  # after "a"/"an": a new name must be countable and singular
    bare: bool = False  # no determiner opens the phrase ("both cheese and meat"): a singular there is a mass noun
    possessed: bool = False  # "her racket", "the man's hat": the words say whose it is

    def as_said(self, name: str, lex: Lexicon) -> str:
        """A new name as these words would say it."""
        return lex.plural(name) if self.plural else name

    def takes(self, name: str, lex: Lexicon) -> bool:
        """Can these words say `name` in place of the old one, in English? Not "the pieces of
        furniture" -> "the fog", nor "lights" -> "glasses" (a plural that does not read back as
        the name), "a board" -> "a fog", "both cheese and meat" -> "both cheese and vase"."""
        if self.plural:
            return not lex.is_uncountable(name) and lex.canonical(self.as_said(name, lex)) == lex.canonical(name)
        if self.indefinite:
            return not (lex.is_uncountable(name) or lex.is_plural_only(name))
        return not self.bare or lex.is_uncountable(name)


def said_plural(word: str, lex: Lexicon) -> bool:
    """Is the word, as written, a plural ("jeans", "flowers")? Not where the lexicon counts it
    plural for its kind but the word is a singular form ("handlebar", of plural-only
    "handlebars": "Is the handlebar silver?")."""
    return lex.is_plural(word) and lex.plural(word) == word.lower() and not lex.is_uncountable(word)


def read_name(text: str, span: Span, name: str, lex: Lexicon, filtered: set[str]) -> SaidName | None:
    """How `span` (GQA's annotation of the object, or the name's one occurrence) says `name`;
    None when it says more or other than the name. `filtered`: the words the filters narrowing
    this object say, which may stand before the name and stay."""
    return _read_name(text[:span.end], span, name, lex, frozenset(filtered))


# the same words recur over a set's questions ("What color is the car?"), and the reading
# depends on nothing else: kept for the process, as the lexicon's own readings are. It reads
# no word after the span, so it is kept by the words up to the span's end: "What color is the
# car" reads the same before "?" as before "on the left?" (a third fewer readings on 30k questions)
@functools.lru_cache(maxsize=1 << 16)
def _read_name(text: str, span: Span, name: str, lex: Lexicon, filtered: frozenset[str]) -> SaidName | None:
    words = [(m.start() + span.start, m.end() + span.start, m.group().lower())
             for m in _WORDS.finditer(text[span.start:span.end])]
    name = name.lower()
    for k in range(len(words)):
        head = " ".join(w for _, _, w in words[k:])
        if head != name and not (lex.is_known(name) and head in lex.forms(name)
                                 and lex.canonical(head) == lex.canonical(name)):
            continue
        before = [w for _, _, w in words[:k]]
        classifier = 2 if len(before) >= 2 and " ".join(before[-2:]) in classifiers() else 0
        if not all(w in filtered for w in before[:len(before) - classifier]):
            return None  # an adjective no step says could not be proven of a new object
        if not all(w in filtered for w in _adjectives_before(text[:span.start])):
            return None  # the same, where GQA's annotation covers the noun alone ("the black purse")
        start = words[k - classifier][0]
        plural = said_plural(head, lex) or (classifier > 0 and said_plural(before[-2], lex))
        if said_plural(name, lex) and not plural:
            return None  # the program's name is a plural the words do not say
        preceding = text[:span.start].split()[-1:]
        bare = not _determined(text[:start], lex)
        # a plural with no determiner is indefinite as "any" makes it ("Are there red doors?",
        # "Who is wearing trousers?"): it asks of some objects of the kind, not of one group
        definite = not (bare or (preceding and preceding[0].lower() in _INDEFINITE_PLURAL))
        said = Span(start, span.end)
        return SaidName(said, plural, definite, indefinite=follows_indefinite(text, said),
                        bare=bare, possessed=_possessed(text[:start], lex))
    return None


def _determined(before: str, lex: Lexicon) -> bool:
    """Does a determiner open the noun phrase whose words end with `before`? "the white car", "the
    kneeling man", "which car", "the person's remote", "what kind of animal" are, and so is the
    second noun of "any bicycle or umbrella" (the determiner is shared, and so is the number:
    after "any ducks or" a singular is bare); "Are there both cheese and meat", "Is there sky that
    is red" are not, and there only a mass noun reads ("both cheese and vase" is not English).
    Read back over the words before the noun (its modifiers, a few at most) to a determiner, or
    to a word no noun phrase runs across ("there", "is", "and", "in")."""
    pw = phrase_words()
    words = [w.strip("?,.!").lower() for w in before.split()]
    if words and words[-1] in pw.conjunctions:
        words.pop()  # the conjunct before: its determiner, if any, is shared
        if words and said_plural(words[-1], lex):
            return False  # and so is its number: "any ducks or snow", never "any ducks or child"
    for i in range(len(words) - 1, max(-1, len(words) - 1 - _MODIFIERS_AT_MOST), -1):
        w = words[i]
        if w in pw.determiners or w in pw.noun_determiners or w.endswith("'s") \
                or " ".join(words[i - 1:i + 1]) in pw.noun_frames:
            return True
        if w in _phrase_bounds():
            return False
    return False


def _adjectives_before(before: str) -> list[str]:
    """The attribute words right before a span, back to the first word that is none ("the black"
    -> ["black"]): what the words say of the object besides its name."""
    out = []
    for w in reversed([w.strip("?,.!").lower() for w in before.split()][-_MODIFIERS_AT_MOST:]):
        if w not in attribute_words():
            break
        out.append(w)
    return out


def _possessed(before: str, lex: Lexicon) -> bool:
    """Do the words before the noun say whose its thing is: a possessive determiner ("her
    racket") or a noun's "'s" ("the man's red hat"; not "what's")? Read back over its modifiers
    to the determiner, as `_determined` does, and across "and"/"or": a possessive before a
    conjunction may say whose the second thing is too ("the man's hat and coat", "both person's
    heads and table cloths"), so it is read as saying so."""
    pw = phrase_words()
    words = [w.strip("?,.!").lower() for w in before.split()[-_POSSESSIVE_WINDOW:]]
    bounds = _bounds_past_conjunctions()
    for w in reversed(words):
        if w in pw.possessives or (w.endswith("'s") and lex.is_known(w[:-2])):
            return True
        if w in pw.determiners or w in pw.noun_determiners or w in bounds:
            return False
    return False


@functools.cache
def _bounds_past_conjunctions() -> frozenset[str]:
    """`_phrase_bounds` but the conjunctions, which a possessive may reach across."""
    return _phrase_bounds() - phrase_words().conjunctions


@functools.cache
def _phrase_bounds() -> frozenset[str]:
    """Words a noun phrase does not run across, leftwards (rules/phrases.json): copulas and
    auxiliaries, relative pronouns, one-word relations ("in", "near", "wearing"), conjunctions,
    and what opens a bare list ("both", "there", "see")."""
    pw = phrase_words()
    relations = {words[0] for words in pw.modifier_relations if len(words) == 1}
    return frozenset(pw.copulas | pw.auxiliaries | pw.relative_pronouns | relations | pw.conjunctions
                     | pw.bare_openers)
