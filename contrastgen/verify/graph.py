"""One scene graph indexed for the verifier's look-ups, and the error a failed check raises.

Why an index: a record has several perturbations and each has several facts, all asking
"which objects are named X" or "is there an edge a -r-> b". Scanning the object list for each
would make a pass over 200k perturbations quadratic in graph size; the index is built once per
image and every look-up is a dictionary hit.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from contrastgen.verify.rules import normalize_name


class EvidenceProblem(Exception):
    """A check did not hold; the message says which and why, for a human reading a report."""


def field(record: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    """`record[key]` of the expected type, or an EvidenceProblem naming what is wrong."""
    if not isinstance(record, dict):
        raise EvidenceProblem(f"{what} is not an object")
    if key not in record:
        raise EvidenceProblem(f"{what} has no field {key!r}")
    value = record[key]
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in _as_tuple(kind):
        raise EvidenceProblem(f"{what} field {key!r} has the wrong type ({type(value).__name__})")
    return value


def name_list(record: dict[str, Any], key: str, what: str) -> list[str]:
    """A non-empty list of names, normalised."""
    names = field(record, key, list, what)
    try:
        normalized = _normalized_names(tuple(names))
    except TypeError:  # an element that is no name (a list, an object)
        normalized = None
    if normalized is None:
        raise EvidenceProblem(f"{what} field {key!r} must be a non-empty list of names")
    return list(normalized)


@functools.lru_cache(maxsize=16384, typed=True)
def _normalized_names(names: tuple[Any, ...]) -> tuple[str, ...] | None:
    """The names normalised; None unless they are non-blank strings, at least one. Cached: a
    fact's list of every name a noun may go by recurs in every perturbation about that noun."""
    if not names or not all(isinstance(n, str) and n.strip() for n in names):
        return None
    return tuple(normalize_name(n) for n in names)


def object_id(record: dict[str, Any], key: str, what: str) -> str:
    """Object ids are strings in GQA; accept integers written by other tools."""
    return str(field(record, key, (str, int), what))


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


class GraphIndex:
    """Objects by normalised name; each object's attributes and outgoing edges on first use.

    Building the index happens once per image, but a question touches only a handful of objects,
    so per-object sets of attributes and (relation, target) edges are made lazily: a GQA graph
    with hundreds of spatial edges costs only the edges of the objects the evidence names.
    """

    def __init__(self, graph: dict[str, Any]):
        self.width: float = graph["width"]
        self.height: float = float(graph.get("height") or 0)
        self.objects: dict[str, dict[str, Any]] = graph["objects"]
        self._by_name: dict[str, set[str]] = {}
        self._out: dict[str, frozenset[tuple[str, str]]] = {}
        self._attributes: dict[str, frozenset[str]] = {}
        for oid, obj in self.objects.items():
            self._by_name.setdefault(obj["name"].strip().lower(), set()).add(str(oid))
        self._runs: dict[bytes, Any] = {}
        self._runs_for: tuple[Any, ...] = ()

    def program_runs(self, *rules: Any) -> dict[bytes, Any]:
        """The executor's memo of program runs on this graph (`verify.program`), under `rules`
        (the objects a run reads besides the graph): another set of rules starts another memo."""
        if len(self._runs_for) != len(rules) or any(a is not b for a, b in zip(self._runs_for, rules, strict=True)):
            self._runs, self._runs_for = {}, rules
        return self._runs

    def obj(self, oid: str) -> dict[str, Any]:
        """The object with id `oid`, or an EvidenceProblem naming the unknown id."""
        found = self.objects.get(oid)
        if found is None:
            raise EvidenceProblem(f"object {oid} is not in the scene graph")
        return found

    def name_of(self, oid: str) -> str:
        return normalize_name(self.obj(oid)["name"])

    def attributes_of(self, oid: str) -> frozenset[str]:
        attrs = self._attributes.get(oid)
        if attrs is None:
            attrs = frozenset(a.strip().lower() for a in self.obj(oid).get("attributes") or ())
            self._attributes[oid] = attrs
        return attrs

    def _edges_from(self, oid: str) -> frozenset[tuple[str, str]]:
        """(relation, target) pairs of `oid`'s outgoing edges; empty for an unknown id."""
        edges = self._out.get(oid)
        if edges is None:
            obj = self.objects.get(oid)
            rels = obj.get("relations") or () if obj is not None else ()
            edges = frozenset((r["name"].strip().lower(), str(r["object"])) for r in rels)
            self._out[oid] = edges
        return edges

    def ids_named(self, names: Iterable[str]) -> set[str]:
        """Ids of all objects whose normalised name is one of `names` (already normalised)."""
        out: set[str] = set()
        by_name = self._by_name
        for n in by_name.keys() & names:  # the graph's names among them, matched in C
            out |= by_name[n]
        return out

    def has_edge(self, subject: str, rel: str, target: str) -> bool:
        return (rel, target) in self._edges_from(subject)

    def related(self, names: Iterable[str], rel: str, target: str, *, symmetric: bool) -> set[str]:
        """Ids named one of `names` with `x -rel-> target` (or `target -rel-> x` if symmetric)."""
        back = self._edges_from(target)
        return {oid for oid in self.ids_named(names)
                if (rel, target) in self._edges_from(oid) or (symmetric and (rel, oid) in back)}

    def center(self, oid: str) -> float:
        o = self.obj(oid)
        return o["x"] + o["w"] / 2

    def side(self, oid: str) -> str:
        """`left` if the box centre is strictly left of the image's middle, else `right` (docs/output-formats.md)."""
        return "left" if self.center(oid) < self.width / 2 else "right"

    def position(self, oid: str, axis: str) -> str | None:
        """GQA's hposition / vposition of a box: left/right, top/bottom, `middle` within a tenth of
        the size around the centre; None when the graph gives no height."""
        o = self.obj(oid)
        size = self.width if axis == "hposition" else self.height
        if not size:
            return None
        c = o["x"] + o["w"] / 2 if axis == "hposition" else o["y"] + o["h"] / 2
        if abs(c - size / 2) < 0.1 * size:
            return "middle"
        low, high = ("left", "right") if axis == "hposition" else ("top", "bottom")
        return low if c < size / 2 else high
