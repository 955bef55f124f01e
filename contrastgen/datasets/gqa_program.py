"""The *syntax* of GQA's functional programs (`semantic`): steps, references and relation
arguments, read once for the generator side. One of three modules about programs: what a
program asks, read for a template, is `scene.program_reading`; running one on a graph is
`programs.executor`. Those two and the program edits (`programs/`) all read programs through
this one; the verifier keeps a reader of its own on purpose, so that a mistake here cannot hide
itself there.

A step is `{"operation": str, "argument": str, "dependencies": [int, ...]}`; a reference
argument names objects and GQA's ids for them: `"cat (12,13)"`, `"cat (-)"` (GQA saying there
is none), or a bare `"cat"` (an edited step: every object the name denotes); a relation argument
says `"name,relation,role (ids)"`, the role `s` or `o` of the named object.

What is malformed: anything but a non-empty list of steps; a step without a string operation, or
with an argument that is not a string; a dependency that is not a whole number naming an
earlier step; and a dead step, one no later step reads (only the last step may be read by none).
GQA's programs have no dead steps: a program with one says something its answer does not rest
on, so there is no reading of the question to perturb, and it is refused.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, NamedTuple

REFERENCE_OPS = ("select", "relate", "verify rel", "choose rel")  # arguments that name objects
RELATION_OPS = ("relate", "verify rel", "choose rel")  # arguments that also name a relation
Objects = tuple[str, ...]


class MalformedProgram(ValueError):
    """A `semantic` that is not a program by the rules above; the message says what is wrong."""


@dataclass(frozen=True)
class Step:
    operation: str  # "select", "filter color", "verify rel", ...
    argument: str
    dependencies: tuple[int, ...]
    # read for every step of every candidate edit, so set once when the step is made (a
    # `cached_property` takes a lock at its first read, which cost more than the split);
    # derived from `operation`, so neither compared nor shown
    head: str = field(init=False, repr=False, compare=False)  # "filter" in "filter color"
    kind: str = field(init=False, repr=False, compare=False)  # "color" in "filter color", "" in "filter"

    def __post_init__(self) -> None:
        head, _, kind = self.operation.partition(" ")
        object.__setattr__(self, "head", head)
        object.__setattr__(self, "kind", kind)


def parse_program(semantic: Any) -> list[Step]:
    """GQA's `semantic` as steps; MalformedProgram names what is wrong with one that is not."""
    if not isinstance(semantic, list) or not semantic:
        raise MalformedProgram("no steps")
    steps = []
    read: set[int] = set()
    for i, s in enumerate(semantic):
        if not isinstance(s, dict) or not isinstance(s.get("operation"), str):
            raise MalformedProgram(f"step {i} has no operation")
        argument = s.get("argument", "")
        if not isinstance(argument, str):
            raise MalformedProgram(f"step {i}'s argument is not a string")
        deps = s.get("dependencies") or []
        if not isinstance(deps, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and 0 <= d < i for d in deps):
            raise MalformedProgram(f"step {i} depends on a step not before it")
        read.update(deps)
        steps.append(Step(" ".join(s["operation"].split()), argument.strip(), tuple(deps)))
    dead = set(range(len(steps) - 1)) - read
    if dead:
        raise MalformedProgram(f"step {min(dead)} is read by no later step")
    return steps


def well_formed(semantic: Any) -> bool:
    """Whether `parse_program` reads `semantic`."""
    return parsed(semantic) is not None


def parsed(semantic: Any) -> list[Step] | None:
    """`parse_program`'s steps, or None for a malformed program."""
    try:
        return parse_program(semantic)
    except MalformedProgram:
        return None


def step_of(step: dict[str, Any]) -> Step:
    """One step of an already-read program (an edit of a parsed one), as `parse_program` reads it."""
    return _step(step["operation"], str(step.get("argument", "")), tuple(step.get("dependencies", ())))


def parse_step(operation: str, argument: str, dependencies: tuple[int, ...]) -> Step:
    """One step as `parse_program` reads it, not remembered (`step_of` remembers): for a reader
    whose steps carry their image's ids, each read once, which would only crowd the cache."""
    return Step(" ".join(operation.split()), argument.strip(), dependencies)


_step = functools.lru_cache(maxsize=1 << 16)(parse_step)  # an edit's steps are the same few for every candidate


@functools.lru_cache(maxsize=1 << 16)  # the same arguments are split for every candidate edit
def split_reference(argument: str) -> tuple[str, Objects | None]:
    """`"cat (12,13)"` -> ("cat", ("12", "13")); `"cat (-)"` -> ("cat", ()); `"cat"` -> ("cat", None)."""
    text = argument.strip()
    if text.endswith(")") and "(" in text:
        body, _, inner = text[:-1].rpartition("(")
        ids = tuple(i.strip() for i in inner.split(",") if i.strip() and i.strip() != "-")
        return body.strip(), ids
    return text, None


class Reference(NamedTuple):
    """A reference argument read whole: the name of the objects; for a relation argument
    (`"name,relation,role"`) its relation and the role, `s` or `o`, of the named objects ("" and
    "" for a plain reference or one of fewer than three parts); GQA's ids (None for a bare name)."""

    name: str
    relation: str
    role: str
    ids: Objects | None

    @property
    def is_relation(self) -> bool:
        """Whether it reads as a relation argument: three parts or more, the last `s` or `o`."""
        return self.role in ("s", "o")


@functools.lru_cache(maxsize=1 << 16)  # the same arguments are read for every candidate edit
def read_reference(argument: str) -> Reference:
    """`"man,wearing,s (12)"` -> ("man", "wearing", "s", ("12",)); `"man (12)"` -> ("man", "",
    "", ("12",)). The one reading of a reference's parts on the generator side: the executor,
    the template path's program reading, the edits and their proofs all read through it."""
    # split afresh: this runs only where `read_reference` misses its own cache (or is read past it,
    # as the group search does), and the split's cache would then only keep a second copy
    body, ids = split_reference.__wrapped__(argument)
    parts = [p.strip() for p in body.split(",")]
    if len(parts) < 3:
        return Reference(parts[0], "", "", ids)
    return Reference(parts[0], ",".join(parts[1:-1]).strip(), parts[-1], ids)


def reference_name(step: Step) -> str:
    """The object name a reference argument gives: "man" in "man (12)" and in "man,wearing,s"."""
    return read_reference(step.argument).name


def relation_of(step: Step) -> tuple[str, str, str]:
    """(name, relation, role) of a relation argument; relation "" when it has none."""
    ref = read_reference(step.argument)
    return ref.name, ref.relation, ref.role
