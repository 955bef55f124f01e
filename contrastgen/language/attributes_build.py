"""Build `rules/lexicon/attributes.txt`: the words that may stand before a head noun in a slot.

Why a closed list: a template slot such as Y in "Is the X Rel the Y?" is only read with certainty
when every word before the head is an attribute ("the tall white fence"). Real GQA questions put
other things there that a lazy pattern swallows: "the catcher wearing jeans" (a verb phrase),
"the man's hat" (a possessive), "the van parked" (a participle after the noun). Accepting only
Visual Genome's single-word attributes, minus the words that introduce a relation or a clause,
turns those into "no match" instead of a wrong reading.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from contrastgen.files.atomic import atomic_file

# Attribute words that also start a relation or a side phrase after a noun ("the cup on the left",
# "the man close to the car", "the table made of wood"): never read as a pre-nominal attribute.
RELATIONAL_WORDS = frozenset({"left", "right", "front", "top", "side", "middle", "made", "close", "back"})

HEADER = """\
# Single-word attributes that may stand between a slot's determiner and its head noun.
# Source: Visual Genome's 700 most frequent attributes (../shared/data/vocab/vg-1750-700-450/
# attributes_vocab.txt), keeping single words and dropping the words rules/phrases.json uses to
# start a relation or clause (determiners, pronouns, relative pronouns, copulas, one-word
# modifier relations such as "wearing", "in", "on") and left/right/front/top/side/middle/made/
# close/back, which begin side or relation phrases after a noun.
# Regenerate: `make lexicon` (contrastgen lexicon build; contrastgen/language/attributes_build.py).
"""


def attribute_words(vocab_file: Path, phrases_file: Path) -> list[str]:
    phrases = orjson.loads(phrases_file.read_bytes())
    stop = set(RELATIONAL_WORDS)
    for key in ("determiners", "relative_pronouns", "copulas", "pronouns"):
        stop.update(phrases[key])
    stop.update(r for r in phrases["modifier_relations"] if " " not in r)
    words = []
    for line in vocab_file.read_text(encoding="utf-8").splitlines():
        word = line.strip().lower()
        if word and " " not in word and word not in stop and word not in words:
            words.append(word)
    return sorted(words)


ATTRIBUTES_FILE = "attributes.txt"


def build_attributes(vocab_dir: Path, phrases_file: Path, out: Path) -> Path:
    """Write the attribute list to `out` (normally rules/lexicon/attributes.txt)."""
    words = attribute_words(vocab_dir / "attributes_vocab.txt", phrases_file)
    with atomic_file(out) as f:
        f.write((HEADER + "".join(w + "\n" for w in words)).encode("utf-8"))
    return out
