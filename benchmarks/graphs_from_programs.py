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
- the last step, with the gold answer: `query: name` and `choose name` name the object (the most
  specific name a program gives an id wins: "officer" over "person"); `query`/`choose` of another
  type add the answer as an attribute (hposition: the box's side; place, room, weather: the graph's
  `location` / `weather`); `choose rel` adds the answered relation's edge; `verify TYPE: V` with
  yes adds V; `same TYPE` / `different TYPE` / `common` give the compared objects one drawn value
  of each type they share and distinct ones of each type they do not (the program names the type
  only).
Distractors: three objects per image from a fixed list, each with one colour, placed by a seeded
RNG. Left/right edges are then written between every pair whose boxes' centres differ and that no
program step relates left or right already (GQA's graphs have them between nearly all pairs).

GQA's density (`--density 16`): a graph built so holds 4.7 objects on average, where GQA's hold
about 16 (the figure `synth.py` copies), so a question rarely finds a second object with the
relation or value an edit would swap in. With `--density N`, each image also takes in the
objects, attributes and relations that other images' programs assert (real GQA content, with its
GQA ids), one donor image at a time in a seeded order, until it holds N objects. A donor is kept
only if every one of the image's own questions that executed to its gold answer still does: a
donor never adds a second referent, an object a "no" denies, or anything else that would change
what the image's questions say (GQA's questions were generated from their graph, so they hold on
it). Without `--density`, the graphs are the thin ones above.

Names as another release says them (`--names drawn`): GQA's questions and graphs come from
different releases, and a graph may call an object "furniture" where a question's program selects
it as a "desk". With `--names drawn` each object's name is drawn (seeded by image and id) from
every name the programs give it, category words ("furniture", "animal", "clothing") as well as
specific names, instead of the most specific one; the engine must then refuse, never perturb, a
question whose program no longer executes to its answer.

    .venv/bin/python benchmarks/graphs_from_programs.py ../shared/data/gqa/val_balanced_questions_sample.json OUT [--density 16] [--names drawn]
    # writes OUT/questions.json and OUT/scene_graphs.json, then:
    contrastgen generate --questions OUT/questions.json --scene-graphs OUT/scene_graphs.json --out OUT/cs
    contrastgen verify OUT/cs --scene-graphs OUT/scene_graphs.json
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
from pathlib import Path
from typing import Any

import orjson
from script_inputs import require

from contrastgen.jsonio import write_json
from contrastgen.language.lexicon import Lexicon
from contrastgen.programs import executor as gqa_programs
from contrastgen.programs.executor import GqaExecutor, ProgramRefusal, short_relation
from contrastgen.scene.index import SceneIndex

LEX = Lexicon.load()
PRONOUNS = gqa_programs.PRONOUNS
OTHER_SIDE = {"left": "right", "right": "left", "top": "bottom", "bottom": "top"}
SCENE_FIELDS = {"place": "location", "room": "location", "location": "location", "weather": "weather"}

WIDTH, HEIGHT = 640, 480
OPPOSITE = {"to the left of": "to the right of", "to the right of": "to the left of", "above": "below",
            "below": "above", "in front of": "behind", "behind": "in front of", "on top of": "under",
            "under": "on top of"}
DISTRACTORS = [("lamp", "white"), ("chair", "brown"), ("bottle", "green"), ("clock", "black"),
               ("vase", "blue"), ("bench", "gray"), ("kite", "red"), ("sign", "yellow")]
# values for the objects a `same`/`different`/`common` step compares, which its program names only
# by type (typed in rules/attribute_types.tsv; colours in rules/lexicon/colors.txt)
COMPARED_VALUES = {"color": ("white", "black", "red", "blue", "green", "brown"),
                   "material": ("wood", "metal", "plastic", "glass"), "shape": ("round", "octagonal")}
DONOR_ATTEMPTS = 24  # donor images tried per image before it is left below the density asked


def _named(arg: str) -> tuple[str, list[str]]:
    body, _, inner = arg.strip()[:-1].rpartition("(")
    return body.strip(), [i.strip() for i in inner.split(",") if i.strip() not in ("", "-")]


NAME_CHOICES = ("specific", "drawn", "general")


