"""Build contrastgen's bundled sample (contrastgen/data/sample/) from benchmarks/sample_spec.yaml.

Why a script and not hand-typed JSON: GQA's answers, programs and token annotations are functions
of the scene graph, and hand-typing them is exactly how a sample ends up contradicting itself. Here
the spec says which objects exist, where their boxes are, and which questions to ask; relations
implied by the boxes are written in both directions and every answer, program and annotation is
computed by the same builders `synth` uses. Seeded, so reruns are byte-identical.

    .venv/bin/python benchmarks/make_sample.py [--out contrastgen/data/sample] [--seed 13]

Writes questions.json and scene_graphs.json (GQA v1.2 format) and cases.json, which records for
each question the template family it belongs to by its meaning (`synth.template_family`,
or null) and the hard cases it exercises, so that tests can assert coverage without re-deriving it.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path
from typing import Any

import synth
import yaml

from contrastgen.datasets.gqa import load_questions, load_scene_graphs
from contrastgen.jsonio import write_json

REPO = Path(__file__).resolve().parents[1]
SPEC = Path(__file__).resolve().with_name("sample_spec.yaml")
OUT = REPO / "contrastgen" / "data" / "sample"
FIRST_OBJECT_ID = 3_100_000

class SpecError(ValueError):
    """The spec contradicts itself (e.g. a left/right pair whose boxes do not say which is left)."""


def _centre(obj: dict[str, Any]) -> tuple[float, float]:
    return obj["x"] + obj["w"] / 2, obj["y"] + obj["h"] / 2


def build_graph(scene: dict[str, Any], next_id: int) -> tuple[dict[str, Any], dict[str, str], int]:
    """Scene spec -> GQA scene graph, local keys -> object ids, and the next free id."""
    width, height = scene.get("size", [640, 480])
    ids: dict[str, str] = {}
    objects: dict[str, dict[str, Any]] = {}
    for key, (name, x, y, w, h, *attrs) in scene["objects"].items():
        oid = str(next_id)
        next_id += 1
        ids[key] = oid
        if not all(isinstance(a, str) for a in [name, *attrs]):
            raise SpecError(f"{scene['id']} {key}: names and attributes must be strings (quote yes/no/on)")
        objects[oid] = {"name": name, "x": x, "y": y, "w": w, "h": h, "attributes": list(attrs), "relations": []}
    if scene.get("lr_all"):  # GQA often relates every pair left/right; the lr pairs below add nothing
        synth.add_all_pairs_lr(objects, list(objects))
    for a, b in scene.get("lr", []):
        (ax, _), (bx, _) = _centre(objects[ids[a]]), _centre(objects[ids[b]])
        if abs(ax - bx) <= synth.SPATIAL_MARGIN * width:
            raise SpecError(f"{scene['id']}: {a} and {b} are too close horizontally for left/right")
        left, right = (ids[a], ids[b]) if ax < bx else (ids[b], ids[a])
        synth.add_relation(objects, left, "to the left of", right)
        synth.add_relation(objects, right, "to the right of", left)
    for a, b in scene.get("ab", []):
        (_, ay), (_, by) = _centre(objects[ids[a]]), _centre(objects[ids[b]])
        if abs(ay - by) <= synth.SPATIAL_MARGIN * height:
            raise SpecError(f"{scene['id']}: {a} and {b} are too close vertically for above/below")
        top, bottom = (ids[a], ids[b]) if ay < by else (ids[b], ids[a])
        synth.add_relation(objects, top, "above", bottom)
        synth.add_relation(objects, bottom, "below", top)
    for a, b in scene.get("near", []):
        synth.add_relation(objects, ids[a], "near", ids[b])
        synth.add_relation(objects, ids[b], "near", ids[a])
    for a, b in scene.get("front", []):
        synth.add_relation(objects, ids[a], "in front of", ids[b])
        synth.add_relation(objects, ids[b], "behind", ids[a])
    for a, b, kind in scene.get("contradict", []):  # annotation noise: both directions hold
        first, second = ("in front of", "behind") if kind == "front" else ("to the left of", "to the right of")
        for s, o in ((ids[a], ids[b]), (ids[b], ids[a])):
            synth.add_relation(objects, s, first, o)
            synth.add_relation(objects, o, second, s)
    for s, rel, o in scene.get("rels", []):
        if not isinstance(rel, str):
            raise SpecError(f"{scene['id']}: relation {rel!r} is not a string (quote yes/no/on)")
        synth.add_relation(objects, ids[s], rel, ids[o])
    graph: dict[str, Any] = {"width": width, "height": height, "objects": objects}
    for key in ("location", "weather"):
        if key in scene:
            graph[key] = scene[key]
    return graph, ids, next_id


def modifier(spec: list[str] | None, ids: dict[str, str]) -> synth.Modifier | None:
    """[rel, other, role, style?] -> a synth.Modifier ("the cup that is on the table")."""
    if spec is None:
        return None
    rel, other, role, *style = spec
    return synth.Modifier(rel, ids[other], role, style[0] if style else "plain")


def ask(q: dict[str, Any], v: synth.GraphView, ids: dict[str, str], vocab: synth.SynthVocabulary,
        hypernyms: dict[str, list[str]]) -> synth.QuestionParts:
    """One hand-specified question -> its parts, via the synth builders."""
    k, p = q["k"], q.get("p", 0)
    x_mod, y_mod = modifier(q.get("x_mod"), ids), modifier(q.get("y_mod"), ids)
    picture = q.get("picture", False)
    if k == "side":
        parts = synth.ask_side(v, ids[q["x"]], vocab, x_text=q.get("x_text"), phrasing=p, x_mod=x_mod)
    elif k == "color":
        via = q.get("via")
        parts = synth.ask_color(v, ids[q["x"]], vocab, x_text=q.get("x_text"), phrasing=p,
                                via=(via[0], ids[via[1]], via[2]) if via else None, x_mod=x_mod, picture=picture)
    elif k == "or":
        parts = synth.ask_exist_or(v, q["a"], q["b"], vocab, a_names=q.get("a_names"), b_names=q.get("b_names"),
                                   a_text=q.get("a_text"), b_text=q.get("b_text"), phrasing=p,
                                   attr=tuple(q["attr"]) if "attr" in q else None,
                                   attr_style=q.get("attr_style", "pre"))
    elif k == "near":
        names = q.get("x_names") or hypernyms.get(q["x_name"])
        parts = synth.ask_exist_near(v, q["x_name"], ids[q["y"]], vocab, x_names=names, x_text=q.get("x_text"),
                                     plural=q.get("plural", False), y_text=q.get("y_text"), phrasing=p,
                                     y_mod=y_mod, picture=picture)
    elif k == "rel":
        parts = synth.ask_relation(v, ids[q["x"]], q["rel"], ids[q["y"]], vocab, x_text=q.get("x_text"),
                                   y_text=q.get("y_text"), subject_selected=q.get("selected", "o") == "o",
                                   x_mod=x_mod, y_mod=y_mod, picture=picture)
    elif k == "verify_rel":
        parts = synth.ask_verify_rel(v, ids[q["x"]], q["rel"], vocab, t=ids[q["t"]] if "t" in q else None,
                                     t_name=q.get("t_name"), x_mod=x_mod, x_text=q.get("x_text"), picture=picture)
    elif k == "rel_object":
        parts = synth.ask_rel_object(v, ids[q["x"]], q["rel"], vocab)
    elif k == "rel_subject":
        parts = synth.ask_rel_subject(v, ids[q["y"]], q["rel"], vocab)
    elif k == "material":
        parts = synth.ask_material(v, ids[q["x"]], vocab, p)
    elif k == "verify_color":
        parts = synth.ask_verify_color(v, ids[q["x"]], q["color"], vocab)
    elif k == "choose_color":
        parts = synth.ask_choose_color(v, ids[q["x"]], q["color"], vocab, bool(p))
    elif k == "exist_that":
        parts = synth.ask_exist_that(v, q["name"], q["color"], vocab)
    elif k == "exist_and":
        parts = synth.ask_exist_and(v, q["a"], q["b"], vocab)
    elif k == "rel_choose":
        parts = synth.ask_rel_choose(v, ids[q["x"]], ids[q["y"]], vocab)
    elif k in ("place", "weather"):
        parts = synth.ask_scene(v, k, p)
    else:
        raise SpecError(f"unknown question kind {k!r}")
    if parts is None:
        raise SpecError(f"the graph cannot support question {q}")
    if "filter" in q:
        after, operation, argument = q["filter"]
        parts.semantic = synth.insert_filter(parts.semantic, after, operation, argument)
    if "text" in q:
        parts.question = q["text"]
    return parts


def _kit_scene(rng: random.Random, kit: dict[str, Any], image_num: int, next_id: int,
               vocab: synth.SynthVocabulary) -> tuple[dict[str, Any], int]:
    """A seeded scene from a kit: boxes by region, one colour where the kit offers some."""
    width, height = rng.choice([(640, 480), (500, 375), (640, 427), (500, 333)])
    entries = sorted(kit["objects"].items())
    chosen = rng.sample(entries, min(len(entries), rng.randint(7, 10)))
    if rng.random() < 0.4:  # GQA images often show two of a kind
        chosen.append(rng.choice(chosen))
    objects: dict[str, dict[str, Any]] = {}
    for name, (region, *colors) in chosen:
        w = int(width * rng.uniform(0.08, 0.4))
        h = int(height * rng.uniform(0.08, 0.4))
        top = {"t": (0, 0.35), "b": (0.55, 1.0), "a": (0, 1.0)}[region]
        y_lo = int(top[0] * (height - h))
        y_hi = max(y_lo + 1, int(top[1] * (height - h)))
        attrs = [rng.choice(colors)] if colors else []
        objects[str(next_id)] = {"name": name, "x": rng.randrange(0, width - w), "y": rng.randrange(y_lo, y_hi),
                                 "w": w, "h": h, "attributes": attrs, "relations": []}
        next_id += 1
    keys = list(objects)
    for a in keys:
        b = rng.choice(keys)
        if b != a:
            synth.add_spatial(objects, a, b, width, height, rng)
    people = [o for o in keys if objects[o]["name"] in vocab.people]
    for o in keys:
        name = objects[o]["name"]
        if people and name in vocab.clothing:
            synth.add_relation(objects, people[0], "wearing", o)
        elif people and name in vocab.held:
            synth.add_relation(objects, people[0], "holding", o)
    return {"width": width, "height": height, "location": kit["location"], "objects": objects}, next_id


def build(spec: dict[str, Any], seed: int) -> tuple[dict, dict, dict]:
    vocab = synth.load_vocabulary()
    hypernyms = spec.get("hypernyms", {})
    questions: dict[str, dict[str, Any]] = {}
    graphs: dict[str, dict[str, Any]] = {}
    cases: dict[str, dict[str, Any]] = {}
    next_id = FIRST_OBJECT_ID

    def add(image_id: str, n: int, parts: synth.QuestionParts, q: dict[str, Any]) -> None:
        qid = f"{image_id}{n:02d}"
        questions[qid] = parts.record(qid, image_id, program=q.get("program", True) is not False,
                                      annotations=q.get("annotations", True) is not False)
        tags = q.get("tag", [])
        cases[qid] = {"family": parts.family, "tags": sorted([tags] if isinstance(tags, str) else tags)}

    for scene in spec["scenes"]:
        graph, ids, next_id = build_graph(scene, next_id)
        view = synth.GraphView.of(graph)
        for n, q in enumerate(scene["questions"]):
            add(scene["id"], n, ask(q, view, ids, vocab, hypernyms), q)
        if not scene.get("omit_graph"):
            graphs[scene["id"]] = graph
    rng = random.Random(seed)
    kits = [spec["kits"][k] for k in sorted(spec["kits"])]
    lo, hi = spec["kit_questions"]
    for i in range(spec["kit_scenes"]):
        image_id = str(2_400_100 + i)
        graph, next_id = _kit_scene(rng, kits[i % len(kits)], int(image_id), next_id, vocab)
        graphs[image_id] = graph
        for n, parts in enumerate(synth.make_questions(rng, synth.GraphView.of(graph), vocab, rng.randint(lo, hi),
                                                             template_weight=spec["kit_template_weight"])):
            add(image_id, n, parts, {})
    return questions, graphs, cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    questions, graphs, cases = build(spec, args.seed)
    write_json(args.out / "questions.json", questions, indent=True)
    write_json(args.out / "scene_graphs.json", graphs, indent=True)
    write_json(args.out / "cases.json", cases, indent=True)
    # Validate with the project's own loaders: the sample must load exactly as user data does.
    q = load_questions(args.out / "questions.json")
    g = load_scene_graphs(args.out / "scene_graphs.json")
    families = Counter(c["family"] for c in cases.values())
    tags = Counter(t for c in cases.values() for t in c["tags"])
    print(f"{len(q)} questions, {len(g)} scene graphs "
          f"({sum(len(x['objects']) for x in g.values())} objects)")
    print("families:", dict(sorted(families.items(), key=lambda kv: str(kv[0]))))
    print("hard cases:", dict(sorted(tags.items())))


if __name__ == "__main__":
    main()
