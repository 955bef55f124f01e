"""Re-checking a CLEVR-family perturbation: its program, its answer, its words and its facts.

Independent of the generator's executor (`contrastgen.clevr.executor`) on purpose: this module
interprets CLEVR programs itself, straight over the scene graph's objects, so a bug in one is
caught by the other. What it shares with the generator is rule data: the Super-CLEVR shape
categories (rules/clevr/metadata_superclevr.json) and the question families, through which it
reads the perturbation's words back into a program (the words must say what the program does).

Checks, each a failure of its own:
- the program runs: every `unique` denotes exactly one object or part, and every filter holds a
  value of its attribute (an open one, `filter_size[""]` or `filter_shape["thing"]`, means
  every object to Super-CLEVR's engine under one spelling and none under the other, so it
  means nothing certain, and the words never say it);
- its trace equals the evidence's trace, and its answer the evidence's and the perturbation's;
- a contrast's answer differs from the original's, an invariance one's equals it;
- a contrast changes exactly one value of the original program; a redundancy edit only adds or
  drops attribute filters;
- the question's words, read with the record's family, give exactly the perturbation's program;
- every part name the program writes keeps the same parts by its words as by Super-CLEVR's
  engine, which keeps a part when the written raw name is a substring of the part's ("a left
  door" is `door_left_s`, no substring of `door_mid_left`, which the words do not settle).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from contrastgen.resources import rules_resource
from contrastgen.verify.graph import GraphIndex

Problem = tuple[str, str]
_POSITION = {"right", "left", "front", "back", "center", "mid", "s"}
_RELATIONS = {"left": "to the left of", "right": "to the right of", "behind": "behind", "front": "in front of"}
_ATTRS = ("size", "color", "material")
_FILTERS = {"filter_size", "filter_color", "filter_material", "filter_shape",
            "partfilter_size", "partfilter_color", "partfilter_material", "partfilter_partname"}


class ProgramFails(Exception):
    pass


@functools.lru_cache(maxsize=1)
def _categories() -> dict[str, str]:
    meta = orjson.loads(rules_resource("clevr", "metadata_superclevr.json").read_bytes())
    return {shape: cat for cat, shapes in meta["types"]["Shape"].items() for shape in shapes}


@functools.lru_cache(maxsize=1)
def _value_types() -> dict[str, str]:
    meta = orjson.loads(rules_resource("clevr", "metadata_clevr.json").read_bytes())
    return {v: kind.lower() for kind in ("Size", "Color", "Material") for v in meta["types"][kind]}


@functools.lru_cache(maxsize=1)
def _shapes() -> frozenset[str]:
    """Every shape a filter may name: CLEVR's, Super-CLEVR's specific shapes and their categories."""
    clevr = orjson.loads(rules_resource("clevr", "metadata_clevr.json").read_bytes())["types"]["Shape"]
    return frozenset(clevr) | frozenset(_categories()) | frozenset(_categories().values())


@functools.lru_cache(maxsize=1)
def _part_words() -> tuple[frozenset[str], ...]:
    return tuple(frozenset(_words(name)) for names in _part_dict().values() for name in names)


def _is_filter_value(attribute: str, value: Any) -> bool:
    """Whether `value` is one of `attribute`'s values (a part name: the words of some part)."""
    if not isinstance(value, str) or not value:
        return False
    if attribute == "shape":
        return value in _shapes()
    if attribute == "partname":
        words = set(_words(value))
        return any(words <= known for known in _part_words())
    return _value_types().get(value) == attribute


def _words(raw: str) -> tuple[str, ...]:
    parts = raw.split("_")
    if parts[-1] == "s":
        parts = parts[:-1]
    return tuple(sorted(parts))  # the same words in any order name the same part


class _Scene:
    def __init__(self, objects: Mapping[str, Mapping[str, Any]]):
        types = _value_types()
        self.n = len(objects)
        self.attrs: list[dict[str, str]] = []
        self.parts: list[dict[str, dict[str, str]]] = []
        self.rel: dict[tuple[str, int], set[int]] = {}
        for i in range(self.n):
            obj = objects[str(i)]
            typed = {types[a]: a for a in obj.get("attributes", []) if a in types}
            typed["shape"] = obj["name"]
            self.attrs.append(typed)
            self.parts.append({name: {types[a]: a for a in p.get("attributes", []) if a in types}
                               for name, p in (obj.get("parts") or {}).items()})
            for r in obj.get("relations", []):
                self.rel.setdefault((r["name"], int(r["object"])), set()).add(i)

    def matches(self, item: Any, attribute: str, value: str) -> bool:
        if isinstance(item, list):  # a part: [object, name]
            obj, name = item
            if attribute == "partname":
                return set(_words(value)) <= set(_words(name))
            return self.parts[obj][name].get(attribute) == value
        actual = self.attrs[item][attribute]
        return actual == value or (attribute == "shape" and _categories().get(actual) == value)