class GraphBuilder:
    def __init__(self, image_id: str, names: str = "specific"):
        self.image_id = image_id
        self.names = names
        self.rng = random.Random(image_id)
        self.objects: dict[str, dict[str, Any]] = {}
        self.sides: dict[str, str] = {}
        self.scene: dict[str, str] = {}  # location, weather
        self.heights: dict[str, str] = {}  # top, middle, bottom

    def obj(self, oid: str, name: str, *, answered: bool = False) -> None:
        """The object `oid`, called by the most specific of the names the programs give it, or by
        the gold answer of a question asking its name (`answered`)."""
        if name in PRONOUNS:
            name = "thing"
        o = self.objects.get(oid)
        if o is None:
            o = self.objects[oid] = {"name": name, "x": 0, "y": self.rng.randrange(0, 400), "w": 40, "h": 40,
                                     "attributes": [], "relations": [], "_names": []}
        elif answered or (name not in ("_", "thing") and (o["name"] in ("_", "thing")
                                                           or LEX.is_a(name, o["name"]))):
            o["name"] = name
        if name not in ("_", "thing") and name not in o["_names"]:
            o["_names"].append(name)  # every name it is given, for `--names drawn`

    def attr(self, oid: str, value: str) -> None:
        attrs = self.objects[oid]["attributes"]
        if value not in attrs:
            attrs.append(value)

    def edge(self, a: str, rel: str, b: str) -> None:
        rels = self.objects[a]["relations"]
        if a != b and {"name": rel, "object": b} not in rels:
            rels.append({"name": rel, "object": b})

    def answered(self, kind: str, objects: list[str], answer: str) -> None:
        """What a question's last `query` or `choose` of `kind` says, with its gold answer."""
        if not objects and kind in SCENE_FIELDS:  # select: scene
            self.scene[SCENE_FIELDS[kind]] = answer
        for i in objects:
            if kind == "name":
                self.obj(i, answer, answered=True)
            elif kind == "hposition":
                self.sides[i] = answer
            elif kind == "vposition":
                self.heights[i] = answer
            else:
                self.attr(i, answer)

    def add_question(self, q: dict[str, Any]) -> None:
        outs: list[list[str]] = []
        answer = str(q.get("answer", "")).lower()
        steps = q.get("semantic") or []
        # "Is there a blue table? no": the chain's filters and relations are what is absent.
        denied = answer == "no" and bool(steps) and steps[-1]["operation"] in ("exist", "and", "or")
        for n, step in enumerate(steps):
            op, arg = step["operation"], str(step["argument"]).strip()  # GQA leaves trailing spaces
            last = n == len(steps) - 1
            ins = [i for d in step["dependencies"] for i in outs[d]] if step["dependencies"] else []
            out: list[str] = []
            if op == "select" and arg.endswith(")"):
                name, ids = _named(arg)
                for i in ids:
                    self.obj(i, name)
                out = ids
            elif op in ("relate", "verify rel", "choose rel") and arg.endswith(")"):
                body, ids = _named(arg)
                parts = [p.strip() for p in body.split(",")]
                name, rel, role = parts[0], ",".join(parts[1:-1]), parts[-1]
                if name == "_":
                    name = answer if op == "relate" and last else "thing"
                for i in ids:
                    self.obj(i, name)
                if op == "verify rel" and answer == "no":
                    rel = OPPOSITE.get(rel, "")
                if op == "choose rel":  # the answered option ("left" for "to the left of")
                    rel = next((r for r in rel.split("|") if short_relation(r) == answer), "")
                for i in ids:
                    for x in ins:
                        if rel and not (denied and op == "relate"):
                            self.edge(i, rel, x) if role == "s" else self.edge(x, rel, i)
                out = ids
            elif (op == "filter" or op.startswith("filter ")) and ins:
                kind, value = op[len("filter "):], arg.strip()
                for i in ins:
                    if denied:
                        continue
                    if kind == "hposition":
                        self.sides[i] = value
                    elif kind == "vposition":
                        self.heights[i] = value
                    elif not value.startswith("not("):
                        self.attr(i, value)
                out = ins
            elif (op == "query" or op.startswith("choose")) and last:
                kind = arg.strip() if op == "query" else op[len("choose"):].strip()
                self.answered(kind, ins, answer)
            elif op.partition(" ")[0] in ("same", "different", "common") and len(ins) >= 2:
                self.compared(op, ins, answer)
            elif op.startswith("verify ") and op != "verify rel" and ins:
                kind, value = op[len("verify "):], arg.strip()
                for i in ins:
                    if kind == "hposition":
                        self.sides[i] = value if answer == "yes" else OTHER_SIDE.get(value, "")
                    elif kind == "vposition":
                        self.heights[i] = value if answer == "yes" else OTHER_SIDE.get(value, "")
                    elif answer == "yes":
                        self.attr(i, value)
            outs.append(out)

    def compared(self, op: str, objects: list[str], answer: str) -> None:
        """What a `same TYPE`, `different TYPE` or `common` step says with its gold answer: one
        value for every object of a type they share, another per object of a type they do not.
        The values are drawn, since the program names only the type; a type some object already
        has a value of is left as the other questions made it."""
        head, _, kind = op.partition(" ")
        if head == "common":
            kinds, shared = tuple(COMPARED_VALUES), {answer}
        else:
            kinds, shared = (kind.strip(),), ({kind.strip()} if (answer == "yes") == (head == "same") else set())
        for k in kinds:
            palette = COMPARED_VALUES.get(k)
            if not palette or len(objects) > len(palette) or any(
                    set(self.objects[o]["attributes"]) & set(palette) for o in objects):
                continue
            values = [self.rng.choice(palette)] * len(objects) if k in shared else self.rng.sample(palette, len(objects))
            for o, v in zip(objects, values, strict=True):
                self.attr(o, v)

    def adopt(self, donor: dict[str, dict[str, Any]]) -> bool:
        """Take in a donor image's program objects (ids, names, attributes, the relations among
        them); False, with nothing taken, where an id is already here."""
        if any(oid in self.objects for oid in donor):
            return False
        self.objects.update(copy.deepcopy(donor))
        return True

    def finished(self) -> dict[str, Any]:
        """The graph `finish` would give, leaving this builder (and its RNG) as it is."""
        return copy.deepcopy(self).finish()

    def finish(self) -> dict[str, Any]:
        for n, (name, colour) in enumerate(self.rng.sample(DISTRACTORS, 3)):
            oid = f"d{n}"
            self.obj(oid, name)
            self.attr(oid, colour)
        for oid, o in self.objects.items():
            names = o.pop("_names", [])
            if self.names == "drawn" and names:
                o["name"] = random.Random(f"names/{self.image_id}/{oid}").choice(names)
            elif self.names == "general" and names:
                o["name"] = next((g for g in names if all(LEX.is_a(n, g) for n in names)), o["name"])
            # clear of the executor's centre band (10% of the size around the middle)
            lo, hi = {"left": (0, 200), "right": (400, 600), "middle": (300, 301)}.get(self.sides.get(oid), (0, 600))
            o["x"] = self.rng.randrange(lo, hi)
            lo, hi = {"top": (0, 150), "bottom": (300, 440), "middle": (220, 221)}.get(self.heights.get(oid), (0, 440))
            o["y"] = self.rng.randrange(lo, hi)
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
        return {"width": WIDTH, "height": HEIGHT, **self.scene, "objects": self.objects}


