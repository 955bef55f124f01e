"""Super-CLEVR's dataset variants, drawn from a pool of scenes: what `contrastgen ood superclevr
--variant ...` builds, for models to be trained on one variant and tested on every other.

The paper (Li et al. 2023, section 3.3) renders a dataset per variant. Scenes cannot be rendered
here, so each variant is a subset of the scenes a user has (or of a synthetic pool), with all the
questions asked about them:
- bal, slt, long, head, tail, oppo, co-0, co-1, co-2: scenes drawn so that their objects follow
  the variant's target distribution (`superclevr_targets`, `superclevr_draw`), within a stated
  KL tolerance, or refused;
- rd-, rd, rd+: the scenes of bal, with every question worded at that redundancy level
  (`redundancy`); a question that cannot be worded at all three levels is left out of all three,
  so the three hold the same questions and differ only in their words;
- easy, mid, hard (visual complexity): the released variants' own scene files, given by the user
  (`--visual easy=DIR`): they share layouts and questions, so each is the same scenes and questions
  in its own rendering. Rendering new ones needs Blender, which contrastgen does not run.

Every variant has a train part and a test part (head, tail and oppo are test only). The pool's
scenes are first split, seeded, into a train pool and a test pool (`test_share`), and each part is
drawn from its own: no scene a model is tested on is in any variant's training part. Training
parts all have the same number of scenes (by default the largest every trainable variant reaches),
so a difference between variants is not one of training-set size; each test part is as large as
its variant reaches, or `test_scenes`. A question's id in a variant is `<variant>/<its id>`, so one
predictions file per model can answer every test part at once.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contrastgen.datasets.clevr_released import read_questions, read_scenes
from contrastgen.errors import InputError
from contrastgen.files.atomic import atomic_dir
from contrastgen.files.manifest import OOD_SUPERCLEVR_VARIANTS, write_manifest
from contrastgen.jsonio import write_json, write_text
from contrastgen.ood.superclevr_draw import Draw, Reach, Unreachable, draw, reachable
from contrastgen.ood.superclevr_targets import DRAWN_VARIANTS, TEST_ONLY, target
from contrastgen.terminal.progress import Advance, noop
from contrastgen.terminal.progress import progress as progress_bar

REDUNDANCY_VARIANTS = ("rd-", "rd", "rd+")
VISUAL_VARIANTS = ("easy", "mid", "hard")
VARIANTS = DRAWN_VARIANTS + REDUNDANCY_VARIANTS + VISUAL_VARIANTS
PARTS = ("train", "test")
PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class VariantConfig:
    variants: tuple[str, ...]
    tolerance: float = 0.01  # KL(achieved || target) of every block, nats
    test_share: float = 0.2  # of the pool's scenes, kept for test parts
    seed: int = 0
    train_scenes: int | None = None  # per training part; None: the largest every trainable variant reaches
    test_scenes: int | None = None  # per test part; None: the largest each variant reaches
    visual: dict[str, Path] = field(default_factory=dict)  # easy / mid / hard -> that variant's scenes

    def __post_init__(self) -> None:
        unknown = [v for v in self.variants if v not in VARIANTS]
        if unknown:
            raise InputError(f"unknown variant(s) {', '.join(unknown)}; expected {', '.join(VARIANTS)}")
        wrong = [v for v in self.visual if v not in VISUAL_VARIANTS]
        if wrong:
            raise InputError(f"--visual names {', '.join(wrong)}; the visual variants are {', '.join(VISUAL_VARIANTS)}")
        missing = [v for v in self.variants if v in VISUAL_VARIANTS and v not in self.visual]
        if missing:
            raise InputError(f"variant(s) {', '.join(missing)} need their scenes (--visual {missing[0]}=DIR): visual "
                             "complexity needs rendered images, which only the released variants have")
        if not self.tolerance > 0:
            raise InputError(f"the tolerance must be positive, got {self.tolerance}")
        if not 0 < self.test_share < 1:
            raise InputError(f"the test share must be between 0 and 1, got {self.test_share}")
        for name, n in (("train", self.train_scenes), ("test", self.test_scenes)):
            if n is not None and n < 1:
                raise InputError(f"--{name}-scenes must be at least 1, got {n}")


@dataclass
class Part:
    """One part (train or test) of one variant."""

    scenes: list[str]
    questions: list[dict[str, Any]]
    draw: Draw | None = None  # for drawn variants
    reachable: int | None = None

    def stats(self, sources: Mapping[str, str]) -> dict[str, Any]:
        out: dict[str, Any] = {"scenes": len(self.scenes), "questions": len(self.questions)}
        by_source: dict[str, int] = {}
        for s in self.scenes:
            by_source[sources[s]] = by_source.get(sources[s], 0) + 1
        out["scenes_by_source"] = dict(sorted(by_source.items()))
        if self.draw is not None:
            out.update({"objects": self.draw.objects, "kl": self.draw.kl, "max_kl": self.draw.max_kl,
                        "counts": self.draw.counts})
        if self.reachable is not None:
            out["reachable"] = self.reachable
        return out


def read_pool(paths: Sequence[PathLike]) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    """Objects by scene over several scene files or folders, and each scene's source path; a scene
    name given twice is refused, naming both sources."""
    objects: dict[str, list[dict[str, Any]]] = {}
    source: dict[str, str] = {}
    for path in paths:
        for name, objs in read_scenes(path).items():
            if name in source:
                raise InputError(f"scene {name!r} is in {source[name]} and again here; a pool names each scene "
                                 "once", path=str(path))
            objects[name], source[name] = objs, str(path)
    return objects, source


def split_pool(names: Sequence[str], test_share: float, seed: int) -> tuple[list[str], list[str]]:
    """(train pool, test pool), seeded, each sorted."""
    order = sorted(names)
    random.Random(f"{seed}:pool").shuffle(order)
    n_test = max(1, round(test_share * len(order))) if len(order) > 1 else 0
    return sorted(order[n_test:]), sorted(order[:n_test])


def _as_variant(q: Mapping[str, Any], variant: str) -> dict[str, Any]:
    out = dict(q)
    out["question_index"] = f"{variant}/{q['question_index']}"
    out["variant"] = variant
    return out


def _questions_of(scenes: Sequence[str], by_image: Mapping[str, list[dict[str, Any]]], variant: str
                  ) -> list[dict[str, Any]]:
    return [_as_variant(q, variant) for s in scenes for q in by_image.get(s, [])]


def _image(q: Mapping[str, Any]) -> str:
    return Path(str(q.get("image") or q.get("image_filename"))).stem


class _Drawer:
    """The drawn variants' parts, sized and drawn once each."""

    def __init__(self, config: VariantConfig, objects: Mapping[str, list[dict[str, Any]]],
                 pools: Mapping[str, list[str]]):
        self.config, self.objects, self.pools = config, objects, pools
        self._reach: dict[tuple[str, str], Reach] = {}

    def reach(self, variant: str, part: str) -> Draw:
        key = (variant, part)
        if key not in self._reach:
            self._reach[key] = reachable(target(variant), self.pools[part], self.objects, self.config.tolerance)
        return self._reach[key].best

    def shortfall(self, variants: Sequence[str], part: str) -> str:
        """How close the pool comes to each of `variants` that it cannot reach."""
        return "; ".join(f"{v}: {self._reach[(v, part)].shortfall()}" for v in variants)

    def train_size(self, trainable: Sequence[str]) -> int:
        if self.config.train_scenes is not None:
            return self.config.train_scenes
        reached = {v: len(self.reach(v, "train").scenes) for v in trainable}
        size = min(reached.values())
        if size == 0:
            none = [v for v, n in reached.items() if n == 0]
            raise Unreachable(f"the train pool ({len(self.pools['train'])} scenes) reaches no draw of {', '.join(none)} "
                              f"within KL {self.config.tolerance} of the target ({self.shortfall(none, 'train')}); give "
                              "a larger or more varied pool (benchmarks/synth_superclevr.py --skew writes one) or a "
                              "larger --tolerance")
        return size

    def reached(self, variant: str, part: str) -> int | None:
        """How many scenes the pool reaches, when that was measured."""
        got = self._reach.get((variant, part))
        return None if got is None else len(got.best.scenes)

    def part(self, variant: str, part: str, size: int | None) -> Draw:
        if size is None:
            got = self.reach(variant, part)
            if not got.scenes:
                raise Unreachable(f"variant {variant}: the {part} pool ({len(self.pools[part])} scenes) reaches no draw "
                                  f"within KL {self.config.tolerance} of the target ({self.shortfall([variant], part)}); "
                                  "give a larger or more varied pool or a larger --tolerance")
            return got
        return draw(target(variant), self.pools[part], self.objects, size, self.config.tolerance,
                    f"{self.config.seed}:{variant}:{part}")


