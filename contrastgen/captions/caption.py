"""A caption as a structure (noun phrases, a relation) and as the words it is written with.

Why a structure first: every negative is one change to a positive's structure (a noun, an
attribute, the relation, two phrases swapped, a phrase or an attribute added), its proof is about
that structure, and the verifier reads the words back into the same structure with its own
reader (`contrastgen.verify.caption_reading`). The words follow the article and agreement rules
questions follow: "a"/"an" by pronunciation (`language.articles`), no article before a plural or
uncountable noun ("green leaves", "brown grass"), "is"/"are" by the subject's number.

Shapes, with the benchmarks that use them:
- `object`: "a black dog" (SugarCrepe);
- `relation`: "a black dog to the left of a red car" (SugarCrepe); with definite phrases, ARO's
  "the dog is to the left of the car";
- `pair`: "a white plate and a brown table" (SugarCrepe); with definite phrases, ARO's
  "the white plate and the brown table".
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from contrastgen.language.articles import article
from contrastgen.language.lexicon import Lexicon

SHAPES = ("object", "relation", "pair")


class Phrase(NamedTuple):
    """A noun phrase: an optional attribute before the noun, indefinite ("a", "an" or none) or
    definite ("the"). A named tuple: a run makes and hashes millions of them."""

    noun: str
    attribute: str = ""
    definite: bool = False

    def with_attribute(self, attribute: str) -> Phrase:
        return self._replace(attribute=attribute)

    def with_noun(self, noun: str) -> Phrase:
        return self._replace(noun=noun)


class Caption(NamedTuple):
    shape: str
    phrases: tuple[Phrase, ...]
    relation: str = ""

    @property
    def definite(self) -> bool:
        phrases = self.phrases  # one or two; no generator: asked of every candidate's captions
        return phrases[0].definite or (len(phrases) > 1 and phrases[1].definite)

    def with_phrase(self, i: int, phrase: Phrase) -> Caption:
        return self._replace(phrases=self.phrases[:i] + (phrase,) + self.phrases[i + 1:])

    def swapped(self) -> Caption:
        """The two phrases exchanged ("a car to the left of a dog")."""
        return self._replace(phrases=(self.phrases[1], self.phrases[0]))

    def attributes_swapped(self) -> Caption:
        """The two phrases' attributes exchanged ("a brown plate and a white table")."""
        a, b = self.phrases
        return self._replace(phrases=(a.with_attribute(b.attribute), b.with_attribute(a.attribute)))


def plural_like(noun: str, lex: Lexicon) -> bool:
    """Does the noun take no indefinite article (plural, plural-only or uncountable) and a plural
    verb ("leaves", "jeans")? Uncountable nouns take no article but a singular verb."""
    return lex.is_plural(noun) or lex.is_plural_only(noun)


@functools.lru_cache(maxsize=1 << 16)  # every record's evidence says each phrase's determiner
def determiner(phrase: Phrase, lex: Lexicon) -> str:
    """"the", "a", "an", or "" (a plural or uncountable noun said indefinitely)."""
    if phrase.definite:
        return "the"
    if plural_like(phrase.noun, lex) or lex.is_uncountable(phrase.noun):
        return ""
    return article(f"{phrase.attribute} {phrase.noun}".strip())


@functools.lru_cache(maxsize=1 << 16)  # phrases recur across an image's candidates and across images
def phrase_text(phrase: Phrase, lex: Lexicon) -> str:
    return " ".join(w for w in (determiner(phrase, lex), phrase.attribute, phrase.noun) if w)


@functools.lru_cache(maxsize=1 << 16)  # a caption recurs across its image's kinds and across images
def caption_text(caption: Caption, lex: Lexicon) -> str:
    """The caption in words, lower case, without a final full stop (SugarCrepe's and ARO's
    captions are compared as given; a stop would be one more token a text-only model reads)."""
    first = phrase_text(caption.phrases[0], lex)
    if caption.shape == "object":
        return first
    second = phrase_text(caption.phrases[1], lex)
    if caption.shape == "pair":
        return f"{first} and {second}"
    if caption.definite:
        verb = "are" if plural_like(caption.phrases[0].noun, lex) else "is"
        return f"{first} {verb} {caption.relation} {second}"
    return f"{first} {caption.relation} {second}"


def reading(caption: Caption, lex: Lexicon) -> dict[str, Any]:
    """The structure as the evidence states it: what the verifier's own reading of the words
    must give back."""
    out: dict[str, Any] = {
        "shape": caption.shape,
        "phrases": [{"determiner": determiner(p, lex), "attribute": p.attribute, "noun": p.noun}
                    for p in caption.phrases],
    }
    if caption.shape == "relation":
        out["relation"] = caption.relation
    return out
