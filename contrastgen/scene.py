"""One scene graph, indexed once: objects by name, edges both ways, boxes.

Why an index: every template asks "which objects are called X", "is there an edge X -rel-> Y",
"which side is this box on". Answering those by rescanning the raw graph for each question and
candidate would make a million-question run quadratic in graph size; the index is built once per
image and shared by all of that image's questions.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from contrastgen.lexicon import Lexicon

# An object whose box centre lies within this fraction of the width around the middle has no
# clear side: "on which side" is not asked of it, and it is not a distractor for that template.
CENTRE_BAND = 0.10


def _clean(text: str) -> str:
    """Lower-case and trim; the common already-clean case costs one comparison."""
    low = text.lower()
    return low if low == low.strip() else low.strip()


@dataclass(frozen=True)
class SceneObject:
    id: str
    name: str  # lower-cased, stripped, as in the graph
    canonical: str
    attributes: frozenset[str]
    x: float
    y: float
    w: float
    h: float

    @property
    def centre_x(self) -> float:
        return self.x + self.w / 2.0


@dataclass
class SceneIndex:
    image_id: str
    width: float
    height: float
    objects: dict[str, SceneObject]
    by_name: dict[str, list[str]] = field(default_factory=dict)
    by_canonical: dict[str, list[str]] = field(default_factory=dict)
    edges: set[tuple[str, str, str]] = field(default_factory=set)
    out_edges: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # id -> [(rel, obj)]
    in_edges: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # id -> [(rel, subj)]

    @classmethod
    def build(cls, image_id: str, graph: dict[str, Any], lex: Lexicon) -> SceneIndex:
        objects: dict[str, SceneObject] = {}
        by_name: dict[str, list[str]] = defaultdict(list)
        by_canonical: dict[str, list[str]] = defaultdict(list)
        raw = graph["objects"]
        # the graph's own order (JSON order, hence deterministic); lists are sorted where it matters
        for oid, o in raw.items():
            name = _clean(o["name"])
            obj = SceneObject(
                id=oid, name=name, canonical=lex.canonical(name),
                attributes=frozenset(_clean(a) for a in o.get("attributes", ())),
                x=float(o["x"]), y=float(o["y"]), w=float(o["w"]), h=float(o["h"]))
            objects[oid] = obj
            by_name[name].append(oid)
            by_canonical[obj.canonical].append(oid)
        edges: set[tuple[str, str, str]] = set()
        out_edges: dict[str, list[tuple[str, str]]] = defaultdict(list)
        in_edges: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for oid, o in raw.items():
            for rel in o.get("relations", ()):
                edge = (oid, _clean(rel["name"]), str(rel["object"]))
                if edge in edges:
                    continue
                edges.add(edge)
                out_edges[edge[0]].append((edge[1], edge[2]))
                in_edges[edge[2]].append((edge[1], edge[0]))
        return cls(image_id=image_id, width=float(graph["width"]),
                   height=float(graph.get("height") or 0.0), objects=objects,
                   by_name=dict(by_name), by_canonical=dict(by_canonical), edges=edges,
                   out_edges=dict(out_edges), in_edges=dict(in_edges))

    def has_any_name(self, names: frozenset[str]) -> bool:
        return any(n in self.by_name for n in names)

    def neighbours(self, obj: str, rel: str, *, symmetric: bool) -> set[str]:
        """Objects s with s -rel-> obj (and obj -rel-> s when symmetric)."""
        out = {s for r, s in self.in_edges.get(obj, ()) if r == rel}
        if symmetric:
            out |= {o for r, o in self.out_edges.get(obj, ()) if r == rel}
        out.discard(obj)
        return out

    # -- geometry ------------------------------------------------------------------------------
    def side(self, oid: str) -> str | None:
        """'left' or 'right' from the box centre; None inside the centre band (no clear side)."""
        c = self.objects[oid].centre_x
        half = self.width / 2.0
        if abs(c - half) < CENTRE_BAND * self.width:
            return None
        return "left" if c < half else "right"

    def colors(self, oid: str, lex: Lexicon) -> list[str]:
        return sorted(a for a in self.objects[oid].attributes if lex.is_color(a))