@dataclass
class Variants:
    parts: dict[str, dict[str, Part]]  # variant -> part -> scenes and questions
    pool: dict[str, int]  # scenes with questions, and how many went to the train and test pools
    notes: dict[str, Any] = field(default_factory=dict)  # what was left out, per kind of variant


def build_variants(config: VariantConfig, objects: Mapping[str, list[dict[str, Any]]],
                   questions: Sequence[dict[str, Any]], graphs: Mapping[str, Any] | None = None,
                   visual: Mapping[str, Mapping[str, Any]] | None = None, advance: Advance = noop) -> Variants:
    """Each variant's parts: scenes and questions (and the draw). `graphs` (the scenes in the data
    model) are needed for the redundancy variants, `visual` (variant -> its scene graphs) for the
    visual ones. `advance(n)` as n more variants are built (a progress bar's; `variant_count`
    is its total)."""
    by_image = _questions_by_image(questions)
    asked = sorted(s for s in by_image if s in objects)
    pools = _pools(config, asked)
    wanted = list(config.variants)
    out = _drawn_parts(config, objects, pools, by_image, advance)
    notes: dict[str, Any] = {}
    if any(v in REDUNDANCY_VARIANTS for v in wanted):
        redundancy, notes["redundancy"] = _redundancy_variants(out["bal"], by_image, graphs)
        out.update(redundancy)
        advance(sum(v in wanted for v in REDUNDANCY_VARIANTS))
    seen = [v for v in VISUAL_VARIANTS if v in wanted]
    if seen:
        visual_parts, notes["visual"] = _visual_variants(seen, visual or {}, pools, by_image)
        out.update(visual_parts)
        advance(len(seen))
    return Variants({v: out[v] for v in wanted}, {"scenes": len(asked), "train": len(pools["train"]),
                                                  "test": len(pools["test"])}, notes)


