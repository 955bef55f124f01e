"""A small executor for `evidence.query`, written from the op table of docs/output-formats.md alone.

Why a second executor: the generator computes each new answer with its own logic; re-running
the query here, with code that shares nothing with it, turns "the generator says so" into
"two independent readings of the graph agree". An op this executor does not know is a failure,
never a pass, so a new op cannot slip through unchecked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contrastgen.verify.graph import EvidenceProblem, GraphIndex, field, name_list, object_id
from contrastgen.verify.rules import VerifyRules, normalize_name

Query = dict[str, Any]
_WHAT = "query"


def _side(q: Query, g: GraphIndex, rules: VerifyRules) -> str:
    return g.side(object_id(q, "object", _WHAT))


def _color(q: Query, g: GraphIndex, rules: VerifyRules) -> str:
    oid = object_id(q, "object", _WHAT)
    colors = sorted(g.attributes_of(oid) & rules.colors)
    if len(colors) != 1:
        found = ", ".join(colors) if colors else "none"
        raise EvidenceProblem(f"object {oid} has {len(colors)} colour attributes ({found}); "
                              "'what colour' needs exactly one")
    return colors[0]


def _option_names(q: Query) -> list[list[str]]:
    options = field(q, "names", list, _WHAT)
    if not options or not all(isinstance(o, list) for o in options):
        raise EvidenceProblem("query field 'names' of exists_any must be a non-empty list of name lists")
    return [name_list({"names": o}, "names", _WHAT) for o in options]


def _exists_any(q: Query, g: GraphIndex, rules: VerifyRules) -> str:
    options = _option_names(q)
    wanted = frozenset(normalize_name(a) for a in _attribute_list(q))
    for option in options:
        for oid in g.ids_named(option):
            if wanted <= g.attributes_of(oid):
                return "yes"
    return "no"


def _attribute_list(q: Query) -> list[str]:
    attrs = q.get("attributes", [])
    if attrs is None:
        return []
    if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
        raise EvidenceProblem("query field 'attributes' must be a list of strings")
    return attrs


def _exists_related(q: Query, g: GraphIndex, rules: VerifyRules) -> str:
    names = name_list(q, "names", _WHAT)
    rel = normalize_name(field(q, "rel", str, _WHAT))
    target = object_id(q, "object", _WHAT)
    symmetric = field(q, "symmetric", bool, _WHAT)
    g.obj(target)
    return "yes" if g.related(names, rel, target, symmetric=symmetric) else "no"


def _relation(q: Query, g: GraphIndex, rules: VerifyRules) -> str:
    subject = object_id(q, "subject", _WHAT)
    target = object_id(q, "object", _WHAT)
    rel = normalize_name(field(q, "rel", str, _WHAT))
    g.obj(subject)
    g.obj(target)
    holds = g.has_edge(subject, rel, target) or (rel in rules.symmetric and g.has_edge(target, rel, subject))
    opposite = rules.opposites.get(rel)
    if "opposite" in q:
        opposite = normalize_name(field(q, "opposite", str, _WHAT))
    refuted = opposite is not None and g.has_edge(subject, opposite, target)
    # opposites are converses too (a left of b = b right of a): the reversed edges may contradict
    converse_yes = opposite is not None and g.has_edge(target, opposite, subject)
    converse_no = opposite is not None and g.has_edge(target, rel, subject)
    if (holds or converse_yes) and (refuted or converse_no):
        raise EvidenceProblem(f"the graph's edges between {subject} and {target} say both {rel!r} and "
                              f"{opposite!r}; the answer is ambiguous")
    if holds:
        return "yes"
    if refuted:
        return "no"
    if opposite is None:
        raise EvidenceProblem(f"no edge {subject} -{rel}-> {target}, and {rel!r} has no opposite "
                              "to prove 'no' with")
    raise EvidenceProblem(f"neither {subject} -{rel}-> {target} nor {subject} -{opposite}-> {target} "
                          "is in the graph; the answer is unknown")


OPS: dict[str, Callable[[Query, GraphIndex, VerifyRules], str]] = {
    "side": _side,
    "color": _color,
    "exists_any": _exists_any,
    "exists_related": _exists_related,
    "relation": _relation,
}


def execute_query(query: Query, graph: GraphIndex, rules: VerifyRules) -> str:
    """The answer `query` has on `graph`, or an EvidenceProblem if it has none (or is unknown)."""
    op = field(query, "op", str, _WHAT)
    run = OPS.get(op)
    if run is None:
        raise EvidenceProblem(f"unknown query op {op!r} (known: {', '.join(sorted(OPS))})")
    return run(query, graph, rules)
