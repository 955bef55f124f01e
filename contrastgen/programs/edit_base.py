"""What every kind of program edit shares: reading a step's argument, the steps that read another,
the word lists the name edits consult, and the perturbations found so far.

Why apart from `edits`: each kind of edit has a module of its own (`edit_objects`,
`edit_relations`, `edit_attributes`, `edit_redundancy`), and they all need these.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from contrastgen.language.lexicon import Lexicon, iter_data_lines, normalize, read_word_list
from contrastgen.programs.gqa import Step, split_reference
from contrastgen.resources import lexicon_dir, rules_file

REFERENCE_OPS = ("select", "relate", "verify rel", "choose rel")
RELATION_OPS = ("relate", "verify rel", "choose rel")
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
    for i, s in enumerate(steps):
        if i > index and any(d == index or d in out for d in s.dependencies):
            out.add(i)
    return out


def with_ids(step: dict[str, Any], ids: tuple[str, ...] | None) -> dict[str, Any]:
    """A reference step with the ids an execution found; any other step as it is ("not(red)")."""
    if step["operation"] not in REFERENCE_OPS:
        return step
    name, old = split_reference(step["argument"])
    if old is None and ids is None:
        return step
    return {**step, "argument": f"{name} ({','.join(ids) if ids else '-'})"}


def reference_name(step: Step) -> str:
    """The object name a reference argument gives: "man" in "man (12)" and in "man,wearing,s"."""
    return split_reference(step.argument)[0].split(",")[0].strip()


def relation_of(step: Step) -> tuple[str, str, str]:
    """(name, relation, role) of a relation argument; relation "" when it has none."""
    parts = [p.strip() for p in split_reference(step.argument)[0].split(",")]
    if len(parts) < 3:
        return parts[0], "", ""
    return parts[0], ",".join(parts[1:-1]).strip(), parts[-1]


@dataclass
class Found:
    """One question's perturbations so far, without repeats of the image's questions or of each
    other, ranked contrasts first.

    Why contrasts first: a k = 1 or k = 3 contrast set is the paper's test (the answer changes);
    an invariance (the answer provably stays) is a second, labelled test that fills the ranks
    the contrasts leave free, as on the CLEVR path. So an invariance beyond those ranks is never
    kept, and the search ends only when `max_k` contrasts are found (or nothing is left to try)."""

    existing: set[str]
    normalize: Any
    max_k: int
    contrasts: list[dict[str, Any]] = field(default_factory=list)
    invariances: list[dict[str, Any]] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)
    aligned: bool = False  # some step's argument was found in the words

    def offer(self, p: dict[str, Any]) -> None:
        invariance = p["kind"] == "invariance"
        if invariance and not self.wants_invariance:
            return
        key = self.normalize(p["question"])
        if key not in self.existing and key not in self.keys:
            self.keys.add(key)
            (self.invariances if invariance else self.contrasts).append(p)

    @property
    def wants_invariance(self) -> bool:
        """Could one more invariance still get a rank? (Contrasts found later only take ranks.)"""
        return len(self.invariances) < self.max_k - len(self.contrasts)

    @property
    def items(self) -> list[dict[str, Any]]:
        """The perturbations in rank order: the contrasts, then the invariances that fit."""
        return (self.contrasts + self.invariances)[:self.max_k]

    @property
    def full(self) -> bool:
        return len(self.contrasts) >= self.max_k
