"""Which CLEVR question family says what another says with one more relation on a reference.

A family fixes its relations, and a question is read only by its own family's texts, so a
relation can be added to a reference ("the bus" -> "the bus [that is] left of the cyan car") only
by writing the question in the family whose text has that clause. CLEVR's families come in such
pairs: `one_hop` "What color is the <Z2> <C2> <M2> <S2> [that is] <R> the <Z> <C> <M> <S>?" is
`zero_hop` "What color is the <Z> <C> <M> <S>?" with its reference `filter_unique(scene)` replaced
by `relate_filter_unique(filter_unique(scene))`; `comparison` 4 is `comparison` 0 with a relation
on its first reference. This is how Super-CLEVR's generator says a redundant relation too: its
rd+ keeps a question of a relation family whose relation changes nothing (a "degenerate" one).

The pairs are found from the template programs, not listed by hand: family B is family A with a
hop at A's template node t when t is a `filter_<X>` (unique, count, exist or plain) over a
`scene` node and B's nodes are A's with t replaced by a new `filter_unique` over that scene node
followed by `relate_filter_<X>` over it, every other node (its inputs shifted) and every
parameter type in place. The parameter and node correspondences come from that alignment.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from contrastgen.datasets.clevr_templates import Family, load_families

_HOPPABLE = ("filter_unique", "filter_count", "filter_exist", "filter")

FamilyKey = tuple[str, int]


@dataclass(frozen=True)
class Hop:
    """Family `target` is family `source` with a relation added to the reference at `node`."""

    source: FamilyKey
    target: FamilyKey
    node: int  # the source template node whose reference gains the relation
    node_map: dict[int, int]  # source template node -> target template node (t -> the relate)
    param_map: dict[str, str]  # source parameter -> target parameter
    relation: str  # the target's relation parameter ("<R>")
    anchor_node: int  # the target's new `filter_unique`: the object the relation points to
    anchor: tuple[str, ...]  # the parameters that describe that object


Node = tuple[str, list[int], list[str]]  # type, inputs, parameters


def _canonical(family: Family) -> tuple[list[Node], list[int]]:
    """The family's nodes in one order that does not depend on how its file lists them (inputs
    before their node, each input's subtree in input order, from the answer node back), and for
    each position the node's index in the file. Two families whose programs are the same tree
    list their nodes alike, whatever order their files chose."""
    order: list[int] = []

    def visit(i: int) -> None:
        if i in order:
            return
        for j in family.nodes[i]["inputs"]:
            visit(j)
        order.append(i)

    visit(len(family.nodes) - 1)
    at = {i: k for k, i in enumerate(order)}
    nodes = [(str(family.nodes[i]["type"]), [at[j] for j in family.nodes[i]["inputs"]],
              list(family.nodes[i].get("side_inputs", []))) for i in order]
    return nodes, order


def _with_hop(nodes: list[Node], t: int, anchor_side: list[str], relation: str) -> list[Node]:
    """`nodes` with node t given a relation: a new `filter_unique` over t's input (the object
    related to), then `relate_<t's type>` over it with t's parameters; later nodes shifted."""
    def shift(j: int) -> int:
        return j if j < t else j + 1

    out: list[Node] = []
    for j, (kind, inputs, side) in enumerate(nodes):
        if j == t:
            out.append(("filter_unique", list(inputs), anchor_side))
            out.append((f"relate_{kind}", [t], [relation, *side]))
        else:
            out.append((kind, [shift(i) for i in inputs], side))
    return out


def _match(source: Family, t_file: int, target: Family) -> Hop | None:
    snodes, sorder = _canonical(source)
    tnodes, torder = _canonical(target)
    t = sorder.index(t_file)
    if len(tnodes) != len(snodes) + 1 or tnodes[t][0] != "filter_unique" or not tnodes[t + 1][2]:
        return None
    anchor_side, relation = tnodes[t][2], tnodes[t + 1][2][0]
    expected = _with_hop(snodes, t, anchor_side, relation)
    kinds = {**source.params, relation: target.params[relation], **{p: target.params[p] for p in anchor_side}}
    param_map: dict[str, str] = {}
    for j, ((kind, inputs, side), (tkind, tinputs, tside)) in enumerate(zip(expected, tnodes, strict=True)):
        if kind != tkind or inputs != tinputs or [kinds[p] for p in side] != [target.params[p] for p in tside]:
            return None
        if j == t:  # the new object's description
            continue
        pairs = zip(side[1:], tside[1:], strict=True) if j == t + 1 else zip(side, tside, strict=True)
        for p, q in pairs:
            if param_map.setdefault(p, q) != q:
                return None
    if set(param_map) != set(source.params) or len(set(param_map.values())) != len(param_map) \
            or set(param_map.values()) | {relation, *anchor_side} != set(target.params):
        return None
    node_map = {sorder[k]: torder[k if k < t else k + 1] for k in range(len(snodes))}
    return Hop((source.file, source.index), (target.file, target.index), t_file, node_map, param_map,
               relation, torder[t], tuple(anchor_side))


@functools.lru_cache(maxsize=1)
def hops() -> dict[FamilyKey, tuple[Hop, ...]]:
    """For each family, the hops it has: one per reference that some family words with a relation
    (the first such family in file order when several do)."""
    families = load_families()
    out: dict[FamilyKey, tuple[Hop, ...]] = {}
    for key, source in families.items():
        found = []
        for t, node in enumerate(source.nodes):
            inputs = node["inputs"]
            if node["type"] not in _HOPPABLE or len(inputs) != 1 or source.nodes[inputs[0]]["type"] != "scene":
                continue
            hop = next((h for target in families.values() if (h := _match(source, t, target)) is not None), None)
            if hop is not None:
                found.append(hop)
        if found:
            out[key] = tuple(found)
    return out


def hop_at(family: FamilyKey, node: int) -> Hop | None:
    """The hop that adds a relation to `family`'s reference at template node `node`, if any."""
    return next((h for h in hops().get(family, ()) if h.node == node), None)


def hop_into(family: FamilyKey) -> tuple[Hop, ...]:
    """The hops whose target is `family`: how its relations could be dropped again."""
    return tuple(h for hs in hops().values() for h in hs if h.target == family)
