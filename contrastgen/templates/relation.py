"""The two `is_the_x_rel_the_y` templates.

`__relation`: Rel -> its opposite. The graph must annotate X and Y with one of the pair (the
paper's "No aug. - No relation between (pillow, cat)"); an edge for one member decides the other.
`__object`: X -> X' for which "X' Rel Y" has the other truth value, again decided by an edge.
"""

from __future__ import annotations

from collections.abc import Iterator

from contrastgen.language.phrase import finish, replace_spans
from contrastgen.perturb import Proposal, Refusal
from contrastgen.templates._definite import definite_replacements, replacing
from contrastgen.templates.base import (
    Context,
    change,
    evidence,
    fact_object,
    fact_relation,
    referent,
    single_id,
)
from contrastgen.templates.registry import template


def _grounded_pair(ctx: Context, *, x_kept: bool) -> tuple[str, str, str, str | None]:
    """X's and Y's objects, the relation and its opposite; refused when the pair's edges contradict.

    `x_kept`: the perturbed question keeps X's words, so they must denote X's object alone.
    """
    xid = referent(ctx, "x") if x_kept else single_id(ctx.grounding.get("x"))
    yid = referent(ctx, "y")
    if xid == yid:
        raise Refusal("ambiguous")
    rel = ctx.match.spans["rel"].text.lower()
    opp = ctx.lex.opposite_relation(rel)
    if opp is not None and contradictory(ctx.scene.edges, xid, yid, rel, opp):
        raise Refusal("inconsistent_graph")
    return xid, yid, rel, opp


def contradictory(edges: set[tuple[str, str, str]], a: str, b: str, rel: str, opp: str) -> bool:
    """Do the graph's edges between a and b say both "rel" and its opposite?

    Opposites in rules/relations.tsv are also converses (a left of b = b right of a), so four
    edges can speak about the pair: a-rel->b and b-opp->a say yes; a-opp->b and b-rel->a say no.
    """
    says_yes = (a, rel, b) in edges or (b, opp, a) in edges
    says_no = (a, opp, b) in edges or (b, rel, a) in edges
    return says_yes and says_no


def _query(subject: str, rel: str, obj: str, opposite: str | None) -> dict:
    q = {"op": "relation", "subject": subject, "rel": rel, "object": obj}
    if opposite:
        q["opposite"] = opposite
    return q


def answer_relation(ctx: Context) -> str | None:
    """"yes" for the edge, "no" for its opposite's edge, unknown otherwise."""
    xid, yid, rel, opp = _grounded_pair(ctx, x_kept=True)
    if (xid, rel, yid) in ctx.scene.edges:
        return None if opp and (xid, opp, yid) in ctx.scene.edges else "yes"
    if opp and (xid, opp, yid) in ctx.scene.edges:
        return "no"
    return None


@template("is_the_x_rel_the_y__relation", answer=answer_relation)
def perturb_relation(ctx: Context) -> Iterator[Proposal]:
    xid, yid, rel, opp = _grounded_pair(ctx, x_kept=True)
    if opp is None:
        raise Refusal("no_opposite")
    scene = ctx.scene
    has_rel = (xid, rel, yid) in scene.edges
    has_opp = (xid, opp, yid) in scene.edges
    if not (has_rel or has_opp):
        raise Refusal("no_relation")
    if (ctx.answer == "yes") != has_rel:
        raise Refusal("answer_mismatch")
    new_answer = "no" if has_rel else "yes"
    edge = (xid, rel, yid) if has_rel else (xid, opp, yid)
    start, end = ctx.span("rel")
    yield Proposal(
        question=finish(replace_spans(ctx.match.question, [(start, end, opp)])),
        answer=new_answer,
        change=change("relation", "rel", rel, opp),
        evidence=evidence(_query(xid, opp, yid, rel),
                          [fact_object(scene, xid), fact_object(scene, yid), fact_relation(*edge)],
                          new_answer))


@template("is_the_x_rel_the_y__object", answer=answer_relation)
def perturb_relation_object(ctx: Context) -> Iterator[Proposal]:
    xid, yid, rel, opp = _grounded_pair(ctx, x_kept=False)
    scene, lex = ctx.scene, ctx.lex
    has_rel = (xid, rel, yid) in scene.edges
    if ctx.answer not in ("yes", "no") or (ctx.answer == "yes") != has_rel:
        raise Refusal("answer_mismatch")
    # yes -> no needs an X' with the opposite edge; no -> yes an X' with the edge itself.
    wanted = opp if ctx.answer == "yes" else rel
    if wanted is None:
        raise Refusal("no_opposite")
    x = ctx.nps["x"]
    subjects = {s for r, s in scene.in_edges.get(yid, ()) if r == wanted}
    names = [scene.objects[s].name for s in subjects if not lex.is_unannotated_prone(scene.objects[s].name)]

    def acceptable(oid: str) -> bool:  # not when the graph says both rel and its opposite of the pair
        return oid in subjects and oid != yid and not (opp is not None and contradictory(scene.edges, oid, yid, rel, opp))

    new_answer = "no" if ctx.answer == "yes" else "yes"
    for name, oid in definite_replacements(
            ctx, names, distinct_from=(x.head, scene.objects[xid].name, scene.objects[yid].name),
            accept=acceptable):
        yield replacing(ctx, "x", name, oid, answer=new_answer, query=_query(oid, rel, yid, opp),
                        facts=[fact_object(scene, yid), fact_relation(oid, wanted, yid)])
