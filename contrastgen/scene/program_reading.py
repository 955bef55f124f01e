"""The *reading* of a GQA program (`semantic`): what it asks, in the terms a template reads a
question in (`ProgramReading`), and the one-atom edit of it a template's perturbation carries.

One of three modules about programs: the syntax (steps, references) is `datasets.gqa_program`,
executing a program on a graph is `programs.executor`, and this module reads a program's shape
for the template path.

Why: a GQA question's program says exactly what is asked and which scene-graph objects its
phrases denote ("select: wall (722332)", "verify rel: chair,behind,o (1310765)"). Grounding
through those ids is exact, and the program is the authority on which relation is asked; a
perturbation of such a question carries the program with its one changed atom.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contrastgen.datasets.gqa_program import read_reference, split_reference, well_formed

# -- what a whole program asks -------------------------------------------------------------------

@dataclass(frozen=True)
class SlotRef:
    """What the program says one slot denotes: the naming step, its name and ids, and the steps
    between it and the question (filters, and relate steps that a simple phrase cannot have)."""

    step: int
    name: str
    ids: tuple[str, ...]
    filters: tuple[str, ...] = ()  # "color: white", ...
    related: bool = False  # the chain passes a relate step: the words must carry a modifier
    chain: tuple[int, ...] = ()  # the chain's steps, select first; () when the name is an argument
    # of the asking step itself ("verify rel: chair,behind,o", "relate: fence,near,s")


@dataclass(frozen=True)
class ProgramReading:
    """The query a program asks, in the terms a template reads a question in.

    `kind` is one of READING_KINDS; `slots` maps the template's slots to references (for "see",
    the two options in program order, as "a" and "b"); `relation` and `relation_step` are set for
    the relation and exist_rel kinds. Why it exists: the program, not the template's reading of the
    words, is the authority on which relation is asked and which objects are meant; the engine
    refuses a question whose words read otherwise (`program_mismatch`).
    """

    kind: str
    slots: dict[str, SlotRef]
    relation: str = ""
    relation_step: int | None = None
    final_step: int = -1


READING_KINDS = ("relation", "exist_rel", "see", "color", "side")


def _parse_named(arg: str) -> tuple[str, tuple[str, ...]] | None:
    """A reference argument's name and ids; None without ids (`datasets.gqa_program`)."""
    name, ids = split_reference(arg)
    return None if ids is None else (name, ids)


def _deps(step: dict) -> list[int]:
    deps = step.get("dependencies") or []
    return [d for d in deps if isinstance(d, int)]


def _chain(semantic: list[dict], step: int) -> SlotRef | None:
    """Walk from `step` back to the select that starts its chain."""
    filters: list[str] = []
    related = False
    seen: list[int] = []
    named: tuple[int, str, tuple[str, ...]] | None = None
    while 0 <= step < len(semantic) and step not in seen:
        seen.append(step)
        s = semantic[step]
        op = str(s.get("operation", ""))
        arg = str(s.get("argument", ""))
        if op.startswith("filter"):
            filters.append(f"{op[len('filter'):].strip()}: {arg.strip()}".lstrip(": "))
        elif op == "relate":
            ref = read_reference(arg)
            if ref.ids is None:
                return None
            if named is None:
                named = (step, ref.name.lower(), ref.ids)
            related = True
        elif op == "select":
            parsed = _parse_named(arg)
            if parsed is None or _deps(s):  # a select starts a chain: it reads no other step
                return None
            if named is None:
                named = (step, parsed[0].lower(), parsed[1])
            return SlotRef(named[0], named[1], named[2], tuple(reversed(filters)), related,
                           tuple(reversed(seen)))
        else:
            return None
        deps = _deps(s)
        if len(deps) != 1:
            return None
        step = deps[0]
    return None


def _relation_arg(arg: str) -> tuple[str, str, str, tuple[str, ...]] | None:
    """"chair,behind,o (12)" -> ("chair", "behind", "o", ("12",)); None without ids or where it
    is no relation argument (`datasets.gqa_program.read_reference`)."""
    ref = read_reference(arg)
    if ref.ids is None or not ref.is_relation:
        return None
    return ref.name.lower(), ref.relation.lower(), ref.role, ref.ids


