"""Loading the OOD data tables from `rules/ood/` (installed as `contrastgen.rules.ood`).

The tables (VQA question types, VQA answer normalisation, stop words, the alpha grid) are data with
a provenance header, not code, so a reader can check them against their sources and a user can
swap them without touching the algorithms.
"""

from __future__ import annotations

import functools
from importlib.resources.abc import Traversable

from contrastgen.errors import InputError
from contrastgen.resources import rules_resource


def _rules_file(name: str) -> Traversable:
    return rules_resource("ood", name)


def read_lines(name: str) -> list[str]:
    """Non-blank, non-comment lines of a `rules/ood` text table, in file order."""
    path = _rules_file(name)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("rules table missing", path=str(path)) from None
    lines = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip() if raw.lstrip().startswith("#") else raw.strip()
        if line:
            lines.append(line)
    return lines


@functools.cache
def vqa_question_types() -> tuple[str, ...]:
    """VQA's 65 question-type prefixes, longest first so the first prefix match is the longest."""
    return tuple(sorted(set(read_lines("vqa_question_types.txt")), key=lambda t: (-len(t.split()), t)))


@functools.cache
def stopwords() -> frozenset[str]:
    return frozenset(read_lines("stopwords.txt"))


@functools.cache
def alpha_grid() -> tuple[float, ...]:
    return tuple(sorted({float(x) for x in read_lines("alpha_sweep.txt")}))
