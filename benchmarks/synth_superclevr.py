"""Super-CLEVR-format scenes and questions, without images, at any size.

Why: `contrastgen ood superclevr --variant ...` draws its variants from a pool of scenes, and the
ten real scenes in ../shared are far too few to draw a long-tailed or a compositional variant
from. This writes a pool in exactly Super-CLEVR's formats (a CLEVR `{"scenes": [...]}` file of
Super-CLEVR scene records, and a `{"questions": [...]}` file), so every reader, the variant draw
and `evaluate --ood` take it as they take the real data, and symbolic models (which need no
pixels) can be trained and tested on it.

Scenes follow Super-CLEVR's renderer (`image_generation/super_render_images.py`, read, not run):
3 to 10 objects, each with a size, shape (the 21 of the part list), colour and material drawn
uniformly, placed on the ground without overlapping, up to three of its parts given another
colour (and a material) than the body; `relationships` computed as the renderer computes them
(object j is `r` of object i when their offset along the camera's direction r exceeds 0.2), from
directions jittered around the real scenes' camera. `pixel_coords` come from a simple pinhole
projection: they are for drawing boxes only, as in the reader.

`--skew B` gives each scene its own concept weights, drawn from a symmetric Dirichlet(B) for
shapes, colours and materials (size stays uniform), so the pool holds concentrated scenes too
(many objects of a few concepts) from which a long-tailed variant can be drawn; without it the
pool is uniform like the renderer's output, and reaches only what a uniform pool reaches
(docs/ood.md gives both). `--sampled-as bal,long,...` samples scene i's objects from the i-th
(mod k) variant's own target, as the authors' renderer samples a variant, so a pool holds scenes
of every variant the way the released data does; each variant is still drawn from the whole pool
and measured against its target.

Questions are instantiated from the same template families the reader reads (rules/clevr/
templates: CLEVR 1.0's object families, Super-CLEVR's part families), on the scene's own
objects: each reference is anchored on an object of the set it selects from and says a random
subset of its attributes, extended until it denotes that object alone; each set description says
random values. A question is kept only when everything CLEVR's generator demands holds (the
program runs with every `unique` denoting one thing, the family's constraints hold, no relation
could be dropped without changing the answer) and its words read back (`read_question`) to
exactly its program; its answer is the program's answer on the scene. Attempts are bounded, so
a scene may get fewer questions than asked for; the mix of families follows what each scene
admits (families with long relation chains are rarer), which docs/ood.md reports.

Generation is sequential from one `random.Random(seed)`: the output depends only on the
arguments. Usage:
    python benchmarks/synth_superclevr.py --scenes 20000 --seed 0 --out out/sc-pool [--skew 0.3]
        [--object-questions 5] [--part-questions 5]
"""

from __future__ import annotations

import argparse
import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from contrastgen.clevr.edits import (  # the checks every question is held to
    _degenerate,
    out_neq_holds,
)
from contrastgen.clevr.executor import Invalid, execute
from contrastgen.clevr.render import render
from contrastgen.clevr.scene_view import ClevrScene, clevr_scene
from contrastgen.datasets.clevr import scene_graph
from contrastgen.datasets.clevr_reading import (
    Reading,
    build_program_and_map,
    constraints_hold,
    null_value,
    read_question,
)
from contrastgen.datasets.clevr_templates import Family, load_families
from contrastgen.datasets.clevr_vocab import load_vocabulary
from contrastgen.files.atomic import atomic_dir
from contrastgen.jsonio import write_json
from contrastgen.ood.superclevr_targets import DRAWN_VARIANTS, target

SIZES = ("large", "small")
MATERIALS = ("rubber", "metal")
COLORS = ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow")
RELATIONS = ("left", "right", "behind", "front")
# The real scenes' camera: the ground-plane directions of ../shared's superCLEVR_new_000000.
RIGHT = (0.6563, 0.7545)
RADIUS = {"large": 0.8, "small": 0.45}  # clearance around an object's centre, on the ground
EPS = 0.2  # the renderer's threshold for a spatial relation
IMAGE = (640, 480)
PART_FAMILY_FILE = "part.json"
ATTEMPTS_PER_QUESTION = 12
_REFERENCES = ("filter_unique", "relate_filter_unique", "partfilter_unique")
_ATTRIBUTE = {"Size": "size", "Color": "color", "Material": "material"}


def _weights(rng: random.Random, n: int, skew: float | None) -> list[float] | None:
    return None if skew is None else [rng.gammavariate(skew, 1.0) for _ in range(n)]


