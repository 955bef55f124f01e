"""`do_you_see_x_or_y`: make the answer flip by replacing one option.

yes -> no: exactly one option is present and the other is provably absent; replace the present
one by a plausible kind that is provably absent. (Two present options would need two changes.)
no -> yes: both are absent; replace one by a kind that is present in the graph.
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
    kind_names,
    rewrite,
    shuffled,
)
from contrastgen.templates.registry import template


def _presence(ctx: Context) -> dict[str, bool]:
    for np in (ctx.nps["x"], ctx.nps["y"]):
        if np.rest or np.modifier is not None or not np.head:
            raise Refusal("not_grounded")
        if np.attributes:
            raise Refusal("unsupported_phrase")  # "white street signs or cars": scope is ambiguous
    return {s: bool(denoted_ids(ctx.nps[s].head, ctx.scene, ctx.lex)) for s in ("x", "y")}


def answer_see(ctx: Context) -> str | None:
    """The graph's answer; "no" only when both absences are provable."""
    present = _presence(ctx)
    if any(present.values()):
        return "yes"
    if all(absent_provably(ctx.nps[s].head, ctx.scene, ctx.lex) for s in ("x", "y")):
        return "no"
    return None


def _plausible(ctx: Context) -> list[str]:
    """The kinds that co-occur in other graphs with a kind of this image (each kind's ten most
    frequent): the same for each of the image's questions, so made once per image."""
    if ctx.corpus is None:
        return []
    made = ctx.scene.memo.get(("see pool",))
    if made is not None and made[0] is ctx.corpus:  # kept with the corpus it was made from
        return made[1]
    pool: list[str] = []
    for k in ctx.scene.by_canonical:
        pool.extend(ctx.corpus.cooccurring(k)[:10])
    ctx.scene.memo["see pool",] = (ctx.corpus, pool)
    return pool


@template("do_you_see_x_or_y", answer=answer_see)
def perturb_see(ctx: Context) -> Iterator[Proposal]:
    scene, lex = ctx.scene, ctx.lex
    x, y = ctx.nps["x"], ctx.nps["y"]
    present = _presence(ctx)
    computed = "yes" if any(present.values()) else "no"
    if ctx.answer not in ("yes", "no") or computed != ctx.answer:
        raise Refusal("answer_mismatch")
    if ctx.answer == "yes":
        if all(present.values()):
            raise Refusal("no_distractor")
        slot = "x" if present["x"] else "y"
        other = "y" if slot == "x" else "x"
        if not absent_provably(ctx.nps[other].head, scene, lex):
            raise Refusal("unannotated_prone")
        plan = [(slot, k) for k in shuffled(_plausible(ctx), ctx.rng)]
    else:
        for s in ("x", "y"):
            if not absent_provably(ctx.nps[s].head, scene, lex):
                raise Refusal("unannotated_prone")
        kinds = sorted({o.name for o in scene.objects.values()})
        plan = [(s, k) for k in kinds for s in ("x", "y")]
        ctx.rng.shuffle(plan)
    for slot, name in plan:
        np, other_np = ctx.nps[slot], ctx.nps["y" if slot == "x" else "x"]
        if not distinct_kind(name, x.head, y.head, lex=lex):
            continue
        if ctx.answer == "yes":
            if not absent_provably(name, scene, lex):
                continue
            new_answer, ids = "no", []
            facts = [fact_absent(kind_names(name, scene, lex)),
                     fact_absent(kind_names(other_np.head, scene, lex))]
        else:
            ids = denoted_ids(name, scene, lex)
            if not ids:
                continue
            new_answer = "yes"
            facts = [fact_object(scene, ids[0])]
        text, plural = realise(name, np, lex)
        options = {slot: kind_names(name, scene, lex),
                   ("y" if slot == "x" else "x"): kind_names(other_np.head, scene, lex)}
        yield Proposal(
            question=rewrite(ctx, slot, text, plural, agree_verb=slot == "x"),  # "Is there X or Y"
            answer=new_answer,
            change=change("object", slot, np.head, name),
            ids=tuple(ids),
            evidence=evidence({"op": "exists_any", "names": [sorted(options["x"]), sorted(options["y"])],
                               "attributes": []}, facts, new_answer))
