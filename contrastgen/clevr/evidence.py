"""The proof of a CLEVR-family answer: the program's execution trace (every node's output) and the
facts of the scene it rests on: the objects and parts the trace names, the relations it follows,
and the closed world (the scene's object count), since a CLEVR scene lists every object in it.
"""

from __future__ import annotations

from typing import Any

from contrastgen.clevr.executor import Execution, Value, part_matches
from contrastgen.clevr.scene_view import ClevrScene
from contrastgen.datasets.clevr_vocab import RELATION_NAMES, part_display
from contrastgen.perturb import EVIDENCE_VERSION

QUERY_OP = "clevr_program"


def trace_json(value: Value) -> Any:
    """A node output as JSON: objects as indices, a part as [object, part name], sets as lists."""
    if isinstance(value, tuple):
        if len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], str):
            return [value[0], value[1]]
        return [trace_json(v) for v in value]
    return value


def _objects_and_parts(value: Value) -> tuple[set[int], set[tuple[int, str]]]:
    objects: set[int] = set()
    parts: set[tuple[int, str]] = set()
    items = value if isinstance(value, tuple) and not (len(value) == 2 and isinstance(value[1], str)) else (value,)
    for v in items:
        if isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], str):
            parts.add(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            objects.add(v)
    return objects, parts


def evidence(program: list[dict[str, Any]], execution: Execution, scene: ClevrScene, answer: str) -> dict[str, Any]:
    """The proof of an answer: the trace and the scene facts it rests on."""
    objects: set[int] = set()
    parts: set[tuple[int, str]] = set()
    relations: list[dict[str, Any]] = []
    for node, out in zip(program, execution.outputs, strict=True):
        if node["type"] in ("scene", "count", "exist") or not isinstance(out, (tuple, int)) or isinstance(out, bool):
            continue
        if node["type"].startswith(("query", "partquery", "equal", "less", "greater")):
            continue
        o, p = _objects_and_parts(out)
        objects |= o
        parts |= p
        if node["type"] == "relate":
            target = execution.outputs[node["inputs"][0]]
            relations += [{"fact": "relation", "subject": str(j), "object": str(target),
                           "name": RELATION_NAMES[node["value_inputs"][0]]} for j in out]
    facts: list[dict[str, Any]] = [{"fact": "object_count", "count": len(scene.objects)}]
    for i in sorted(objects | {p[0] for p in parts}):
        obj = scene.objects[i]
        facts.append({"fact": "object", "id": str(i), "name": obj.shape,
                      "attributes": [obj.size, obj.color, obj.material]})
    for i, name in sorted(parts):
        attrs = scene.objects[i].parts[name]
        facts.append({"fact": "part", "object": str(i), "name": name,
                      "attributes": [attrs[k] for k in ("size", "color", "material") if k in attrs]})
    facts += relations
    return {"version": EVIDENCE_VERSION, "query": {"op": QUERY_OP},
            "trace": [trace_json(o) for o in execution.outputs], "facts": facts, "answer": answer}


def engine_program(program: list[dict[str, Any]], execution: Execution) -> list[dict[str, Any]]:
    """The program with each part name as the scene's own raw name, so Super-CLEVR's engine, which
    matches raw names exactly, runs it as it is: "front left door" is `front_left_door` on a car
    and `door_front_left` on a bus. A name no part in scope is written with exactly (a kind such
    as "wheel") stays, as the engine matches it by substring; one written two ways in scope stays
    as read (that engine could not say it)."""
    out = []
    for node in program:
        if node["type"] == "partfilter_partname":
            value = node["value_inputs"][0]
            scope = execution.outputs[node["inputs"][0]]
            words = sorted(part_display(value).split())
            raw = {name for _, name in scope if sorted(part_display(name).split()) == words} \
                if isinstance(scope, tuple) else set()
            if len(raw) == 1:
                node = {**node, "value_inputs": [raw.pop()]}
        out.append(node)
    return out


def part_words_ambiguous(program: list[dict[str, Any]], execution: Execution) -> bool:
    """Whether a part name the program writes selects other parts by its words than by the raw
    name Super-CLEVR's engine matches as a substring, among the parts it filters: "a left door"
    holds `door_mid_left` by its words, but the engine's `door_left_s` is no substring of it. The
    words alone do not settle whether a mid-left door is a left door, so such a question cannot be
    read with certainty and is refused (`part_ambiguous`), never answered either way."""
    for node, written in zip(program, engine_program(program, execution), strict=True):
        if node["type"] != "partfilter_partname":
            continue
        scope = execution.outputs[node["inputs"][0]]
        value, raw = node["value_inputs"][0], written["value_inputs"][0]
        if not isinstance(scope, tuple):
            continue
        if [p for p in scope if part_matches(p[1], value)] != [p for p in scope if raw in p[1]]:
            return True
    return False
