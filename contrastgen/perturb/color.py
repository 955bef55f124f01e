"""`what_color_is_the_x`: replace X by another object with a different, unambiguous colour."""

from __future__ import annotations

from collections.abc import Iterator

from contrastgen.perturb.base import (
    Candidate,
    Context,
    Refusal,
    change,
    distinct_kind,
    evidence,
    fact_color,
    fact_object,
    fact_only,
    kind_names,
    rewrite,
    shuffled,
    unique_object,
)

# Spelling variants that must not count as a different colour.
_SAME_COLOUR = {"grey": "gray", "blonde": "blond"}


def _colour(c: str) -> str:
    return _SAME_COLOUR.get(c, c)


def answer_color(ctx: Context) -> str | None:
    """The graph's answer: the one colour every grounded object has, if there is one."""
    g = ctx.grounding["x"]
    if not g.ok or not g.ids:
        raise Refusal("not_grounded")
    colours = {tuple(sorted({_colour(c) for c in ctx.scene.colors(i, ctx.lex)})) for i in g.ids}
    if len(colours) == 1:
        only = colours.pop()
        if len(only) == 1:
            return only[0]
    return None


def perturb_color(ctx: Context) -> Iterator[Candidate]:
    scene, lex = ctx.scene, ctx.lex
    if not lex.is_color(ctx.answer):
        raise Refusal("answer_mismatch")
    x = ctx.nps["x"]
    g = ctx.grounding["x"]
    if not g.ok or not g.ids:
        raise Refusal("not_grounded")
    original = _colour(ctx.answer)
    if not any(original in {_colour(c) for c in scene.colors(i, lex)} for i in g.ids):
        raise Refusal("answer_mismatch")
    grounded_kinds = {scene.objects[i].name for i in g.ids}
    excluded = set(ctx.match.template.options.get("exclude_distractor_categories", ()))
    names = [o.name for o in scene.objects.values()
             if not lex.is_unannotated_prone(o.name) and lex.category(o.name) not in excluded]
    for name in shuffled(names, ctx.rng):
        if not distinct_kind(name, x.head, *grounded_kinds, lex=lex):
            continue
        oid = unique_object(name, scene, lex)
        if oid is None or oid in g.ids:
            continue
        colors = scene.colors(oid, lex)
        if len(colors) != 1 or _colour(colors[0]) == original:  # "gray" and "grey" both: two colour attributes
            continue
        yield Candidate(
            question=rewrite(ctx, "x", f"the {name}", lex.is_plural(name)),
            answer=colors[0],
            change=change("object", "x", x.head, name),
            ids=(oid,),
            evidence=evidence({"op": "color", "object": oid},
                              [fact_object(scene, oid), fact_only(kind_names(name, scene, lex), [oid]),
                               fact_color(oid, colors)],
                              colors[0]))