def _questions_by_image(questions: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each scene's questions, each with its `question_index` (its place in the list when the file
    gives none)."""
    by_image: dict[str, list[dict[str, Any]]] = {}
    for i, q in enumerate(questions):
        by_image.setdefault(_image(q), []).append(dict(q, question_index=q.get("question_index", i)))
    return by_image


def _pools(config: VariantConfig, asked: Sequence[str]) -> dict[str, list[str]]:
    """The train and test pools of the scenes asked about. A part asked larger than its pool is
    refused here, before any draw, naming the option: no draw can take more scenes than its pool."""
    train_pool, test_pool = split_pool(asked, config.test_share, config.seed)
    pools = {"train": train_pool, "test": test_pool}
    for part, asked_for in (("train", config.train_scenes), ("test", config.test_scenes)):
        if asked_for is not None and asked_for > len(pools[part]):
            raise InputError(f"--{part}-scenes {asked_for}: the {part} pool holds {len(pools[part])} scenes "
                             f"(of {len(asked)} asked about; --test-share sets the split)")
    return pools


def _drawn_parts(config: VariantConfig, objects: Mapping[str, list[dict[str, Any]]],
                 pools: Mapping[str, list[str]], by_image: Mapping[str, list[dict[str, Any]]],
                 advance: Advance) -> dict[str, dict[str, Part]]:
    """The drawn variants asked for, and bal when a redundancy variant is (those are worded on its
    scenes): each part drawn from its own pool, every training part of one size."""
    drawer = _Drawer(config, objects, pools)
    drawn = [v for v in config.variants if v in DRAWN_VARIANTS]
    if any(v in REDUNDANCY_VARIANTS for v in config.variants) and "bal" not in drawn:
        drawn.append("bal")
    trainable = [v for v in drawn if v not in TEST_ONLY]
    size = drawer.train_size(trainable) if trainable else None
    out: dict[str, dict[str, Part]] = {}
    for v in drawn:
        out[v] = {}
        for part in PARTS:
            if part == "train" and v in TEST_ONLY:
                continue
            got = drawer.part(v, part, size if part == "train" else config.test_scenes)
            out[v][part] = Part(list(got.scenes), _questions_of(got.scenes, by_image, v), got,
                                drawer.reached(v, part))
        advance(1)
    return out


def _redundancy_variants(bal: Mapping[str, Part], by_image: Mapping[str, list[dict[str, Any]]],
                         graphs: Mapping[str, Any] | None) -> tuple[dict[str, dict[str, Part]], dict[str, Any]]:
    """rd-, rd, rd+ on bal's scenes: the questions worded at all three levels, each at its own."""
    from contrastgen.ood.superclevr_redundancy import redundancy_splits

    if graphs is None:
        raise InputError("the redundancy variants need the scenes in the data model (graphs)")
    out: dict[str, dict[str, Part]] = {v: {} for v in REDUNDANCY_VARIANTS}
    notes: dict[str, Any] = {}
    for part, p in bal.items():
        originals = [q for s in p.scenes for q in by_image.get(s, [])]
        levels, stats = redundancy_splits(originals, graphs)
        common = set.intersection(*({str(q["question_index"]) for q in qs} for qs in levels.values()))
        for lvl in REDUNDANCY_VARIANTS:
            kept = [q for q in levels[lvl] if str(q["question_index"]) in common]
            out[lvl][part] = Part(list(p.scenes), [_as_variant(q, lvl) for q in kept])
        notes[part] = {"questions": len(originals), "kept": len(common), "left_out": len(originals) - len(common),
                       "originals": stats["originals"],
                       "mean_attributes_said": {lvl: _mean_said(out[lvl][part].questions) for lvl in REDUNDANCY_VARIANTS},
                       "mean_relations_said": {lvl: _mean_said(out[lvl][part].questions, relations=True)
                                               for lvl in REDUNDANCY_VARIANTS}}
    return out, notes


