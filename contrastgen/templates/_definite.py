"""The candidate loop of the templates that replace "the X" by "the X'" (colour, side, and the
relation template's object edit).

Why shared: a definite replacement is only sound when X' names exactly one object of the graph
(otherwise "the X'" is ambiguous and the proof is about some object, not the one a reader
picks), is a different kind from every object the question already names, and is drawn in the
seeded order that keeps runs deterministic. Each template adds only its own condition and facts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from contrastgen.perturb import Proposal
from contrastgen.templates.base import (
    Context,
    change,
    distinct_kind,
    evidence,
    fact_object,
    fact_only,
    kind_names,
    rewrite,
    shuffled,
    unique_object,
)


def definite_replacements(ctx: Context, names: list[str], *, distinct_from: tuple[str, ...],
                          accept: Callable[[str], bool]) -> Iterator[tuple[str, str]]:
    """(name, object id) for each candidate kind, in seeded order, that denotes one object of the
    graph, differs in kind from `distinct_from`, and whose object the template `accept`s."""
    scene, lex = ctx.scene, ctx.lex
    for name in shuffled(names, ctx.rng):
        if not distinct_kind(name, *distinct_from, lex=lex):
            continue
        oid = unique_object(name, scene, lex)
        if oid is None or not accept(oid):
            continue
        yield name, oid


def replacing(ctx: Context, slot: str, name: str, oid: str, *, answer: str, query: dict[str, Any],
              facts: list[dict[str, Any]]) -> Proposal:
    """The candidate "the <name>" in place of the slot, proven by the object, its being the only
    one of its kind, and the template's own `facts`."""
    scene, lex = ctx.scene, ctx.lex
    return Proposal(
        question=rewrite(ctx, slot, f"the {name}", lex.is_plural(name)),
        answer=answer,
        change=change("object", slot, ctx.nps[slot].head, name),
        ids=(oid,),
        evidence=evidence(query, [fact_object(scene, oid), fact_only(kind_names(name, scene, lex), [oid]),
                                  *facts], answer))
