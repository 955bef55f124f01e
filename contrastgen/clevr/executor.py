"""Executing CLEVR- and Super-CLEVR-format programs on a scene.

A program is CLEVR's list of `{"type", "inputs", "value_inputs"}` nodes; each node's inputs are
earlier nodes' indices. Semantics, as Super-CLEVR's `question_engine.py` defines them, with the
choices it leaves open made explicit (docs/clevr.md has the table):
- `scene` is every object; `filter_<attr>[v]` keeps objects whose attribute is v, and for shapes
  also objects whose category is v ("bus" keeps every bus); `partfilter_<attr>` does the same on
  parts, where a part name matches every part whose words include its words ("front wheel"
  names `wheel_front` and a bus's `wheel_front_left`, "wheel" every wheel), so a reference to
  "the front wheel" is only unique when it is in English.
- `unique` of anything but exactly one object or part is not an answer: execution stops with
  `Invalid`, the reason naming the node, so a caller refuses instead of guessing.
- a filter whose value is no value of its attribute (`filter_size[""]`, `filter_shape["thing"]`:
  an open parameter, which CLEVR's generators never write into a filter node) is not an answer
  either: Super-CLEVR's engine keeps every object under an empty value and none under "thing",
  so the program has no one meaning (`datasets.clevr_reading` writes no node for it).
- `relate[r]` of object i is the objects in relation r to i (`relationships[r][i]`);
  `same_<attr>` of i is the other objects sharing i's value (never i itself).
- `object2part` lists the parts a scene describes of the object(s), `part2object` their objects.
- `count`, `exist`, `equal_*`, `less_than`, `greater_than` as their names say; `query_<attr>`
  returns the value, of an object or (`partquery_`) of a part.
Every node's output is kept, so a caller can cite the trace as evidence.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from contrastgen.clevr.scene_view import ClevrScene, Part
from contrastgen.datasets.clevr_vocab import load_vocabulary, part_display

Value = Any  # tuple of objects or parts, an object (int), a part, an int, a bool or a str


@dataclass(frozen=True)
class Invalid:
    """Why a program has no answer on a scene (a `unique` node that does not denote one thing)."""

    node: int
    reason: str


@dataclass(frozen=True)
class Execution:
    outputs: tuple[Value, ...]  # one per node
    answer: Value


def part_matches(raw: str, value: str) -> bool:
    """A part name names every part whose words include its words: "front wheel" names a bus's
    `wheel_front_left` too (a front left wheel is a front wheel), as Super-CLEVR's engine, which
    matches by substring, also reads it; "wheel" names every wheel."""
    return set(part_display(value).split()) <= set(part_display(raw).split())


_KIND_OF_FILTER = {"size": "Size", "color": "Color", "material": "Material", "shape": "Shape", "partname": "Partname"}


@functools.lru_cache(maxsize=1)
def _filter_values() -> dict[str, frozenset[str]]:
    """The values each filter may hold: its attribute's values in the vocabulary."""
    vocab = load_vocabulary()
    return {attribute: frozenset(vocab.values[kind]) for attribute, kind in _KIND_OF_FILTER.items()}


def _open_filter(kind: str, value: str) -> bool:
    """Whether a filter node's value is no value of its attribute (an open parameter)."""
    if not kind.startswith(("filter_", "partfilter_")):
        return False
    return value not in _filter_values()[kind.split("_", 1)[1]]


def _attribute_filter(attribute: str) -> Callable[[ClevrScene, list[Value], str], Value]:
    vocab = load_vocabulary()

    def run(scene: ClevrScene, inputs: list[Value], value: str) -> Value:
        objects = scene.objects
        if attribute == "shape":
            return tuple(i for i in inputs[0] if vocab.shape_matches(objects[i].shape, value))
        return tuple(i for i in inputs[0] if objects[i].value(attribute) == value)
    return run


def _part_filter(attribute: str) -> Callable[[ClevrScene, list[Value], str], Value]:
    def run(scene: ClevrScene, inputs: list[Value], value: str) -> Value:
        objects = scene.objects
        if attribute == "partname":
            return tuple(p for p in inputs[0] if part_matches(p[1], value))
        return tuple(p for p in inputs[0] if objects[p[0]].parts[p[1]].get(attribute) == value)
    return run