def _mean_said(questions: Sequence[Mapping[str, Any]], *, relations: bool = False) -> float | None:
    from contrastgen.clevr.redundant_relations import relations_said
    from contrastgen.ood.superclevr_redundancy import attribute_filters

    count = relations_said if relations else attribute_filters
    said = [count(q["program"]) for q in questions]
    return round(sum(said) / len(said), 3) if said else None


def _answers_on(questions: Sequence[Mapping[str, Any]], graphs: Mapping[str, Any]) -> dict[str, str | None]:
    """Each question's answer on `graphs`' scenes, executed from its words; None where it is not
    read or its program does not run there."""
    from contrastgen.clevr.executor import Invalid, execute
    from contrastgen.clevr.scene_view import clevr_scene
    from contrastgen.datasets.clevr_reading import Reading, read_question
    from contrastgen.datasets.clevr_vocab import load_vocabulary

    vocab = load_vocabulary()
    scenes: dict[str, Any] = {}
    out: dict[str, str | None] = {}
    for q in questions:
        image = _image(q)
        reading = read_question(q)
        if not isinstance(reading, Reading) or image not in graphs:
            out[str(q["question_index"])] = None
            continue
        scene = scenes.get(image) or scenes.setdefault(image, clevr_scene(image, graphs[image]))
        result = execute(reading.program(), scene)
        out[str(q["question_index"])] = None if isinstance(result, Invalid) else vocab.answer_words(result.answer)
    return out


def _visual_variants(wanted: Sequence[str], visual: Mapping[str, Mapping[str, Any]], pools: Mapping[str, list[str]],
                     by_image: Mapping[str, list[dict[str, Any]]]) -> tuple[dict[str, dict[str, Part]], dict[str, int]]:
    """easy / mid / hard: the same scenes and questions, each answered on its own rendering's scene
    (a part's colour may differ between them); a question is kept where it runs on every one of
    them, so the variants differ in their images only."""
    lacking = [v for v in wanted if v not in visual]
    if lacking:
        raise InputError(f"variant {lacking[0]} needs its scenes (--visual {lacking[0]}=DIR)")
    for v in wanted:
        missing = sorted(s for pool in pools.values() for s in pool if s not in visual[v])
        if missing:
            raise InputError(f"the {v} scenes lack {len(missing)} of the scenes the questions ask about (first: "
                             f"{missing[0]}); the visual variants share their layouts, so each needs every scene")
    questions = [q for pool in pools.values() for s in pool for q in by_image.get(s, [])]
    answers = {v: _answers_on(questions, visual[v]) for v in wanted}
    keep = {str(q["question_index"]) for q in questions if all(answers[v][str(q["question_index"])] is not None
                                                               for v in wanted)}
    out: dict[str, dict[str, Part]] = {}
    for v in wanted:
        out[v] = {}
        for part, pool in pools.items():
            qs = [dict(_as_variant(q, v), answer=answers[v][str(q["question_index"])])
                  for s in pool for q in by_image.get(s, []) if str(q["question_index"]) in keep]
            out[v][part] = Part(list(pool), qs)
    return out, {"questions": len(questions), "kept": len(keep), "left_out": len(questions) - len(keep)}