def _pick(rng: random.Random, values: Sequence[str], weights: list[float] | None) -> str:
    return rng.choices(values, weights)[0] if weights else rng.choice(values)


def _place(rng: random.Random, sizes: list[str]) -> list[tuple[float, float]] | None:
    placed: list[tuple[float, float]] = []
    for size in sizes:
        for _ in range(50):
            x, y = rng.uniform(-3, 3), rng.uniform(-3, 3)
            if all(math.hypot(x - px, y - py) >= RADIUS[size] + RADIUS[sizes[j]] for j, (px, py) in enumerate(placed)):
                placed.append((x, y))
                break
        else:
            return None
    return placed


def _directions(rng: random.Random) -> dict[str, list[float]]:
    turn = rng.uniform(-0.1, 0.1)
    c, s = math.cos(turn), math.sin(turn)
    rx, ry = RIGHT[0] * c - RIGHT[1] * s, RIGHT[0] * s + RIGHT[1] * c
    right, behind = [rx, ry, 0.0], [-ry, rx, 0.0]
    return {"right": right, "behind": behind, "left": [-v for v in right], "front": [-v for v in behind],
            "above": [0.0, 0.0, 1.0], "below": [0.0, 0.0, -1.0]}


def _relationships(coords: list[list[float]], directions: dict[str, list[float]]) -> dict[str, list[list[int]]]:
    out = {}
    for name in ("right", "behind", "left", "front"):
        d = directions[name]
        out[name] = [[j for j, b in enumerate(coords) if j != i and
                      sum((b[k] - a[k]) * d[k] for k in range(3)) > EPS] for i, a in enumerate(coords)]
    return out


def _pixel(point: list[float], directions: dict[str, list[float]]) -> list[Any]:
    right = sum(p * d for p, d in zip(point, directions["right"], strict=True))
    ahead = sum(p * d for p, d in zip(point, directions["behind"], strict=True))
    depth = 11.0 + ahead
    x = IMAGE[0] / 2 + 520 * right / depth
    y = IMAGE[1] / 2 + 60 - 900 * ahead / depth / 3
    return [[round(x), round(y), round(depth, 4)], list(IMAGE)]


Concepts = Callable[[random.Random], tuple[str, str, str]]  # -> (shape, colour, material) of one object


def _skewed(rng: random.Random, shapes: Sequence[str], skew: float | None) -> Concepts:
    """A scene's own concept weights (a Dirichlet(skew) draw each; uniform without a skew)."""
    shape_w, color_w, material_w = (_weights(rng, len(shapes), skew), _weights(rng, len(COLORS), skew),
                                    _weights(rng, len(MATERIALS), skew))

    def concepts(r: random.Random) -> tuple[str, str, str]:
        return _pick(r, shapes, shape_w), _pick(r, COLORS, color_w), _pick(r, MATERIALS, material_w)
    return concepts


def _as_variant(variant: str) -> Concepts:
    """Objects sampled from a Super-CLEVR variant's target, as the authors' renderer samples that
    variant: shape, colour and material from their blocks, or shape then colour from the
    co-distribution matrix's row."""
    blocks = {b.name: b for b in target(variant).blocks}
    if "shape x color" in blocks:
        joint = blocks["shape x color"]
        mat = blocks["material"]

        def joint_concepts(r: random.Random) -> tuple[str, str, str]:
            shape, color = r.choices(joint.values, joint.weights)[0]
            return shape, color, r.choices(mat.values, mat.weights)[0][0]
        return joint_concepts

    def concepts(r: random.Random) -> tuple[str, str, str]:
        return tuple(r.choices(blocks[a].values, blocks[a].weights)[0][0]  # type: ignore[return-value]
                     for a in ("shape", "color", "material"))
    return concepts


