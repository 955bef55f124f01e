"""What every kind of program edit shares: reading a step's argument, the steps that read
another, and the word lists the name edits consult.

Why apart from the edits: each kind of edit has a module of its own (`objects`, `relations`,
`attributes`, `redundancy`), and they all need these.
"""

from __future__ import annotations

import functools
from typing import Any

from contrastgen.datasets.gqa_program import REFERENCE_OPS, Step, split_reference
from contrastgen.language.lexicon import Lexicon, iter_data_lines, normalize, read_word_list
from contrastgen.resources import lexicon_dir, rules_file

POSITION_VALUES = {"hposition": ("left", "right"), "vposition": ("top", "bottom")}
# rd+ says an object's attributes before its noun in English adjective order (size, age, shape,
# colour, material: rules/adjective_order.tsv)
RD_PLUS_TYPES = ("size", "age", "shape", "color", "material")


@functools.cache
def adjective_order() -> dict[str, int]:
    """rules/adjective_order.tsv: GQA attribute type -> its rank in English adjective order."""
    out = {}
    for line in rules_file("adjective_order.tsv").read_text(encoding="utf-8").splitlines():
        cols = line.split("#", 1)[0].split("\t")
        if len(cols) >= 2 and cols[0].strip():
            out[cols[0].strip()] = int(cols[1])
    return out


@functools.cache
def referring_kinds() -> frozenset[str]:
    """rules/lexicon/referring_kinds.txt: the general nouns an invariance may call an object by."""
    return frozenset(read_word_list(lexicon_dir() / "referring_kinds.txt"))


@functools.cache
def kinds_not_said() -> frozenset[tuple[str, str]]:
    """rules/lexicon/kinds_not_said.tsv: (name, general noun) pairs no reader would take for the
    object ("the container" for a spoon)."""
    return frozenset((normalize(f[0]), normalize(f[1])) for _, f in iter_data_lines(lexicon_dir() / "kinds_not_said.tsv")
                     if len(f) >= 2)


def said_as_kind(name: str, kind: str, lex: Lexicon) -> bool:
    """May an object called `name` be called by the general noun `kind` ("the person" for a man)?

    Only for the words an edit writes. What a written word may denote stays WordNet's whole
    reading (a spoon is among "the containers" when uniqueness or absence is judged), so a
    question the words make is checked against every object a reader might take it for."""
    return (lex.canonical(name), kind) not in kinds_not_said()


@functools.cache
def determinerless() -> frozenset[str]:
    """rules/lexicon/determinerless.txt: nouns that never take "the"."""
    return frozenset(read_word_list(lexicon_dir() / "determinerless.txt"))


def dependents(steps: list[Step], index: int) -> set[int]:
    """Steps that read `index`'s value, directly or through others."""
    out: set[int] = set()
    for i in range(index + 1, len(steps)):
        for d in steps[i].dependencies:
            if d == index or d in out:
                out.add(i)
                break
    return out


def with_ids(step: dict[str, Any], ids: tuple[str, ...] | None) -> dict[str, Any]:
    """A reference step with the ids an execution found; any other step as it is ("not(red)")."""
    if step["operation"] not in REFERENCE_OPS:
        return step
    name, old = split_reference(step["argument"])
    if old is None and ids is None:
        return step
    return {**step, "argument": f"{name} ({','.join(ids) if ids else '-'})"}
