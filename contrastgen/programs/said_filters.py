"""Do a question's words still say the attribute values its program filters on, after an edit?

Why: an edit that drops a word and a `filter` step proves the reference and the answer, but a
word may say the value for two steps at once. "Do you see any white street signs or cars?" has
GQA's program filter `white` on the signs and on the cars; dropping "white" with the signs' filter
leaves "Do you see any street signs or cars?" over a program that still asks for white cars, so
the words no longer say the program. The words are not parsed here: a value counts as said when
its words occur in the question, and an edit is judged against the question it edits, so the
looseness of GQA's own wording ("wooden" for `wood`) is inherited, never blamed on the edit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from contrastgen.programs.wording import tokens

_NOT = ("not(", ")")


def _words(text: str) -> tuple[str, ...]:
    return tuple(text[a:b].lower() for a, b in tokens(text))


def _value(argument: str) -> str:
    value = " ".join(argument.split()).lower()
    if value.startswith(_NOT[0]) and value.endswith(_NOT[1]):
        value = value[len(_NOT[0]):-len(_NOT[1])].strip()
    return value


def filter_values(semantic: Iterable[Mapping[str, Any]]) -> set[str]:
    """The values a program's `filter` steps keep or leave out ("white", "not(clean)" -> "clean")."""
    return {_value(str(s.get("argument", ""))) for s in semantic
            if str(s.get("operation", "")).split()[:1] == ["filter"]} - {""}


def program_values(semantic: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every attribute value a program says: its filters', and the options its `verify` and
    `choose` of an attribute ask (not of a relation)."""
    steps = list(semantic)
    out = filter_values(steps)
    for s in steps:
        op = " ".join(str(s.get("operation", "")).split())
        if op.split()[:1] in (["verify"], ["choose"]) and op not in ("verify rel", "choose rel"):
            out |= {_value(v) for v in str(s.get("argument", "")).split("|")} - {""}
    return out


def said(words: tuple[str, ...], value: str) -> bool:
    """Does the run of words of `value` occur in `words`?"""
    run = _words(value)
    return bool(run) and any(words[i:i + len(run)] == run for i in range(len(words) - len(run) + 1))


def unsaid_filters(before_text: str, before: list[Mapping[str, Any]], text: str,
                   edited: list[Mapping[str, Any]]) -> list[str]:
    """The filter values whose words the edit made disagree with the program: said where the
    program no longer has them, or no longer said where it keeps them. A value is judged only
    where the question before the edit said it exactly when its program had it."""
    old_words, new_words = _words(before_text), _words(text)
    old_values, new_values = program_values(before), program_values(edited)
    out = []
    for value in sorted(filter_values(before) | filter_values(edited)):
        agreed = said(old_words, value) == (value in old_values)
        if agreed and said(new_words, value) != (value in new_values):
            out.append(value)
    return out
