"""Splitting a slot's noun phrase into determiner, attributes, head noun and one modifier.

Why: a template captures "the bat the batter is holding" or "the white wall" as one phrase.
Grounding needs the head ("bat"), the attributes ("white") and the modifier (the bat that the
batter holds) separately, and the phrase rewriter needs the determiner kind to keep. The split is
deliberately shallow (one modifier level, the GQA norm): what it cannot parse it leaves in
`rest`, and grounding then refuses rather than guesses.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import orjson

from contrastgen.language.lexicon import Lexicon
from contrastgen.resources import rules_dir


@dataclass(frozen=True)
class PhraseWords:
    determiners: frozenset[str]
    definite: frozenset[str]
    noun_determiners: frozenset[str]  # "which", "her", ...: also open a noun phrase
    possessives: frozenset[str]  # "her", "their": say whose the noun's thing is
    noun_frames: frozenset[str]  # "kind of": a bare noun after them is no mass use
    contrastive: frozenset[str]  # "other", "another": a second thing of a kind already said
    conjunctions: frozenset[str]
    bare_openers: frozenset[str]  # "both", "there": a noun may follow with no determiner
    auxiliaries: frozenset[str]
    relative_pronouns: frozenset[str]
    copulas: frozenset[str]
    pronouns: frozenset[str]
    modifier_relations: tuple[tuple[str, ...], ...]  # longest first
    side_phrases: dict[tuple[str, ...], str]
    picture_words: frozenset[str]


# the fields of PhraseWords that are plain word lists in rules/phrases.json
_WORD_SETS = ("determiners", "definite", "noun_determiners", "possessives", "noun_frames", "contrastive", "conjunctions",
              "bare_openers", "auxiliaries", "relative_pronouns", "copulas", "pronouns", "picture_words")


@functools.cache
def phrase_words() -> PhraseWords:
    data = orjson.loads((rules_dir() / "phrases.json").read_bytes())
    rels = sorted((tuple(r.split()) for r in data["modifier_relations"]), key=len, reverse=True)
    return PhraseWords(
        **{name: frozenset(data[name]) for name in _WORD_SETS},
        modifier_relations=tuple(rels),
        side_phrases={tuple(k.split()): v for k, v in data["side_phrases"].items()},
    )


@functools.cache
def attribute_words() -> frozenset[str]:
    """Words that may stand before a head noun: attributes.txt, extra_attributes.txt, colors.txt."""
    words: set[str] = set()
    for name in ("attributes.txt", "extra_attributes.txt", "colors.txt"):
        for line in (rules_dir() / "lexicon" / name).read_text(encoding="utf-8").splitlines():
            word = line.split("#", 1)[0].strip().lower()
            if word:
                words.add(word)
    return frozenset(words)


SIMPLE = "simple"  # determiner, attributes, head: "the tall white fence"
MODIFIED = "modified"  # the same plus one modifier: "the shirt the boy is wearing"
SLOT_GRAMMARS = (SIMPLE, MODIFIED)


@dataclass(frozen=True)
class Modifier:
    """One restriction on the head: a relation to another phrase, or a side of the image.

    `direction` is "out" when the head is the relation's subject ("the cat in front of the wall":
    cat -in front of-> wall) and "in" when it is the object ("the bat the batter is holding":
    batter -holding-> bat).
    """

    kind: str  # "relation" | "side" | "attribute"
    relation: str = ""
    direction: str = "out"
    target: NounPhrase | None = None
    side: str = ""
    attribute: str = ""


@dataclass(frozen=True)
class NounPhrase:
    text: str
    determiner: str  # "" when bare
    attributes: tuple[str, ...]
    head: str  # as written ("cats", "traffic light")
    modifier: Modifier | None
    rest: tuple[str, ...]  # words the parser could not place (grounding refuses when non-empty)

    @property
    def definite(self) -> bool:
        return self.determiner in phrase_words().definite


def fits(np: NounPhrase, grammar: str, lex: Lexicon) -> bool:
    """Is every word of the phrase placed with certainty under the slot's grammar?

    Why: a lazy pattern lets a slot swallow what is really the question's predicate ("the
    catcher wearing jeans" in "Is the man near the catcher wearing jeans?") or a clause ("the
    person that is"). A phrase fits only when its head is a known noun, every word before the
    head is a known attribute, and (for `modified`) its one modifier is a side, a known
    attribute or a relation to a simple phrase. Anything else is not read at all.
    """
    if np.rest or not np.head or not _listed_form(np.head, lex):
        return False
    attributes = attribute_words()
    if any(a not in attributes for a in np.attributes):
        return False
    mod = np.modifier
    if mod is None:
        return True
    if grammar != MODIFIED:
        return False
    if mod.kind == "side":
        return True
    if mod.kind == "attribute":
        return mod.attribute in attributes
    return mod.kind == "relation" and mod.target is not None and fits(mod.target, SIMPLE, lex)


def _listed_form(word: str, lex: Lexicon) -> bool:
    """A surface form the lexicon lists ("leathers" is not one: leather has no plural)."""
    return lex.is_known(word) and word.lower() in lex.forms(word)


def _match_relation(words: list[str], i: int) -> tuple[str, int] | None:
    for rel in phrase_words().modifier_relations:
        if tuple(words[i:i + len(rel)]) == rel:
            return " ".join(rel), i + len(rel)
    return None


def _split_head(words: list[str], lex: Lexicon) -> tuple[tuple[str, ...], str]:
    """The longest known multiword noun at the end is the head; the words before are attributes."""
    for n in (3, 2):
        tail = words[-n:]
        # "wet suit" and "trash can" are also spelt "wetsuit" and "trashcan"
        if len(words) >= n and any(lex.is_known(j.join(tail)) for j in (" ", "", "-")):
            return tuple(words[:-n]), " ".join(tail)
    return tuple(words[:-1]), words[-1]


def parse(text: str, lex: Lexicon, _depth: int = 0) -> NounPhrase:
    pw = phrase_words()
    words = text.lower().split()
    det = words[0] if words and words[0] in pw.determiners else ""
    body = words[1:] if det else words
    # The noun group ends where a modifier starts: a relative pronoun, a determiner (a relative
    # clause without pronoun), a relation word, or a side phrase.
    cut = len(body)
    for i in range(1, len(body)):
        w = body[i]
        if (w in pw.relative_pronouns or w in pw.determiners or w in pw.pronouns
                or _match_relation(body, i)):
            cut = i
            break
    group, tail = body[:cut], body[cut:]
    if not group:
        return NounPhrase(text, det, (), "", None, tuple(tail))
    attributes, head = _split_head(group, lex)
    modifier, rest = (None, ()) if not tail else _parse_modifier(tail, lex, _depth)
    return NounPhrase(text, det, attributes, head, modifier, rest)


def _parse_modifier(tail: list[str], lex: Lexicon, depth: int) -> tuple[Modifier | None, tuple[str, ...]]:
    pw = phrase_words()
    if depth > 1:
        return None, tuple(tail)
    words = list(tail)
    for phrase, side in pw.side_phrases.items():
        n = len(phrase)
        if tuple(words[:n]) == phrase:
            after = words[n:]
            # "on the right side of the picture", "on the left of the photo"
            if not after or (after[:1] == ["side"] and len(after) == 1) or (
                    after[-1:] and after[-1] in pw.picture_words and len(after) <= 4):
                return Modifier(kind="side", side=side), ()
    if words[0] in pw.relative_pronouns:
        words = words[1:]
        if words and words[0] in pw.copulas:
            words = words[1:]
            if len(words) == 1:  # "that is black"
                return Modifier(kind="attribute", attribute=words[0]), ()
            if len(words) == 3 and words[:2] == ["made", "of"]:  # "that is made of wood"
                return Modifier(kind="attribute", attribute=words[2]), ()
        elif words and (words[0] in pw.determiners or words[0] in pw.pronouns):  # "that the woman is wearing"
            return _relative_clause(words, lex, depth)
    elif words[0] in pw.determiners or words[0] in pw.pronouns:  # "the batter is holding", "she is with"
        return _relative_clause(words, lex, depth)
    if len(words) == 3 and words[:2] == ["made", "of"]:
        # "the bag made of plastic": GQA annotates materials as attributes ("filter material")
        return Modifier(kind="attribute", attribute=words[2]), ()
    rel = _match_relation(words, 0)
    if rel and rel[1] < len(words):
        target = parse(" ".join(words[rel[1]:]), lex, depth + 1)
        return Modifier(kind="relation", relation=rel[0], direction="out", target=target), ()
    return None, tuple(tail)


def _relative_clause(words: list[str], lex: Lexicon, depth: int) -> tuple[Modifier | None, tuple[str, ...]]:
    """'the batter is holding' / 'the numbers are on' / 'the man wears': the head is the object."""
    pw = phrase_words()
    for i in range(1, len(words)):
        if words[i] in pw.copulas or (i == len(words) - 1):
            subject = " ".join(words[:i])
            verb = " ".join(words[i + 1:]) if words[i] in pw.copulas else words[i]
            if not verb:
                break
            verb = _verb_to_relation(verb)
            target = parse(subject, lex, depth + 1)
            return Modifier(kind="relation", relation=verb, direction="in", target=target), ()
    return None, tuple(words)


@functools.cache
def _verb_to_relation(verb: str) -> str:
    """GQA names relations by the progressive ('wearing'); questions also say 'wears'."""
    if verb.endswith("s") and not verb.endswith("ss") and " " not in verb:
        stem = verb[:-1]
        if stem.endswith("e") and not stem.endswith("ee"):
            stem = stem[:-1]
        return stem + "ing"
    return verb


@functools.lru_cache(maxsize=65536)
def parse_cached(text: str, lex: Lexicon) -> NounPhrase:
    """`parse`, memoised: GQA repeats the same phrases across hundreds of thousands of questions."""
    return parse(text, lex)