def _query(attribute: str) -> Callable[[ClevrScene, list[Value]], Value]:
    def run(scene: ClevrScene, inputs: list[Value]) -> Value:
        target = inputs[0]
        if _is_part(target):
            if attribute == "partname":
                return target[1]
            return scene.objects[target[0]].parts[target[1]][attribute]
        return scene.objects[target].value(attribute)
    return run


def _same(attribute: str) -> Callable[[ClevrScene, list[Value]], Value]:
    def run(scene: ClevrScene, inputs: list[Value]) -> Value:
        i = inputs[0]
        mine = scene.objects[i].value(attribute)
        return tuple(o.index for o in scene.objects if o.index != i and o.value(attribute) == mine)
    return run


def _object2part(scene: ClevrScene, inputs: list[Value]) -> Value:
    objs = inputs[0] if isinstance(inputs[0], tuple) else (inputs[0],)  # objects, or one object
    return tuple(p for i in objs for p in scene.parts_of(i))


def _is_part(value: Value) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], str)


def _part2object(scene: ClevrScene, inputs: list[Value]) -> Value:
    parts: Sequence[Part] = (inputs[0],) if _is_part(inputs[0]) else inputs[0]
    return tuple(sorted({p[0] for p in parts}))


# Functions without value inputs: (scene, inputs) -> output.
PLAIN: dict[str, Callable[[ClevrScene, list[Value]], Value]] = {
    "scene": lambda s, _: tuple(range(len(s.objects))),
    "union": lambda s, x: tuple(sorted(set(x[0]) | set(x[1]))),
    "intersect": lambda s, x: tuple(sorted(set(x[0]) & set(x[1]))),
    "count": lambda s, x: len(x[0]),
    "exist": lambda s, x: len(x[0]) > 0,
    "less_than": lambda s, x: x[0] < x[1],
    "greater_than": lambda s, x: x[0] > x[1],
    "object2part": _object2part,
    "part2object": _part2object,
    **{f"equal_{a}": (lambda s, x: x[0] == x[1]) for a in ("color", "shape", "size", "material", "integer", "object")},
    **{f"query_{a}": _query(a) for a in ("color", "shape", "size", "material")},
    **{f"partquery_{a}": _query(a) for a in ("color", "size", "material", "partname")},
    **{f"same_{a}": _same(a) for a in ("color", "shape", "size", "material")},
}
# Functions with one value input: (scene, inputs, value) -> output.
VALUED: dict[str, Callable[[ClevrScene, list[Value], str], Value]] = {
    "relate": lambda s, x, r: s.related.get((r, x[0]), ()),
    **{f"filter_{a}": _attribute_filter(a) for a in ("color", "shape", "size", "material")},
    **{f"partfilter_{a}": _part_filter(a) for a in ("color", "size", "material", "partname")},
}
UNIQUE = ("unique", "uniquepart")
FUNCTIONS = frozenset(PLAIN) | frozenset(VALUED) | frozenset(UNIQUE)


def execute(program: Sequence[dict[str, Any]], scene: ClevrScene) -> Execution | Invalid:
    """Run `program` on `scene`; `Invalid` when a `unique` node does not denote exactly one thing."""
    outputs: list[Value] = []
    for n, node in enumerate(program):
        inputs = [outputs[i] for i in node["inputs"]]
        kind = node["type"]
        if kind in UNIQUE:
            if len(inputs[0]) != 1:
                return Invalid(n, f"{kind} over {len(inputs[0])} {'parts' if kind == 'uniquepart' else 'objects'}")
            out = inputs[0][0]
        elif kind in VALUED:
            value = node["value_inputs"][0]
            if _open_filter(kind, value):
                return Invalid(n, f"{kind} with no value of its attribute ({value!r})")
            out = VALUED[kind](scene, inputs, value)
        else:
            out = PLAIN[kind](scene, inputs)
        outputs.append(out)
    return Execution(tuple(outputs), outputs[-1])
