"""Writing a CLEVR-family question from its family text and parameter values.

A perturbation is written the way the generator wrote the original, from the same text of the
same family: the optionals the original kept, the synonyms it chose (a value's synonym is kept
when the new value has it, e.g. "tiny" for small), "other" kept or dropped by the generator's own
rule. So the words are grammatical by construction, and reading them back
(`datasets.clevr_reading.read_question`) gives the edited program: `clevr.edits` checks that
before keeping one.
"""

from __future__ import annotations

from collections.abc import Mapping

import regex

from contrastgen.datasets.clevr_reading import Reading, keeps_other
from contrastgen.datasets.clevr_vocab import load_vocabulary, plural

_OPTIONAL = regex.compile(r"\[([^\]]*)\]")
# a parameter, and the "s" the family text writes after it to say the plural ("<S>s")
_PARAM = regex.compile(r"(<[A-Z]\d?>)(s\b)?")


def render(reading: Reading, values: Mapping[str, str]) -> str:
    """The question of `reading`'s family and text with `values` in its parameters."""
    vocab = load_vocabulary()
    text = reading.family.texts[reading.text_index]
    n = -1

    def optional(m: regex.Match) -> str:
        nonlocal n
        n += 1
        return m.group(1) if reading.choices.get(f"opt{n}") else ""

    text = _OPTIONAL.sub(optional, text)
    if not keeps_other(values):
        text = f" {text} ".replace(" other ", " ").replace(" another ", " a ")
    text = " ".join(text.split())

    def param(m: regex.Match) -> str:
        p = m.group(1)
        words = vocab.render(reading.family.params[p], values[p], like=reading.words.get(p) or None)
        return plural(words) if m.group(2) else words

    return " ".join(_PARAM.sub(param, text).split())