def build(questions: dict[str, dict[str, Any]], *, density: int = 0, seed: int = 0,
          names: str = "specific") -> dict[str, dict[str, Any]]:
    """One graph per image; with `density`, filled with donors' objects up to that many (`seed`:
    the order donors are tried in); `names`: each object's most specific name, or one drawn from
    all the names the programs give it."""
    builders: dict[str, GraphBuilder] = {}
    asked: dict[str, list[dict[str, Any]]] = {}
    for qid in sorted(questions):
        q = questions[qid]
        image = str(q["imageId"])
        builders.setdefault(image, GraphBuilder(image, names)).add_question(q)
        asked.setdefault(image, []).append(q)
    if density:
        _add_donors(builders, asked, density, seed)
    return {image: b.finish() for image, b in sorted(builders.items())}


def _answered(image: str, graph: dict[str, Any], questions: list[dict[str, Any]]) -> list[bool]:
    """Which of the questions the project's executor answers with their gold answer on `graph`."""
    scene = SceneIndex.build(image, graph, LEX)
    out = []
    for q in questions:
        try:
            got = GqaExecutor(scene, LEX, graph).run(q.get("semantic") or []).answer
        except ProgramRefusal:
            got = None
        out.append(got == str(q.get("answer", "")).lower())
    return out


def _add_donors(builders: dict[str, GraphBuilder], asked: dict[str, list[dict[str, Any]]], density: int,
                seed: int) -> None:
    """Fill each image with other images' program objects, keeping a donor only where it leaves
    every question of the image that was answered right still answered right."""
    own = {image: copy.deepcopy(b.objects) for image, b in builders.items()}  # donors give only these
    images = sorted(builders)
    for image in images:
        builder = builders[image]
        before = _answered(image, builder.finished(), asked[image])
        order = [d for d in images if d != image]
        random.Random(f"donors/{seed}/{image}").shuffle(order)
        for donor in order[:DONOR_ATTEMPTS]:
            if len(builder.objects) + 3 >= density:  # + the three colour distractors
                break
            trial = copy.deepcopy(builder)
            if not trial.adopt(own[donor]):
                continue
            after = _answered(image, trial.finished(), asked[image])
            if all(a for a, b in zip(after, before, strict=True) if b):
                builder = builders[image] = trial


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions", type=Path, help="GQA questions JSON (with programs)")
    ap.add_argument("out", type=Path, help="directory for questions.json and scene_graphs.json")
    ap.add_argument("--density", type=int, default=0, metavar="N",
                    help="fill each graph with other images' program objects up to N objects (GQA's: 16)")
    ap.add_argument("--seed", type=int, default=0, help="the order donor images are tried in")
    ap.add_argument("--names", choices=NAME_CHOICES, default="specific",
                    help="each object's most specific name, or one drawn from every name the programs give it "
                         "(category words too), as a graph of another release may call it")
    args = ap.parse_args(argv)
    require("graphs_from_programs.py", args.questions, "GQA questions with programs, such as ../shared/data/gqa/val_balanced_questions_sample.json")
    questions = orjson.loads(args.questions.read_bytes())
    graphs = build(questions, density=args.density, seed=args.seed, names=args.names)
    write_json(args.out / "questions.json", questions)
    write_json(args.out / "scene_graphs.json", graphs)
    print(f"{len(questions):,} questions, {len(graphs):,} graphs, "
          f"{sum(len(g['objects']) for g in graphs.values()):,} objects -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
