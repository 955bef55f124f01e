"""`on_which_side_is_the_x`: replace X by a similar object (same category) on the other side."""

from __future__ import annotations

from collections.abc import Iterator

from contrastgen.perturb.base import (
    Candidate,
    Context,
    Refusal,
    change,
    distinct_kind,
    evidence,
    fact_object,
    fact_only,
    fact_side,
    kind_names,
    rewrite,
    shuffled,
    unique_object,
)

SIDES = ("left", "right")


def answer_side(ctx: Context) -> str | None:
    """The graph's answer to the original question: the side all grounded objects are on."""
    g = ctx.grounding["x"]
    if not g.ok or not g.ids:
        raise Refusal("not_grounded")
    sides = {ctx.scene.side(i) for i in g.ids}
    return sides.pop() if len(sides) == 1 else None


def perturb_side(ctx: Context) -> Iterator[Candidate]:
    if ctx.answer not in SIDES:
        raise Refusal("answer_mismatch")
    x = ctx.nps["x"]
    g = ctx.grounding["x"]
    answer_side(ctx)
    if any(ctx.scene.side(i) not in (ctx.answer, None) for i in g.ids):
        raise Refusal("answer_mismatch")  # the graph puts X on the other side than GQA's answer
    category = ctx.lex.category(x.head)
    if category is None:
        raise Refusal("no_distractor")
    other = "right" if ctx.answer == "left" else "left"
    scene, lex = ctx.scene, ctx.lex
    grounded_kinds = {scene.objects[i].name for i in g.ids}
    kinds = [o.name for o in scene.objects.values()
             if lex.category(o.name) == category and not lex.is_unannotated_prone(o.name)]
    for name in shuffled(kinds, ctx.rng):
        if not distinct_kind(name, x.head, *grounded_kinds, lex=lex):
            continue
        oid = unique_object(name, scene, lex)
        if oid is None or scene.side(oid) != other:
            continue
        names = kind_names(name, scene, lex)
        yield Candidate(
            question=rewrite(ctx, "x", f"the {name}", lex.is_plural(name)),
            answer=other,
            change=change("object", "x", x.head, name),
            ids=(oid,),
            evidence=evidence({"op": "side", "object": oid},
                              [fact_object(scene, oid), fact_only(names, [oid]), fact_side(scene, oid)],
                              other))