def make_scene(rng: random.Random, index: int, *, skew: float | None = None, sampled_as: str | None = None,
               prefix: str = "superCLEVR_synth") -> dict[str, Any]:
    """One scene record in Super-CLEVR's format; its objects' concepts uniform, skewed per scene
    (`skew`), or sampled from a variant's target (`sampled_as`)."""
    parts_of = load_vocabulary().parts_of_shape
    shapes = tuple(parts_of)
    while True:
        n = rng.randint(3, 10)
        pick = _as_variant(sampled_as) if sampled_as else _skewed(rng, shapes, skew)
        sizes = [rng.choice(SIZES) for _ in range(n)]
        spots = _place(rng, sizes)
        if spots is not None:
            break
    directions = _directions(rng)
    objects, coords = [], []
    for size, (x, y) in zip(sizes, spots, strict=True):
        shape, color, material = pick(rng)
        point = [round(x, 4), round(y, 4), round(0.35 if size == "large" else 0.18, 4)]
        parts = {}
        for part in rng.sample(parts_of[shape], min(3, len(parts_of[shape]))):
            parts[part] = {"size": size, "color": rng.choice([c for c in COLORS if c != color]),
                           "material": rng.choice(MATERIALS)}
        objects.append({"shape": shape, "size": size, "color": color, "material": material,
                        "3d_coords": point, "rotation": round(rng.uniform(0, 360), 3),
                        "pixel_coords": _pixel(point, directions), "parts": parts})
        coords.append(point)
    return {"split": "synth", "image_index": index, "image_filename": f"{prefix}_{index:06d}.png",
            "objects": objects, "directions": directions, "relationships": _relationships(coords, directions)}


# --- questions -----------------------------------------------------------------------------


def _value_of(item: Any, kind: str, scene: ClevrScene, rng: random.Random) -> str:
    """The value of `item` (an object index or a part) for a parameter of `kind`."""
    vocab = load_vocabulary()
    if isinstance(item, tuple):  # a part: (object, raw part name)
        if kind == "Partname":
            return item[1]
        return scene.objects[item[0]].parts[item[1]][_ATTRIBUTE[kind]]
    obj = scene.objects[item]
    if kind == "Shape":
        return vocab.shape_category[obj.shape] if rng.random() < 0.2 else obj.shape
    return obj.value(_ATTRIBUTE[kind])


def _prefix_output(family: Family, values: dict[str, str], node: int, scene: ClevrScene) -> Any:
    """The output of template node `node` with the values chosen so far (Invalid if it has none)."""
    program, at = build_program_and_map(family, values)
    ex = execute(program[: at[node] + 1], scene)
    return ex if isinstance(ex, Invalid) else ex.outputs[at[node]]


def instantiate(family: Family, scene: ClevrScene, rng: random.Random) -> dict[str, str] | None:
    """Values for `family` anchored on `scene`'s objects, or None when this attempt fails."""
    values = {p: null_value(kind) for p, kind in family.params.items()}
    fixed_null = {c["params"][0] for c in family.constraints if c["type"] == "NULL"}
    for t, node in enumerate(family.nodes):
        side = list(node.get("side_inputs", []))
        if not side:
            continue
        current = _prefix_output(family, values, node["inputs"][0], scene)
        if isinstance(current, Invalid):
            return None
        if node["type"].startswith("relate"):
            relation = side.pop(0)
            values[relation] = rng.choice(RELATIONS)
            current = scene.related.get((values[relation], current), ())
        free = [p for p in side if p not in fixed_null]
        if node["type"] in _REFERENCES:
            if not current:
                return None
            target = rng.choice(current)
            said = [p for p in free if rng.random() < 0.5]
            rest = [p for p in free if p not in said]
            rng.shuffle(rest)
            while True:
                for p in free:
                    values[p] = _value_of(target, family.params[p], scene, rng) if p in said else \
                        null_value(family.params[p])
                out = _prefix_output(family, values, t, scene)
                if not isinstance(out, Invalid) and out == target:
                    break
                if not rest:
                    return None
                said.append(rest.pop())
        else:
            for p in free:
                if rng.random() < 0.5:
                    kind = family.params[p]
                    values[p] = _value_of(rng.choice(current), kind, scene, rng) if current else \
                        rng.choice(load_vocabulary().values[kind])
    return values


def _words(values: dict[str, str], rng: random.Random) -> dict[str, str]:
    """A synonym for each value that has several ("tiny" or "small"), as the generator picks one."""
    vocab = load_vocabulary()
    return {p: rng.choice(vocab.synonyms[v]) if v in vocab.synonyms else "" for p, v in values.items()}