def run_program(program: list[dict[str, Any]], objects: Mapping[str, Mapping[str, Any]]) -> list[Any]:
    """Every node's output, in the evidence's JSON shape; ProgramFails when a node has no output."""
    scene = _Scene(objects)
    out: list[Any] = []
    for n, node in enumerate(program):
        kind, args = node["type"], [out[i] for i in node["inputs"]]
        value = (node.get("value_inputs") or [None])[0]
        out.append(_node_function(n, kind)(scene, n, kind, args, value))
    return out


NodeFunction = Callable[[_Scene, int, str, list[Any], Any], Any]


def _node_function(n: int, kind: Any) -> NodeFunction:
    """The function a node's type names: by its whole name, or by the family its prefix names
    ("filter_color" is a filter); anything else has no output here."""
    function = None
    if isinstance(kind, str):
        function = _BY_TYPE.get(kind) or _BY_PREFIX.get(kind.partition("_")[0] + "_")
    if function is None:
        raise ProgramFails(f"node {n}: unknown function {kind!r}")
    return function


def _unique(scene: _Scene, n: int, kind: str, args: list[Any], value: Any) -> Any:
    if len(args[0]) != 1:
        raise ProgramFails(f"node {n} ({kind}) denotes {len(args[0])} things, not one")
    return args[0][0]


def _filter(scene: _Scene, n: int, kind: str, args: list[Any], value: Any) -> list[Any]:
    attribute = kind.split("_", 1)[1]
    if not _is_filter_value(attribute, value):
        raise ProgramFails(f"node {n} ({kind}) holds {value!r}, no {attribute} value")
    return [x for x in args[0] if scene.matches(x, attribute, value)]


def _same(scene: _Scene, n: int, kind: str, args: list[Any], value: Any) -> list[int]:
    attribute, attrs = kind[5:], scene.attrs
    return [j for j in range(scene.n) if j != args[0] and attrs[j][attribute] == attrs[args[0]][attribute]]


def _query(scene: _Scene, n: int, kind: str, args: list[Any], value: Any) -> Any:
    attribute = kind.split("_", 1)[1]
    target = args[0]
    if isinstance(target, list):  # a part: [object, name]
        return target[1] if attribute == "partname" else scene.parts[target[0]][target[1]][attribute]
    return scene.attrs[target][attribute]


def _object2part(scene: _Scene, n: int, kind: str, args: list[Any], value: Any) -> list[list[Any]]:
    objs = args[0] if isinstance(args[0], list) else [args[0]]
    return [[o, name] for o in objs for name in _ordered_parts(scene, o)]


def _part2object(scene: _Scene, n: int, kind: str, args: list[Any], value: Any) -> list[int]:
    parts = [args[0]] if args[0] and isinstance(args[0][0], int) else args[0]
    return sorted({p[0] for p in parts})


def _set_operation(scene: _Scene, n: int, kind: str, args: list[Any], value: Any) -> list[Any]:
    a, b = set(args[0]), set(args[1])
    return sorted(a | b if kind == "union" else a & b)


_BY_TYPE: dict[str, NodeFunction] = {
    "scene": lambda scene, n, kind, args, value: list(range(scene.n)),
    "unique": _unique,
    "uniquepart": _unique,
    "relate": lambda scene, n, kind, args, value: sorted(scene.rel.get((_RELATIONS[value], args[0]), ())),
    "object2part": _object2part,
    "part2object": _part2object,
    "union": _set_operation,
    "intersect": _set_operation,
    "count": lambda scene, n, kind, args, value: len(args[0]),
    "exist": lambda scene, n, kind, args, value: bool(args[0]),
    "less_than": lambda scene, n, kind, args, value: args[0] < args[1],
    "greater_than": lambda scene, n, kind, args, value: args[0] > args[1],
}
# families of node types, by the prefix before the first "_" ("filter_color", "partquery_partname")
_BY_PREFIX: dict[str, NodeFunction] = {
    "filter_": _filter,
    "partfilter_": _filter,
    "same_": _same,
    "query_": _query,
    "partquery_": _query,
    "equal_": lambda scene, n, kind, args, value: args[0] == args[1],
}


def _ordered_parts(scene: _Scene, obj: int) -> list[str]:
    return _part_order(scene.attrs[obj]["shape"], tuple(scene.parts[obj]))


