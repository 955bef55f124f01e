"""Scene graphs built from real GQA questions' programs, to run the engine on real phrasing.

Why: GQA's scene graphs are not available here, but each real question's program names the
objects it is about (with their ids), the relations it relies on and, with the gold answer, what
holds between them. A graph that holds exactly that, plus a few distractors, lets the whole
pipeline (match, program agreement, grounding, proof, phrasing, verify) run on GQA's own wording.

What each program step contributes (the gold answer decides the rest):
- `select: NAME (ids)` / `relate: NAME,REL,s|o (ids)`: objects with those ids and that name; a
  relate step adds its edge to the input objects (s: the named object is the subject).
- `filter TYPE: VALUE`: the attribute VALUE on the input objects (hposition: the box's side).
- `verify rel: NAME,REL,s|o (id)`: the edge when the answer is yes, its opposite when no.
- `query: color` / `query: hposition`: the answer as the object's colour / its box's side;
  `verify color: C` with yes: the colour.
Distractors: three objects per image from a fixed list, each with one colour, placed by a seeded
RNG. Left/right edges are then written between every pair whose boxes' centres differ and that no
program step relates left or right already (GQA's graphs have them between nearly all pairs).

    .venv/bin/python benchmarks/graphs_from_programs.py ../shared/data/gqa/val_balanced_questions_sample.json OUT
    # writes OUT/questions.json and OUT/scene_graphs.json, then:
    contrastgen generate --questions OUT/questions.json --scene-graphs OUT/scene_graphs.json --out OUT/cs
    contrastgen verify OUT/cs --scene-graphs OUT/scene_graphs.json
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

import orjson

from contrastgen.jsonio import write_json

WIDTH, HEIGHT = 640, 480
OPPOSITE = {"to the left of": "to the right of", "to the right of": "to the left of", "above": "below",
            "below": "above", "in front of": "behind", "behind": "in front of", "on top of": "under",
            "under": "on top of"}
DISTRACTORS = [("lamp", "white"), ("chair", "brown"), ("bottle", "green"), ("clock", "black"),
               ("vase", "blue"), ("bench", "gray"), ("kite", "red"), ("sign", "yellow")]


def _named(arg: str) -> tuple[str, list[str]]:
    body, _, inner = arg.strip()[:-1].rpartition("(")
    return body.strip(), [i.strip() for i in inner.split(",") if i.strip() not in ("", "-")]


class GraphBuilder:
    def __init__(self, image_id: str):
        self.rng = random.Random(image_id)
        self.objects: dict[str, dict[str, Any]] = {}
        self.sides: dict[str, str] = {}

    def obj(self, oid: str, name: str) -> None:
        if oid not in self.objects:
            self.objects[oid] = {"name": name, "x": 0, "y": self.rng.randrange(0, 400), "w": 40, "h": 40,
                                 "attributes": [], "relations": []}

    def attr(self, oid: str, value: str) -> None:
        attrs = self.objects[oid]["attributes"]
        if value not in attrs:
            attrs.append(value)

    def edge(self, a: str, rel: str, b: str) -> None:
        rels = self.objects[a]["relations"]
        if a != b and {"name": rel, "object": b} not in rels:
            rels.append({"name": rel, "object": b})

    def add_question(self, q: dict[str, Any]) -> None:
        outs: list[list[str]] = []
        answer = str(q.get("answer", "")).lower()
        for step in q.get("semantic") or []:
            op, arg = step["operation"], str(step["argument"]).strip()  # GQA leaves trailing spaces
            ins = [i for d in step["dependencies"] for i in outs[d]] if step["dependencies"] else []
            out: list[str] = []
            if op == "select" and arg.endswith(")"):
                name, ids = _named(arg)
                for i in ids:
                    self.obj(i, name)
                out = ids
            elif op in ("relate", "verify rel") and arg.endswith(")"):
                body, ids = _named(arg)
                parts = [p.strip() for p in body.split(",")]
                name, rel, role = parts[0], ",".join(parts[1:-1]), parts[-1]
                if name == "_":
                    name = answer if op == "relate" else "thing"
                for i in ids:
                    self.obj(i, name)
                if op == "verify rel" and answer == "no":
                    rel = OPPOSITE.get(rel, "")
                for i in ids:
                    for x in ins:
                        if rel:
                            self.edge(i, rel, x) if role == "s" else self.edge(x, rel, i)
                out = ids
            elif op.startswith("filter ") and ins:
                kind, value = op[len("filter "):], arg.strip()
                for i in ins:
                    if kind == "hposition":
                        self.sides[i] = value
                    elif not value.startswith("not("):
                        self.attr(i, value)
                out = ins
            elif op == "query" and ins and arg.strip() in ("color", "hposition"):
                for i in ins:
                    if arg.strip() == "color":
                        self.attr(i, answer)
                    else:
                        self.sides[i] = answer
            elif op == "verify color" and ins and answer == "yes":
                for i in ins:
                    self.attr(i, arg.strip())
            outs.append(out)

    def finish(self) -> dict[str, Any]:
        for n, (name, colour) in enumerate(self.rng.sample(DISTRACTORS, 3)):
            oid = f"d{n}"
            self.obj(oid, name)
            self.attr(oid, colour)
        for oid, o in self.objects.items():
            side = self.sides.get(oid)
            lo, hi = {"left": (0, 240), "right": (360, 600)}.get(side, (0, 600))
            o["x"] = self.rng.randrange(lo, hi)
        left_right = ("to the left of", "to the right of")
        related = {frozenset((a, r["object"])) for a, o in self.objects.items() for r in o["relations"]
                   if r["name"] in left_right}
        ids = sorted(self.objects)
        for a in ids:
            for b in ids:
                if a == b or frozenset((a, b)) in related:
                    continue
                ca = self.objects[a]["x"] + 20
                cb = self.objects[b]["x"] + 20
                if ca != cb:
                    self.edge(a, "to the left of" if ca < cb else "to the right of", b)
        return {"width": WIDTH, "height": HEIGHT, "objects": self.objects}


def build(questions: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    builders: dict[str, GraphBuilder] = {}
    for qid in sorted(questions):
        q = questions[qid]
        image = str(q["imageId"])
        builders.setdefault(image, GraphBuilder(image)).add_question(q)
    return {image: b.finish() for image, b in sorted(builders.items())}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions", type=Path, help="GQA questions JSON (with programs)")
    ap.add_argument("out", type=Path, help="directory for questions.json and scene_graphs.json")
    args = ap.parse_args(argv)
    questions = orjson.loads(args.questions.read_bytes())
    graphs = build(questions)
    write_json(args.out / "questions.json", questions)
    write_json(args.out / "scene_graphs.json", graphs)
    print(f"{len(questions):,} questions, {len(graphs):,} graphs, "
          f"{sum(len(g['objects']) for g in graphs.values()):,} objects -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
