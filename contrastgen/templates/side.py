"""`on_which_side_is_the_x`: replace X by a similar object (same category) on the other side."""

from __future__ import annotations

from collections.abc import Iterator

from contrastgen.perturb import Proposal, Refusal
from contrastgen.templates._definite import definite_replacements, replacing
from contrastgen.templates.base import Context, fact_side
from contrastgen.templates.registry import template

SIDES = ("left", "right")


def answer_side(ctx: Context) -> str | None:
    """The graph's answer to the original question: the side all grounded objects are on."""
    g = ctx.grounding["x"]
    if not g.ok or not g.ids:
        raise Refusal("not_grounded")
    sides = {ctx.scene.side(i) for i in g.ids}
    return sides.pop() if len(sides) == 1 else None


@template("on_which_side_is_the_x", answer=answer_side)
def perturb_side(ctx: Context) -> Iterator[Proposal]:
    if ctx.answer not in SIDES:
        raise Refusal("answer_mismatch")
    x = ctx.nps["x"]
    g = ctx.grounding["x"]
    answer_side(ctx)
    if any(ctx.scene.side(i) is None for i in g.ids):
        # the original's object is within the centre band: its side is not clear, so the original
        # cannot be answered with the certainty its perturbations must meet
        raise Refusal("original_presupposition")
    if any(ctx.scene.side(i) != ctx.answer for i in g.ids):
        raise Refusal("answer_mismatch")  # the graph puts X on the other side than GQA's answer
    category = ctx.lex.category(x.head)
    if category is None:
        raise Refusal("no_distractor")
    other = "right" if ctx.answer == "left" else "left"
    scene, lex = ctx.scene, ctx.lex
    grounded_kinds = {scene.objects[i].name for i in g.ids}
    key = ("side candidates", category, lex)
    kinds = scene.memo.get(key)
    if kinds is None:  # the same for each of the image's side questions about this category
        kinds = scene.memo[key] = [o.name for o in scene.objects.values()
                                   if lex.category(o.name) == category and not lex.is_unannotated_prone(o.name)]
    for name, oid in definite_replacements(ctx, kinds, distinct_from=(x.head, *grounded_kinds),
                                           accept=lambda oid: scene.side(oid) == other):
        yield replacing(ctx, "x", name, oid, answer=other, query={"op": "side", "object": oid},
                        facts=[fact_side(scene, oid)])
