"""`what_color_is_the_x`: replace X by another object with a different, unambiguous colour."""

from __future__ import annotations

from collections.abc import Iterator

from contrastgen.perturb import Proposal, Refusal
from contrastgen.templates._definite import definite_replacements, replacing
from contrastgen.templates.base import Context, fact_color
from contrastgen.templates.registry import template

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


def _candidate_names(ctx: Context) -> list[str]:
    """The names of the image's objects a colour question may be moved to (not of a kind
    annotators leave out, nor of a category the template excludes): the same for each of the
    image's colour questions, so made once per image (the scene's memo)."""
    excluded = tuple(sorted(set(ctx.match.template.options.get("exclude_distractor_categories", ()))))
    scene, lex = ctx.scene, ctx.lex
    key = ("colour candidates", excluded, lex)
    names = scene.memo.get(key)
    if names is None:
        names = scene.memo[key] = [o.name for o in scene.objects.values()
                                   if not lex.is_unannotated_prone(o.name) and lex.category(o.name) not in excluded]
    return names


@template("what_color_is_the_x", answer=answer_color)
def perturb_color(ctx: Context) -> Iterator[Proposal]:
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
    names = _candidate_names(ctx)

    def one_other_colour(oid: str) -> bool:  # "gray" and "grey" both: two colour attributes
        colors = scene.colors(oid, lex)
        return oid not in g.ids and len(colors) == 1 and _colour(colors[0]) != original

    for name, oid in definite_replacements(ctx, names, distinct_from=(x.head, *grounded_kinds),
                                           accept=one_other_colour):
        colors = scene.colors(oid, lex)
        yield replacing(ctx, "x", name, oid, answer=colors[0], query={"op": "color", "object": oid},
                        facts=[fact_color(oid, colors)])