def variant_stats(config: VariantConfig, built: Variants, sources: Mapping[str, str]) -> dict[str, Any]:
    variants: dict[str, Any] = {}
    for v, parts in built.parts.items():
        entry: dict[str, Any] = {"test_only": v in TEST_ONLY,
                                 "parts": {p: part.stats(sources) for p, part in parts.items()}}
        if v in DRAWN_VARIANTS:
            entry["target"] = {b.name: {b.label(c): w for c, w in zip(b.values, b.weights, strict=True)}
                               for b in target(v).blocks}
        variants[v] = entry
    return {"benchmark": "super-clevr", "layout": "variants", "tolerance": config.tolerance,
            "test_share": config.test_share, "seed": config.seed, "pool": built.pool, "variants": variants,
            "left_out": built.notes}


def render_variants_markdown(stats: Mapping[str, Any]) -> str:
    lines = ["# Super-CLEVR variants", "",
             f"Pool: {stats['pool']['scenes']} scenes with questions ({stats['pool']['train']} train, "
             f"{stats['pool']['test']} test); tolerance KL <= {stats['tolerance']} per block; seed {stats['seed']}.",
             "", "| variant | part | scenes | questions | objects | worst KL (block) | reachable |",
             "|---|---|---:|---:|---:|---|---:|"]
    for v, entry in stats["variants"].items():
        for p, s in entry["parts"].items():
            worst = "" if "kl" not in s else max(s["kl"], key=lambda b: s["kl"][b])
            kl = "" if not worst else f"{s['kl'][worst]:.4f} ({worst})"
            lines.append(f"| {v} | {p} | {s['scenes']} | {s['questions']} | {s.get('objects', '')} | {kl} | "
                         f"{s.get('reachable', '')} |")
    return "\n".join(lines) + "\n"


def variant_count(config: VariantConfig) -> int:
    """How many variants `build_variants` builds for `config`: those asked, and bal, on whose
    scenes the redundancy variants are worded."""
    wanted = set(config.variants)
    with_bal = bool(wanted & set(REDUNDANCY_VARIANTS)) and "bal" not in wanted
    return len(wanted) + int(with_bal)


def run_variants(scenes: Sequence[PathLike], question_files: Sequence[PathLike], out_dir: PathLike,
                 config: VariantConfig, *, progress: bool = False) -> dict[str, Any]:
    """Read the pool and the questions, build the variants, write `out_dir` whole: per variant
    `variants/<v>/train.json` and `test.json` ({"questions": [...]}), `scenes.json` (each part's
    scene names) and, for a drawn variant, `distribution.png`; `stats.json` and `stats.md`."""
    from contrastgen.datasets.clevr import load_scenes
    from contrastgen.ood.plots import plot_variant_distribution

    objects, sources = read_pool(scenes) if scenes else ({}, {})
    visual_graphs = {v: load_scenes(p) for v, p in config.visual.items()}
    if not objects and visual_graphs:  # the visual variants alone: their layouts are the pool
        first = config.visual[sorted(config.visual)[0]]
        objects, sources = read_pool([first])
    if not objects:
        raise InputError("no scenes given: pass --scenes (a pool to draw from) or --visual")
    questions = read_questions(list(question_files), objects, ", ".join(map(str, scenes)) or None)
    graphs = None
    if any(v in REDUNDANCY_VARIANTS for v in config.variants):
        graphs = {}
        for path in scenes:
            graphs.update(load_scenes(path))
    with progress_bar("building variants", variant_count(config), enabled=progress) as advance:
        built = build_variants(config, objects, questions, graphs, visual_graphs, advance)
    stats = variant_stats(config, built, sources)
    with atomic_dir(out_dir) as tmp:
        for v, parts in built.parts.items():
            folder = tmp / "variants" / v
            for p, part in parts.items():
                write_json(folder / f"{p}.json", {"questions": part.questions})
            write_json(folder / "scenes.json", {p: part.scenes for p, part in parts.items()})
            if v in DRAWN_VARIANTS:
                plot_variant_distribution(v, stats["variants"][v], folder / "distribution.png")
        write_json(tmp / "stats.json", stats, indent=True)
        write_text(tmp / "stats.md", render_variants_markdown(stats))
        write_manifest(tmp, OOD_SUPERCLEVR_VARIANTS, "contrastgen ood superclevr --variant")
    return stats
