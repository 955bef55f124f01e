"""Building small GQA-format scene graphs in tests, with spatial relations kept consistent."""

from __future__ import annotations

from typing import Any

OPPOSITE = {"to the left of": "to the right of", "to the right of": "to the left of",
            "above": "below", "below": "above", "in front of": "behind", "behind": "in front of"}


class GraphBuilder:
    def __init__(self, width: int = 600, height: int = 400):
        self.graph: dict[str, Any] = {"width": width, "height": height, "objects": {}}
        self._next = 100

    def add(self, name: str, x: float, y: float = 100, w: float = 40, h: float = 40,
            attributes: list[str] | None = None) -> str:
        oid = str(self._next)
        self._next += 1
        self.graph["objects"][oid] = {"name": name, "x": x, "y": y, "w": w, "h": h,
                                      "attributes": list(attributes or []), "relations": []}
        return oid

    def relate(self, subject: str, rel: str, obj: str, *, both_ways: bool = True) -> GraphBuilder:
        self.graph["objects"][subject]["relations"].append({"name": rel, "object": obj})
        if both_ways:
            back = OPPOSITE.get(rel, rel if rel in ("near", "next to", "beside") else None)
            if back:
                self.graph["objects"][obj]["relations"].append({"name": back, "object": subject})
        return self


def question(text: str, answer: str, image: str = "1", **extra: Any) -> dict[str, Any]:
    return {"imageId": image, "question": text, "answer": answer, **extra}


# Plain GQA records written by hand, where a test states every object and program step itself
# (no spatial bookkeeping): one 40x40 box at x on a 500x400 image, and a program step.
def plain_object(name: str, x: int, attrs: tuple[str, ...] | list[str] = (),
                 rels: tuple[tuple[str, str], ...] | list[tuple[str, str]] = ()) -> dict[str, Any]:
    return {"name": name, "x": x, "y": 100, "w": 40, "h": 40, "attributes": list(attrs),
            "relations": [{"name": r, "object": o} for r, o in rels]}


def plain_graph(**objects: dict[str, Any]) -> dict[str, Any]:
    return {"width": 500, "height": 400, "objects": objects}


def program_step(op: str, arg: str, *deps: int) -> dict[str, Any]:
    return {"operation": op, "argument": arg, "dependencies": list(deps)}