def question_on(family: Family, scene: ClevrScene, rng: random.Random) -> tuple[str, list[dict[str, Any]], Any] | None:
    """(words, program, answer) of one valid question of `family` on `scene`, or None."""
    values = instantiate(family, scene, rng)
    if values is None or not constraints_hold(family, values):
        return None
    program, at = build_program_and_map(family, values)
    execution = execute(program, scene)
    if isinstance(execution, Invalid):
        return None
    text_index = rng.randrange(len(family.texts))
    optionals = family.texts[text_index].count("[")
    reading = Reading(family, text_index, values, _words(values, rng),
                      {f"opt{i}": "x" if rng.random() < 0.5 else None for i in range(optionals)})
    if not out_neq_holds(reading.family, at, execution) or _degenerate(program, scene, execution.answer):
        return None
    text = render(reading, values)
    reread = read_question({"question": text, "template_filename": family.file,
                            "question_family_index": family.index})
    if not isinstance(reread, Reading) or reread.program() != program:
        return None
    return text, program, execution.answer


def _answer_as_released(answer: Any) -> Any:
    """Super-CLEVR's files write booleans and counts as JSON values, names in words."""
    if isinstance(answer, (bool, int)):
        return answer
    return load_vocabulary().answer_words(answer)


def questions_for(scene_record: dict[str, Any], rng: random.Random, *, object_questions: int,
                  part_questions: int) -> list[dict[str, Any]]:
    image, graph = scene_graph(scene_record, path="synth", record=f"scene {scene_record['image_index']}")
    scene = clevr_scene(image, graph)
    by_file: dict[str, list[Family]] = {}
    for (file, _), family in load_families().items():
        by_file.setdefault(file, []).append(family)
    object_files = sorted(f for f in by_file if f != PART_FAMILY_FILE)
    pools = (object_files, object_questions), ([PART_FAMILY_FILE], part_questions)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for pool, wanted in pools:
        kept = 0
        for _ in range(wanted * ATTEMPTS_PER_QUESTION):
            if kept == wanted:
                break
            family = rng.choice(by_file[rng.choice(pool)])  # a template file, then a family in it
            made = question_on(family, scene, rng)
            if made is None or made[0] in seen:
                continue
            text, program, answer = made
            seen.add(text)
            kept += 1
            out.append({"split": "synth", "image_filename": scene_record["image_filename"],
                        "image_index": scene_record["image_index"], "image": image, "question": text,
                        "answer": _answer_as_released(answer), "template_filename": family.file,
                        "question_family_index": family.index, "program": program})
    return out


def make_pool(n_scenes: int, *, seed: int = 0, skew: float | None = None, sampled_as: Sequence[str] = (),
              object_questions: int = 5, part_questions: int = 5) -> tuple[dict[str, Any], dict[str, Any]]:
    """({"scenes": [...]}, {"questions": [...]}), the questions numbered in order; with
    `sampled_as`, scene i is sampled as variant sampled_as[i % len(sampled_as)]."""
    rng = random.Random(seed)
    scenes, questions = [], []
    for i in range(n_scenes):
        scene = make_scene(rng, i, skew=skew, sampled_as=sampled_as[i % len(sampled_as)] if sampled_as else None)
        scenes.append(scene)
        questions += questions_for(scene, rng, object_questions=object_questions, part_questions=part_questions)
    for i, q in enumerate(questions):
        q["question_index"] = i
    info = {"split": "synth", "license": "synthetic (contrastgen benchmarks/synth_superclevr.py)",
            "seed": seed, "skew": skew, "sampled_as": list(sampled_as)}
    return {"info": info, "scenes": scenes}, {"info": info, "questions": questions}


def write_pool(out: Path, n_scenes: int, **kwargs: Any) -> tuple[int, int]:
    scenes, questions = make_pool(n_scenes, **kwargs)
    with atomic_dir(out) as tmp:
        write_json(tmp / "scenes.json", scenes)
        write_json(tmp / "questions.json", questions)
    return len(scenes["scenes"]), len(questions["questions"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skew", type=float, default=None,
                    help="Dirichlet concentration of each scene's own concept weights (omit: uniform)")
    ap.add_argument("--sampled-as", default="",
                    help="comma-separated Super-CLEVR variants (bal,long,co-1,...; 'all' for the nine drawn ones): "
                         "scene i's objects sampled from variant i mod k's target, as the authors render it")
    ap.add_argument("--object-questions", type=int, default=5)
    ap.add_argument("--part-questions", type=int, default=5)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    sampled_as = DRAWN_VARIANTS if args.sampled_as == "all" else tuple(v for v in args.sampled_as.split(",") if v)
    n, q = write_pool(args.out, args.scenes, seed=args.seed, skew=args.skew, sampled_as=sampled_as,
                      object_questions=args.object_questions, part_questions=args.part_questions)
    print(f"wrote {n} scenes and {q} questions to {args.out}")


if __name__ == "__main__":
    main()
