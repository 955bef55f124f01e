"""A small, independent executor of GQA functional programs over a scene graph (test helper).

Why it exists: the sample and the synthetic generator both claim their answers are true of the
graph. This checker re-derives each answer from the program alone, with GQA's semantics and none
of synth's code, so a generator bug cannot hide behind a matching bug in the check.
It also insists that program arguments name the right objects: "cat (12)" must be a cat, and
"cat (-)" must mean that the relevant set is really empty.
"""

from __future__ import annotations

import re
from typing import Any

# The colour group of contrastgen/data/sample/synth_vocab.json ("grey" is an ordinary attribute there).
COLORS = {"white", "black", "blue", "green", "red", "brown", "yellow", "gray", "orange", "pink",
          "purple", "tan", "silver", "gold", "beige"}
MATERIALS = {"wooden", "metal", "plastic", "concrete", "stone", "glass", "brick", "leather", "ceramic",
             "iron", "steel", "cloth"}
HYPERNYMS = {"animal": {"dog", "cat", "horse", "cow", "sheep", "zebra", "giraffe", "elephant", "bird", "bear"},
             "dish": {"dishes", "bowl", "plate", "saucer", "platter"}}

_ARG = re.compile(r"^(?P<body>.*?)\s*\((?P<id>[^()]*)\)\s*$")


class ProgramError(AssertionError):
    """The program contradicts the graph (wrong name for an id, '-' for an existing object)."""


def _split(argument: str) -> tuple[str, str | None]:
    m = _ARG.match(argument)
    if not m:
        return argument.strip(), None
    oid = m.group("id").strip()
    return m.group("body").strip(), None if oid == "-" else oid


def _name_matches(want: str, name: str) -> bool:
    return want == "_" or want == name or name in HYPERNYMS.get(want, ())


def _edge(objects: dict[str, Any], s: str, rel: str, o: str) -> bool:
    return any(r["name"] == rel and str(r["object"]) == o for r in objects[s].get("relations", []))


def execute(question: dict[str, Any], graph: dict[str, Any]) -> str:
    """The answer the program computes on the graph, as GQA writes answers."""
    objects = graph["objects"]
    results: list[Any] = []
    for step in question["semantic"]:
        op, arg, deps = step["operation"], step["argument"], step["dependencies"]
        prev = results[deps[0]] if deps else None
        if op == "select":
            if arg == "scene":
                results.append("scene")
                continue
            name, oid = _split(arg)
            if oid is None:
                if any(o["name"] == name for o in objects.values()):
                    raise ProgramError(f"{arg!r}: the graph has a {name}")
                results.append(set())
            else:
                if oid not in objects or objects[oid]["name"] != name:
                    raise ProgramError(f"{arg!r} does not name object {oid}")
                results.append({oid})
        elif op == "relate":
            body, oid = _split(arg)
            name, rel, role = body.rsplit(",", 2)[0], body.rsplit(",", 2)[1], body.rsplit(",", 2)[2]
            found = set()
            for x, obj in objects.items():
                if not _name_matches(name, obj["name"]):
                    continue
                for s in prev:
                    if (role == "s" and _edge(objects, x, rel, s)) or (role == "o" and _edge(objects, s, rel, x)):
                        found.add(x)
            if oid is None and found:
                raise ProgramError(f"{arg!r}: related objects exist: {sorted(found)}")
            if oid is not None and oid not in found:
                raise ProgramError(f"{arg!r}: object {oid} is not related that way")
            results.append({oid} if oid is not None else set())
        elif op.startswith("filter "):
            attr = arg.strip()
            results.append({o for o in prev if attr in objects[o].get("attributes", [])})
        elif op == "exist":
            results.append(bool(prev))
        elif op in ("or", "and"):
            a, b = results[deps[0]], results[deps[1]]
            results.append((a or b) if op == "or" else (a and b))
        elif op == "query":
            if arg in ("place", "weather"):
                results.append(graph["location" if arg == "place" else "weather"])
                continue
            (oid,) = prev
            obj = objects[oid]
            if arg == "hposition":
                results.append("left" if obj["x"] + obj["w"] / 2 < graph["width"] / 2 else "right")
            elif arg == "color":
                colors = [a for a in obj["attributes"] if a in COLORS]
                if len(colors) != 1:
                    raise ProgramError(f"object {oid} has colours {colors}, not exactly one")
                results.append(colors[0])
            elif arg == "material":
                results.append(next(a for a in obj["attributes"] if a in MATERIALS))
            elif arg == "name":
                results.append(obj["name"])
            else:
                raise ProgramError(f"unknown query {arg!r}")
        elif op == "verify color":
            (oid,) = prev
            results.append(arg in objects[oid]["attributes"])
        elif op == "choose color":
            (oid,) = prev
            hits = [c for c in arg.split("|") if c in objects[oid]["attributes"]]
            if len(hits) != 1:
                raise ProgramError(f"choose {arg!r}: object {oid} has {hits}")
            results.append(hits[0])
        elif op == "verify rel":
            body, other = _split(arg)
            _, rel, role = body.rsplit(",", 2)
            if role == "o":
                results.append(any(_edge(objects, s, rel, other) for s in prev))
            else:
                results.append(any(_edge(objects, other, rel, o) for o in prev))
        elif op == "choose rel":
            body, subject = _split(arg)
            _, rels, _role = body.rsplit(",", 2)
            hits = [r for r in rels.split("|") if any(_edge(objects, subject, r, o) for o in prev)]
            if len(hits) != 1:
                raise ProgramError(f"choose rel {arg!r}: {hits}")
            results.append(hits[0].split()[-2])  # "to the left of" -> "left", as GQA answers
        else:
            raise ProgramError(f"operation {op!r} is not supported by this checker")
    final = results[-1]
    if isinstance(final, bool):
        return "yes" if final else "no"
    return final
