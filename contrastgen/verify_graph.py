"""One scene graph indexed for the verifier's look-ups, and the error a failed check raises.

Why an index: a record has several perturbations and each has several facts, all asking
"which objects are named X" or "is there an edge a -r-> b". Scanning the object list for each
would make a pass over 200k perturbations quadratic in graph size; the index is built once per
image and every look-up is a dictionary hit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from contrastgen.verify_rules import normalize_name


class EvidenceProblem(Exception):
    """A check did not hold; the message says which and why, for a human reading a report."""


def field(record: Mapping[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    """`record[key]` of the expected type, or an EvidenceProblem naming what is wrong."""
    if not isinstance(record, Mapping):
        raise EvidenceProblem(f"{what} is not an object")
    if key not in record:
        raise EvidenceProblem(f"{what} has no field {key!r}")
    value = record[key]
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in _as_tuple(kind):
        raise EvidenceProblem(f"{what} field {key!r} has the wrong type ({type(value).__name__})")
    return value


def name_list(record: Mapping[str, Any], key: str, what: str) -> list[str]:
    """A non-empty list of names, normalised."""
    names = field(record, key, list, what)
    if not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise EvidenceProblem(f"{what} field {key!r} must be a non-empty list of names")
    return [normalize_name(n) for n in names]


def object_id(record: Mapping[str, Any], key: str, what: str) -> str:
    """Object ids are strings in GQA; accept integers written by other tools."""
    return str(field(record, key, (str, int), what))


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


class GraphIndex:
    """Objects by normalised name, edges as a set and both ways round, attributes per object."""

    def __init__(self, graph: Mapping[str, Any]):
        self.width: float = graph["width"]
        self.objects: Mapping[str, Mapping[str, Any]] = graph["objects"]
        self._by_name: dict[str, set[str]] = defaultdict(set)
        self._edges: set[tuple[str, str, str]] = set()
        self._subjects: dict[tuple[str, str], set[str]] = defaultdict(set)  # (rel, object) -> subjects
        self._targets: dict[tuple[str, str], set[str]] = defaultdict(set)  # (subject, rel) -> objects
        self._attributes: dict[str, frozenset[str]] = {}
        for oid, obj in self.objects.items():
            oid = str(oid)
            self._by_name[normalize_name(obj["name"])].add(oid)
            self._attributes[oid] = frozenset(normalize_name(a) for a in obj.get("attributes", ()))
            for rel in obj.get("relations", ()):
                name, target = normalize_name(rel["name"]), str(rel["object"])
                self._edges.add((oid, name, target))
                self._subjects[(name, target)].add(oid)
                self._targets[(oid, name)].add(target)

    def obj(self, oid: str) -> Mapping[str, Any]:
        """The object with id `oid`, or an EvidenceProblem naming the unknown id."""
        found = self.objects.get(oid)
        if found is None:
            raise EvidenceProblem(f"object {oid} is not in the scene graph")
        return found

    def name_of(self, oid: str) -> str:
        return normalize_name(self.obj(oid)["name"])

    def attributes_of(self, oid: str) -> frozenset[str]:
        self.obj(oid)
        return self._attributes[oid]

    def ids_named(self, names: Iterable[str]) -> set[str]:
        """Ids of all objects whose normalised name is one of `names` (already normalised)."""
        out: set[str] = set()
        for n in names:
            out |= self._by_name.get(n, set())
        return out

    def has_edge(self, subject: str, rel: str, target: str) -> bool:
        return (subject, rel, target) in self._edges

    def related(self, names: Iterable[str], rel: str, target: str, *, symmetric: bool) -> set[str]:
        """Ids named one of `names` with `x -rel-> target` (or `target -rel-> x` if symmetric)."""
        candidates = self.ids_named(names)
        hits = candidates & self._subjects.get((rel, target), set())
        if symmetric:
            hits |= candidates & self._targets.get((target, rel), set())
        return hits

    def center(self, oid: str) -> float:
        o = self.obj(oid)
        return o["x"] + o["w"] / 2

    def side(self, oid: str) -> str:
        """`left` if the box centre is strictly left of the image's middle, else `right` (README)."""
        return "left" if self.center(oid) < self.width / 2 else "right"
