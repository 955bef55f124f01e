"""Reading GQA's functional programs (`semantic`) for the object ids they name.

Why: a GQA question's program says exactly which scene-graph objects its phrases denote
("select: wall (722332)", "verify rel: chair,behind,o (1310765)"). Grounding through those ids is
exact; lexical grounding is only the fallback for questions without a program.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProgramRef:
    """One object reference in a program: a name, the ids it denotes, and how it was reached."""

    step: int
    operation: str
    name: str
    ids: tuple[str, ...]  # empty: GQA's "(-)", the object is not in the graph
    relation: str = ""
    role: str = ""  # for relate/verify rel: "s" (named is subject) or "o" (named is object)
    dependency: int | None = None


def references(semantic: list[dict] | None) -> list[ProgramRef]:
    """Every step whose argument names objects: select, relate, verify rel, choose rel, filter chains."""
    refs: list[ProgramRef] = []
    for i, step in enumerate(semantic or []):
        if not isinstance(step, dict):
            continue
        op = str(step.get("operation", ""))
        arg = str(step.get("argument", "")).strip()
        if not arg.endswith(")") or "(" not in arg:
            continue
        body, _, inner = arg[:-1].rpartition("(")
        ids = tuple(x.strip() for x in inner.split(",") if x.strip() not in ("", "-"))
        deps = step.get("dependencies") or []
        dep = deps[0] if deps and isinstance(deps[0], int) else None
        if op == "select":
            refs.append(ProgramRef(i, op, body.strip().lower(), ids, dependency=dep))
        elif op in ("relate", "verify rel", "choose rel"):
            parts = [p.strip() for p in body.split(",")]
            if len(parts) >= 3:
                refs.append(ProgramRef(i, op, parts[0].lower(), ids, relation=",".join(parts[1:-1]),
                                       role=parts[-1], dependency=dep))
    return refs


def selected_ids(semantic: list[dict] | None, step: int | None,
                 refs_list: list[ProgramRef] | None = None) -> tuple[str, ...]:
    """The ids a step's output denotes (the ids of the nearest naming step up its chain)."""
    refs = {r.step: r for r in (refs_list if refs_list is not None else references(semantic))}
    seen = set()
    while step is not None and step not in seen:
        seen.add(step)
        if step in refs:
            return refs[step].ids
        deps = (semantic or [])[step].get("dependencies") or []
        step = deps[0] if deps else None
    return ()
