"""Checks that each `evidence.facts` entry holds in the scene graph (the "Facts" table of docs/output-formats.md).

Why check facts as well as re-run the query: the facts are what a human auditor or a crowd
task shows as the proof. A fact that does not hold means the generator's explanation is wrong
even when its answer happens to be right, and that is a bug worth failing on. A fact kind this
module does not know is a failure, so an unchecked proof can never count as a checked one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from contrastgen.verify.graph import EvidenceProblem, GraphIndex, field, name_list, object_id
from contrastgen.verify.rules import VerifyRules, normalize_name

Fact = dict[str, Any]
_NUMBER = (int, float)


def _object(f: Fact, g: GraphIndex, rules: VerifyRules) -> None:
    oid = object_id(f, "id", "object fact")
    name = normalize_name(field(f, "name", str, "object fact"))
    actual = g.name_of(oid)
    if actual != name:
        raise EvidenceProblem(f"object fact: object {oid} is named {actual!r}, not {name!r}")
    wanted = f.get("attributes") or []
    if not isinstance(wanted, list) or not all(isinstance(a, str) for a in wanted):
        raise EvidenceProblem("object fact field 'attributes' must be a list of strings")
    missing = sorted({normalize_name(a) for a in wanted} - g.attributes_of(oid))
    if missing:
        raise EvidenceProblem(f"object fact: object {oid} lacks attributes {missing}")


def _relation(f: Fact, g: GraphIndex, rules: VerifyRules) -> None:
    subject = object_id(f, "subject", "relation fact")
    target = object_id(f, "object", "relation fact")
    rel = normalize_name(field(f, "name", str, "relation fact"))
    g.obj(subject)
    g.obj(target)
    if not g.has_edge(subject, rel, target):
        raise EvidenceProblem(f"relation fact: no edge {subject} -{rel}-> {target} in the graph")


def _absent(f: Fact, g: GraphIndex, rules: VerifyRules) -> None:
    names = name_list(f, "names", "absent fact")
    present = sorted(g.ids_named(names))
    if present:
        found = ", ".join(f"{oid} ({g.name_of(oid)})" for oid in present)
        raise EvidenceProblem(f"absent fact: the graph has {found}")


def _not_related(f: Fact, g: GraphIndex, rules: VerifyRules) -> None:
    names = name_list(f, "names", "not_related fact")
    rel = normalize_name(field(f, "rel", str, "not_related fact"))
    target = object_id(f, "object", "not_related fact")
    symmetric = field(f, "symmetric", bool, "not_related fact")
    g.obj(target)
    hits = sorted(g.related(names, rel, target, symmetric=symmetric))
    if hits:
        raise EvidenceProblem(f"not_related fact: {', '.join(hits)} {rel} {target} in the graph")


def _only(f: Fact, g: GraphIndex, rules: VerifyRules) -> None:
    names = name_list(f, "names", "only fact")
    ids = field(f, "ids", list, "only fact")
    if not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids):
        raise EvidenceProblem("only fact field 'ids' must be a list of object ids")
    claimed = {str(i) for i in ids}
    actual = g.ids_named(names)
    if claimed != actual:
        raise EvidenceProblem(f"only fact: objects named {names} are {sorted(actual)}, "
                              f"not {sorted(claimed)}")


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def _side(f: Fact, g: GraphIndex, rules: VerifyRules) -> None:
    oid = object_id(f, "id", "side fact")
    obj = g.obj(oid)
    claims = {k: field(f, k, _NUMBER, "side fact") for k in ("x", "w", "image_width", "center")}
    actual = {"x": obj["x"], "w": obj["w"], "image_width": g.width, "center": g.center(oid)}
    wrong = [f"{k} {claims[k]} (graph: {actual[k]})" for k in claims if not _same(claims[k], actual[k])]
    if wrong:
        raise EvidenceProblem(f"side fact for object {oid}: wrong {', '.join(wrong)}")
    side = normalize_name(field(f, "side", str, "side fact"))
    if side != g.side(oid):
        raise EvidenceProblem(f"side fact: object {oid} has centre {actual['center']} in an image "
                              f"{g.width} wide, so it is on the {g.side(oid)}, not the {side}")


def _color(f: Fact, g: GraphIndex, rules: VerifyRules) -> None:
    oid = object_id(f, "id", "color fact")
    colors = field(f, "colors", list, "color fact")
    if not all(isinstance(c, str) for c in colors):
        raise EvidenceProblem("color fact field 'colors' must be a list of strings")
    claimed = {normalize_name(c) for c in colors}
    actual = g.attributes_of(oid) & rules.colors
    if claimed != actual:
        raise EvidenceProblem(f"color fact: object {oid} has colours {sorted(actual)}, "
                              f"not {sorted(claimed)}")


def _part(f: Fact, g: GraphIndex, rules: VerifyRules) -> None:
    """A Super-CLEVR part: the object has a part of that name, with those attributes."""
    oid = object_id(f, "object", "part fact")
    name = field(f, "name", str, "part fact")
    part = (g.obj(oid).get("parts") or {}).get(name)
    if part is None:
        raise EvidenceProblem(f"part fact: object {oid} has no part {name!r}")
    missing = sorted(set(f.get("attributes") or []) - set(part.get("attributes", [])))
    if missing:
        raise EvidenceProblem(f"part fact: part {name!r} of object {oid} lacks attributes {missing}")


def _object_count(f: Fact, g: GraphIndex, rules: VerifyRules) -> None:
    """The closed world an absence rests on: a CLEVR scene lists every object, and this many."""
    count = field(f, "count", int, "object_count fact")
    if count != len(g.objects):
        raise EvidenceProblem(f"object_count fact: the scene has {len(g.objects)} objects, not {count}")


FACTS: dict[str, Callable[[Fact, GraphIndex, VerifyRules], None]] = {
    "part": _part,
    "object_count": _object_count,
    "object": _object,
    "relation": _relation,
    "absent": _absent,
    "not_related": _not_related,
    "only": _only,
    "side": _side,
    "color": _color,
}


def check_fact(fact: Fact, graph: GraphIndex, rules: VerifyRules) -> None:
    """Return if `fact` holds in `graph`; raise EvidenceProblem saying why not otherwise."""
    kind = field(fact, "fact", str, "fact")
    check = FACTS.get(kind)
    if check is None:
        raise EvidenceProblem(f"unknown fact kind {kind!r} (known: {', '.join(sorted(FACTS))})")
    check(fact, graph, rules)
