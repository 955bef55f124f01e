"""The verifier reads a caption's words back into its structure: phrases and a relation.

Why: a caption's evidence proves something about a structure; without this check, evidence about
"a black dog" would pass for the words "a white dog". This reader knows nothing of the
generator's code. It takes every way the words split into the shapes captions have,

    object:   PHRASE                                   "a black dog"
    relation: PHRASE RELATION PHRASE                   "a dog to the left of a red car"
    pair:     PHRASE and PHRASE                        "a white plate and a brown table"
    relation: the PHRASE is|are RELATION the PHRASE    "the dog is to the left of the car"
    pair:     the PHRASE and the PHRASE                "the white plate and the brown table"

where a phrase is "a", "an" or nothing, at most one attribute (a word or words of the attribute
lists), and a noun (of the noun table, of the graph's names, or CLEVR's shapes; the longest
one the phrase ends in); a relation is
one of the rules' relations or of the graph's edges. The caller wants exactly one reading: words
that read two ways, or none, prove nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_INDEFINITE = ("a", "an")
_MAX_NOUN_WORDS = 4
_MAX_ATTRIBUTE_WORDS = 3

Reading = dict[str, Any]


class CaptionWords:
    """The words a reading may use: nouns, attribute words, relation names."""

    def __init__(self, is_noun: Callable[[str], bool], attributes: frozenset[str], relations: frozenset[str]):
        self.is_noun, self.attributes, self.relations = is_noun, attributes, relations

    def phrases(self, words: list[str], *, definite: bool) -> list[dict[str, str]]:
        """The reading of `words` as one phrase, {"determiner", "attribute", "noun"}, in a list
        (empty when they are none). The noun is the longest the words end in ("a glass window"
        is the noun "glass window", not a window of glass), as readers take compounds."""
        if definite:
            if not words or words[0] != "the":
                return []
            det, body = "the", words[1:]
        elif words and words[0] in _INDEFINITE:
            det, body = words[0], words[1:]
        else:
            det, body = "", words
        for k in range(0, min(_MAX_ATTRIBUTE_WORDS, len(body) - 1) + 1):
            attribute, noun = " ".join(body[:k]), body[k:]
            if k and attribute not in self.attributes:
                continue
            if 0 < len(noun) <= _MAX_NOUN_WORDS and noun[0] not in ("the", *_INDEFINITE) and self.is_noun(" ".join(noun)):
                return [{"determiner": det, "attribute": attribute, "noun": " ".join(noun)}]
        return []


def read_caption(text: str, words: CaptionWords) -> list[Reading]:
    """Every distinct reading of the caption."""
    tokens = text.strip().lower().split()
    found: list[Reading] = []

    def add(reading: Reading) -> None:
        if reading not in found:
            found.append(reading)

    for p in words.phrases(tokens, definite=False):
        add({"shape": "object", "phrases": [p]})
    n = len(tokens)
    for i in range(1, n - 1):
        if tokens[i] == "and":
            for definite in (False, True):
                for a in words.phrases(tokens[:i], definite=definite):
                    for b in words.phrases(tokens[i + 1:], definite=definite):
                        add({"shape": "pair", "phrases": [a, b]})
    for i in range(1, n):
        for j in range(i + 1, n):
            middle = tokens[i:j]
            if middle[0] in ("is", "are"):
                relation, definite = " ".join(middle[1:]), True
            else:
                relation, definite = " ".join(middle), False
            if relation not in words.relations:
                continue
            for a in words.phrases(tokens[:i], definite=definite):
                for b in words.phrases(tokens[j:], definite=definite):
                    add({"shape": "relation", "phrases": [a, b], "relation": relation})
    return found