def read_program(semantic: list[dict] | None, *, parsed: bool = False) -> ProgramReading | None:
    """The reading of a program whose shape is one the templates ask, else None (a malformed
program among them: `datasets.gqa_program`). `parsed`: the caller has parsed it already, so it is
well formed and need not be checked again."""
    if not parsed and not well_formed(semantic):
        return None
    assert semantic is not None
    last = len(semantic) - 1
    step = semantic[last]
    op = str(step.get("operation", ""))
    arg = str(step.get("argument", "")).strip()
    deps = _deps(step)
    if op == "verify rel" and len(deps) == 1:
        rel = _relation_arg(arg)
        chain = _chain(semantic, deps[0])
        if rel is None or chain is None:
            return None
        name, relation, role, ids = rel
        named = SlotRef(last, name, ids)
        x, y = (named, chain) if role == "s" else (chain, named)
        return ProgramReading("relation", {"x": x, "y": y}, relation, last, last)
    if op == "exist" and len(deps) == 1:
        relate = semantic[deps[0]]
        if relate.get("operation") != "relate" or len(_deps(relate)) != 1:
            return None
        rel = _relation_arg(str(relate.get("argument", "")))
        chain = _chain(semantic, _deps(relate)[0])
        if rel is None or chain is None or rel[2] != "s":
            return None
        x = SlotRef(deps[0], rel[0], rel[3])
        return ProgramReading("exist_rel", {"x": x, "y": chain}, rel[1], deps[0], last)
    if op == "or" and len(deps) == 2:
        options = []
        for d in deps:
            ex = semantic[d] if 0 <= d < len(semantic) else {}
            if ex.get("operation") != "exist" or len(_deps(ex)) != 1:
                return None
            chain = _chain(semantic, _deps(ex)[0])
            if chain is None or chain.related:
                return None
            options.append(chain)
        return ProgramReading("see", {"a": options[0], "b": options[1]}, final_step=last)
    if len(deps) == 1 and ((op == "query" and arg in ("color", "hposition"))
                           or op == "choose hposition"):
        chain = _chain(semantic, deps[0])
        if chain is None:
            return None
        kind = "color" if arg == "color" else "side"
        return ProgramReading(kind, {"x": chain}, final_step=last)
    return None


# -- edited programs for perturbations -----------------------------------------------------------

def named_arg(name: str, ids: tuple[str, ...]) -> str:
    """"cat (12)", "cats (12,13)", or "cat (-)" when the graph has none."""
    return f"{name} ({','.join(ids) if ids else '-'})"


def _step(operation: str, argument: str, dependencies: list[int]) -> dict[str, Any]:
    return {"operation": operation, "argument": argument, "dependencies": dependencies}


def _replace_chain(semantic: list[dict], chain: tuple[int, ...], new_first: dict[str, Any]) -> list[dict]:
    """Replace the steps of one reference chain by one select, renumbering the other steps."""
    chain_steps = set(chain)
    first = min(chain_steps)
    out: list[dict] = []
    new_index: dict[int, int] = {}
    for i, s in enumerate(semantic):
        if i in chain_steps:
            if i == first:
                new_index[i] = len(out)
                out.append(new_first)
            continue
        new_index[i] = len(out)
        out.append(dict(s))
    end = chain[-1]  # the step whose output the rest of the program reads
    for s in out:
        if s is not new_first:
            s["dependencies"] = [new_index[first] if d == end else new_index[d]
                                 for d in s.get("dependencies") or []]
    return out


def edit_program(semantic: list[dict], reading: ProgramReading, kind: str, slot: str, *,
                 name: str = "", ids: tuple[str, ...] = (), relation: str = "") -> list[dict]:
    """The original's program with the one atom a perturbation changed, ids included.

    A relation change rewrites the relation of the step that asks it. An object change rewrites
    the step that names the slot: a name inside a relate / verify rel step keeps its step, and a
    slot reached by a select chain (with its filters or relate modifiers, which the new words no
    longer say) becomes one select of the new name.
    """
    out = [dict(s, dependencies=list(s.get("dependencies") or [])) for s in semantic]
    if kind == "relation":
        step = reading.relation_step
        rel = _relation_arg(str(out[step]["argument"]))
        if rel is None:
            raise ValueError("the relation step has no relation argument")
        out[step]["argument"] = named_arg(f"{rel[0]},{relation},{rel[2]}", rel[3])
        return out
    ref = reading.slots[slot]
    if not ref.chain:
        rel = _relation_arg(str(out[ref.step]["argument"]))
        if rel is None:
            raise ValueError("the naming step has no relation argument")
        out[ref.step]["argument"] = named_arg(f"{name},{rel[1]},{rel[2]}", ids)
        return out
    return _replace_chain(out, ref.chain, _step("select", named_arg(name, ids), []))