@functools.lru_cache(maxsize=4096)
def _part_order(shape: str, names: tuple[str, ...]) -> list[str]:
    order = _part_dict().get(shape, [])
    rank = {name: i for i, name in enumerate(order)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


@functools.lru_cache(maxsize=1)
def _part_dict() -> dict[str, list[str]]:
    return orjson.loads(rules_resource("clevr", "part_dict.json").read_bytes())


def part_name_problems(program: list[dict[str, Any]], trace: list[Any]) -> list[Problem]:
    """A part filter whose words keep other parts than the engine's substring of its raw name: the
    question's words do not say which parts it means, so the record must not hold it."""
    problems: list[Problem] = []
    for n, node in enumerate(program):
        if node.get("type") != "partfilter_partname":
            continue
        value, scope = node["value_inputs"][0], trace[node["inputs"][0]]
        by_words = [p for p in scope if set(_words(value)) <= set(_words(p[1]))]
        by_engine = [p for p in scope if value in p[1]]
        if by_words != by_engine:
            problems.append(("text_mismatch", f"node {n} writes the part {value!r}: its words keep "
                             f"{[p[1] for p in by_words]}, Super-CLEVR's engine {[p[1] for p in by_engine]}"))
    return problems


def answer_words(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    meta = _shape_names()
    if value in meta:
        return meta[value]
    if "_" in value:
        words = value.split("_")
        if words[-1] == "s":
            words.pop()
        while words and words[-1] in _POSITION - {"s"}:
            words.insert(0, words.pop())
        return " ".join(words)
    return value


@functools.lru_cache(maxsize=1)
def _shape_names() -> dict[str, str]:
    return orjson.loads(rules_resource("clevr", "metadata_superclevr.json").read_bytes())["types"]["Shapename"]


def comparable_program(program: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Part names compared by their words: the generator writes each as the scene's raw name."""
    return [{**n, "value_inputs": [_words(v) for v in n.get("value_inputs") or []]}
            if n["type"] == "partfilter_partname" else n for n in program]


def _edit_problems(original: Any, edited: list[dict[str, Any]], invariance: bool) -> list[Problem]:
    if not isinstance(original, list):
        return [("program", "record has no original 'program' to compare the edit with")]
    original, edited = comparable_program(original), comparable_program(edited)
    if invariance:
        core = [(n["type"], n["value_inputs"]) for n in original if n["type"] not in _FILTERS]
        core_new = [(n["type"], n["value_inputs"]) for n in edited if n["type"] not in _FILTERS]
        if core != core_new:
            return [("program", "a redundancy edit may only add or drop attribute filters")]
        return []
    if [(n["type"], n["inputs"]) for n in original] != [(n["type"], n["inputs"]) for n in edited]:
        return [("program", "a contrast must keep the program's shape and change one value")]
    changed = sum(1 for a, b in zip(original, edited, strict=True) if a["value_inputs"] != b["value_inputs"])
    if changed != 1:
        return [("program", f"a contrast must change exactly one value; this one changes {changed}")]
    return []


def clevr_problems(record: Mapping[str, Any], p: Mapping[str, Any], graph: GraphIndex) -> list[Problem]:
    """Everything wrong with one CLEVR-family perturbation (an empty list: it holds)."""
    from contrastgen.datasets.clevr_reading import (  # the family texts: rule data
        Reading,
        read_question,
    )

    program = p.get("program")
    if not isinstance(program, list) or not all(isinstance(n, Mapping) for n in program):
        return [("structure", "CLEVR perturbation has no 'program' list")]
    problems: list[Problem] = []
    evidence = p.get("evidence") or {}
    try:
        trace = run_program(program, graph.objects)
    except (ProgramFails, KeyError, IndexError, TypeError) as exc:
        return [("query", f"the program does not run on the scene: {exc}")]
    if trace != evidence.get("trace"):
        problems.append(("query", "the evidence's trace is not what the program computes"))
    problems += part_name_problems(program, trace)
    computed = answer_words(trace[-1])
    if computed != p.get("answer") or computed != evidence.get("answer"):
        problems.append(("answer", f"the program answers {computed!r}; the perturbation says {p.get('answer')!r}"))
    invariance = p.get("kind") == "invariance"
    if (computed == record.get("answer")) != invariance:
        problems.append(("answer", "an invariance edit must keep the answer" if invariance
                         else "a contrast must change the answer"))
    problems += _edit_problems(record.get("program"), program, invariance)
    family = record.get("family") or {}
    reading = read_question({"question": p.get("question", ""), **family})
    if not isinstance(reading, Reading):
        problems.append(("text_mismatch", f"the question cannot be read with its family: {reading.reason}"))
    elif comparable_program(reading.program()) != comparable_program(program):
        problems.append(("text_mismatch", "the words say a different program from the perturbation's"))
    return problems
