"""`are_there_x_near_the_y`: replace X by a kind that is not near Y (yes -> no) or that is (no -> yes).

yes -> no uses a kind absent from the whole graph (and not one graphs habitually leave out):
"no X' near Y" is then proven by "no X' at all", which an unannotated near-edge cannot undermine.
Candidates come from the kinds that co-occur with Y in other scene graphs, so they are plausible.
"""

from __future__ import annotations

from collections.abc import Iterator

from contrastgen.language.phrase import realise
from contrastgen.perturb import Proposal, Refusal
from contrastgen.scene.ground import denoted_ids
from contrastgen.templates.base import (
    Context,
    absent_provably,
    change,
    distinct_kind,
    evidence,
    fact_absent,
    fact_object,
    fact_relation,
    kind_names,
    referent,
    rewrite,
    shuffled,
)
from contrastgen.templates.registry import template

NEAR = "near"


def _near(ctx: Context) -> tuple[str, set[str], str]:
    """(Y's id, Y's near-neighbours, the graph's answer)."""
    x = ctx.nps["x"]
    if x.rest or x.modifier is not None or not x.head:
        raise Refusal("not_grounded")
    if x.attributes:
        raise Refusal("unsupported_phrase")
    yid = referent(ctx, "y")
    neighbours = ctx.scene.neighbours(yid, NEAR, symmetric=True)
    x_ids = set(denoted_ids(x.head, ctx.scene, ctx.lex))
    return yid, neighbours, "yes" if neighbours & x_ids else "no"


def answer_near(ctx: Context) -> str | None:
    return _near(ctx)[2]


@template("are_there_x_near_the_y", answer=answer_near)
def perturb_near(ctx: Context) -> Iterator[Proposal]:
    scene, lex = ctx.scene, ctx.lex
    x, y = ctx.nps["x"], ctx.nps["y"]
    yid, neighbours, computed = _near(ctx)
    if ctx.answer not in ("yes", "no") or computed != ctx.answer:
        raise Refusal("answer_mismatch")
    y_name = scene.objects[yid].name
    if ctx.answer == "yes":
        pool = list(ctx.corpus.cooccurring(scene.objects[yid].canonical)) if ctx.corpus else []
        plan: list[tuple[str, str | None]] = [(k, None) for k in shuffled(pool, ctx.rng)]
    else:
        by_name: dict[str, str] = {}
        for n in sorted(neighbours):
            by_name.setdefault(scene.objects[n].name, n)
        plan = [(k, by_name[k]) for k in shuffled(list(by_name), ctx.rng)]
    for name, neighbour in plan:
        if not distinct_kind(name, x.head, y_name, y.head, lex=lex):
            continue
        ids: tuple[str, ...]  # declared: mypy would type the empty tuple below as tuple[()]
        if neighbour is None:
            if not absent_provably(name, scene, lex):
                continue
            new_answer, ids = "no", ()
            facts = [fact_object(scene, yid), fact_absent(kind_names(name, scene, lex))]
        else:
            new_answer = "yes"
            ids = tuple(sorted(n for n in neighbours if scene.objects[n].name == name))
            edge = (neighbour, NEAR, yid) if (neighbour, NEAR, yid) in scene.edges else (yid, NEAR, neighbour)
            facts = [fact_object(scene, neighbour), fact_object(scene, yid), fact_relation(*edge)]
        text, plural = realise(name, x, lex)
        yield Proposal(
            question=rewrite(ctx, "x", text, plural),
            answer=new_answer,
            change=change("object", "x", x.head, name),
            ids=ids,
            evidence=evidence({"op": "exists_related", "names": sorted(kind_names(name, scene, lex)),
                               "rel": NEAR, "object": yid, "symmetric": True}, facts, new_answer))
