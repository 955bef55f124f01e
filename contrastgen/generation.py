"""Running the engine over a whole dataset: shards of images in worker processes, merged in order.

Why shards of images: every question of an image shares one SceneIndex, built once; images are
independent, so shards parallelise without coordination. Workers are forked after the corpus is
built, so the questions, graphs and corpus are shared copy-on-write instead of pickled. Results are
merged back in the order of the input questions, so the output does not depend on `workers`.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from contrastgen.corpus import Corpus
from contrastgen.engine import (
    Engine,
    Generation,
    PerturbResult,
    default_workers,
    normalize_question,
)
from contrastgen.errors import InputError
from contrastgen.gcutil import no_gc
from contrastgen.gqa import load_scene_graphs
from contrastgen.jsonio import dumps
from contrastgen.packing import PackedQuestions, pack_questions
from contrastgen.scene import SceneIndex
from contrastgen.templates import load_templates, screener
from contrastgen.views import ViewEntry, view_entries

KS = (1, 3, 5)
SHARD_IMAGES = 256

_STATE: dict[str, Any] = {}


class Outcome(NamedTuple):
    """What the statistics need of one (question, template) result: small enough that hundreds
    of thousands of them cross from the workers to the parent cheaply."""

    question_id: str
    image_id: str
    template: str | None
    reason: str | None
    ranks: tuple[int, ...]


def _outcome(r: PerturbResult) -> Outcome:
    return Outcome(r.question_id, r.image_id, r.template, r.reason,
                   tuple(p["rank"] for p in r.perturbations))


@dataclass
class ShardResult:
    """One shard's work, already serialised: the parent only concatenates bytes.

    Questions that match no template produce nothing here; the statistics count them as
    questions without an outcome.
    """

    questions: int  # processed, for the progress bar
    outcomes: list[Outcome] = field(default_factory=list)  # matched (question, template) pairs
    lines: list[tuple[str, tuple[bytes, ...]]] = field(default_factory=list)  # (question id, its JSONL lines)
    views: list[ViewEntry] = field(default_factory=list)


class _DictQuestions:
    """Questions given as a dict (the library call) seen as PackedQuestions are: by image."""

    def __init__(self, questions: dict[str, dict]):
        self.questions = questions
        self.order = list(questions)
        self.by_image: dict[str, list[str]] = defaultdict(list)
        for qid, q in questions.items():
            self.by_image[str(q["imageId"])].append(qid)
        self.image_ids = list(self.by_image)  # in order of first appearance

    def __len__(self) -> int:
        return len(self.order)

    def questions_of(self, image_id: str) -> list[tuple[str, str, dict]]:
        qs = self.questions
        return [(qid, qs[qid]["question"], qs[qid]) for qid in self.by_image[image_id]]


Questions = PackedQuestions | _DictQuestions


def _run_shard(images: list[str]) -> ShardResult:
    engine: Engine = _STATE["engine"]
    source: Questions = _STATE["questions"]
    graphs = _STATE["scene_graphs"]
    corpus, max_k, seed = _STATE["corpus"], _STATE["max_k"], _STATE["seed"]
    templates = engine.select_templates(_STATE["templates"])
    out = ShardResult(questions=0)
    for image_id in images:
        items = source.questions_of(image_id)
        out.questions += len(items)
        # a record of None: the loader's screen found that no template can match
        matched = [(qid, record, m) for qid, text, record in items
                   if record is not None and (m := engine.match(text, templates))]
        if not matched:
            continue
        graph = graphs.get(image_id)
        scene = SceneIndex.build(image_id, graph, engine.lex) if graph is not None else None
        existing = {normalize_question(text) for _, text, _ in items}
        for qid, record, matches in matched:
            packed = record if isinstance(record, bytes) else None
            q = orjson.loads(packed) if packed is not None else record
            results = engine.perturb_question(qid, q, graph, corpus=corpus, max_k=max_k, seed=seed,
                                              scene=scene, existing=existing, matches=matches)
            out.outcomes.extend(_outcome(r) for r in results)
            records = [rec for r in results if (rec := r.to_record()) is not None]
            if records:
                out.lines.append((qid, tuple(map(dumps, records))))
                out.views.extend(view_entries(qid, q, records, original_json=packed))
    return out


def run_generation(engine: Engine, questions: dict[str, dict] | PackedQuestions,
                   scene_graphs: dict[str, dict], *, max_k: int, seed: int, templates: list[str] | None,
                   workers: int | None, progress: bool, corpus: Corpus | None) -> Generation:
    if max_k < 1:
        raise ValueError("max_k must be at least 1")
    engine.select_templates(templates)  # validates ids before any work
    workers = default_workers() if workers is None else max(1, workers)
    # Freeze what is loaded: the collector then never walks the millions of loaded objects (nor,
    # in forked workers, touches and so copies their pages). A caller that froze them keeps them
    # frozen.
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        return _generate(engine, questions, scene_graphs, max_k=max_k, seed=seed, templates=templates,
                         workers=workers, progress=progress, corpus=corpus)
    finally:
        _STATE.clear()
        if not frozen_before:
            gc.unfreeze()


def _generate(engine: Engine, questions: dict[str, dict] | PackedQuestions, scene_graphs: dict[str, dict],
              *, max_k: int, seed: int, templates: list[str] | None, workers: int, progress: bool,
              corpus: Corpus | None) -> Generation:
    corpus = corpus if corpus is not None else engine.build_corpus(scene_graphs)
    source = questions if isinstance(questions, PackedQuestions) else _DictQuestions(questions)
    images = source.image_ids
    shards = [images[i:i + SHARD_IMAGES] for i in range(0, len(images), SHARD_IMAGES)]
    _STATE.update(engine=engine, questions=source, scene_graphs=scene_graphs, corpus=corpus,
                  max_k=max_k, seed=seed, templates=templates)
    outcomes: list[Outcome] = []
    lines: dict[str, tuple[bytes, ...]] = {}
    views: list[ViewEntry] = []

    def collect(shard: ShardResult) -> None:
        outcomes.extend(shard.outcomes)
        lines.update(shard.lines)
        views.extend(shard.views)
        advance(shard.questions)

    with _progress(progress, len(source)) as advance:
        if workers > 1 and len(shards) > 1:
            with mp.get_context("fork").Pool(workers) as pool:
                for shard_out in pool.imap_unordered(_run_shard, shards, chunksize=1):
                    collect(shard_out)
        else:
            for shard in shards:
                collect(_run_shard(shard))
    views.sort(key=_key)
    _check_ids(views, set(source.order))
    return Generation(lines=[line for qid in source.order for line in lines.get(qid, ())], views=views,
                      stats=compute_stats(outcomes, len(source), set(images), scene_graphs, max_k, seed,
                                          [t.id for t in engine.select_templates(templates)]),
                      max_k=max_k, seed=seed)


def generate_from_files(engine: Engine, questions: Path, scene_graphs: Path, *, max_k: int, seed: int,
                        templates: list[str] | None, workers: int | None, progress: bool,
                        lap: Callable[[str], None] = lambda phase: None) -> Generation:
    """`contrastgen generate`'s run: load both inputs at once, then generate.

    The questions are streamed and packed (contrastgen.packing) in a second process while this
    one loads the scene graphs and builds the corpus: the two loads take similar time, and the
    packed questions cost a fraction of their parsed size, so the run's peak memory is the
    scene graphs' plus the packed questions', not a million parsed records. `lap(name)` is called
    as each phase ends (the CLI prints the seconds).
    """
    chosen = tuple(t.id for t in engine.select_templates(templates))
    workers = default_workers() if workers is None else max(1, workers)
    with no_gc():  # loading allocates only acyclic data: nothing for the collector to find
        if workers > 1:
            with mp.get_context("fork").Pool(1) as pool:
                pending = pool.apply_async(_pack, (str(questions), chosen))
                graphs = load_scene_graphs(scene_graphs)
                corpus = engine.build_corpus(graphs)
                packed = pending.get()
        else:
            packed = _pack(str(questions), chosen)
            graphs = load_scene_graphs(scene_graphs)
            corpus = engine.build_corpus(graphs)
    lap("load")
    gen = run_generation(engine, packed, graphs, max_k=max_k, seed=seed, templates=templates,
                         workers=workers, progress=progress, corpus=corpus)
    lap("generation")
    return gen


def _pack(path: str, template_ids: tuple[str, ...]) -> PackedQuestions:
    chosen = tuple(t for t in load_templates() if t.id in template_ids)
    with no_gc():
        return pack_questions(path, screener(chosen))


def _key(entry: ViewEntry) -> str:
    return entry.key


def _check_ids(views: list[ViewEntry], question_ids: set[str]) -> None:
    """A perturbation id (`<question id>_<suffix><rank>`) must not be a question id of the input:
    the views are keyed by id, and one of the two would silently replace the other."""
    for e in views:
        if e.rank and e.key in question_ids:
            raise InputError("a question has the id this run gives to a perturbation "
                             "(<question id>_<template suffix><rank>); rename it",
                             record=f"question {e.key}")


class _progress:
    """A rich progress bar when asked (on stderr), a no-op otherwise."""

    def __init__(self, enabled: bool, total: int):
        self.enabled, self.total = enabled, total
        self._bar = None

    def __enter__(self):
        if not self.enabled:
            return lambda n: None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
        self._bar = Progress("[progress.description]{task.description}", BarColumn(),
                             MofNCompleteColumn(), TimeRemainingColumn(),
                             console=Console(stderr=True), transient=False)
        self._bar.__enter__()
        task = self._bar.add_task("generating", total=self.total)
        return lambda n: self._bar.advance(task, n)

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
        return False


def compute_stats(results: list[Outcome] | list[PerturbResult], n_questions: int, images: set[str],
                  scene_graphs: dict[str, dict], max_k: int, seed: int,
                  template_ids: list[str]) -> dict[str, Any]:
    """Counts as in the paper's Tables 5-8, plus a count per reason for no perturbation.

    `results` need hold only the matched (question, template) pairs: every one of the
    `n_questions` questions without one is counted as `no_match`; `images` are the images of all
    the questions.
    """
    ks = [k for k in KS if k <= max_k] + ([max_k] if max_k not in KS else [])
    per_t: dict[str, dict[str, Any]] = {
        t: {"matched": 0, "perturbed": 0, "perturbations": {f"k{k}": 0 for k in ks},
            "images": set(), "augmented_images": set(), "reasons": Counter()} for t in template_ids}
    reasons: Counter = Counter()
    matched_q, perturbed_q, aug_images = set(), set(), set()
    aug_k: Counter = Counter()
    for r in results:
        if isinstance(r, PerturbResult):
            r = _outcome(r)
        if r.template is None:
            continue
        t = per_t[r.template]
        t["matched"] += 1
        t["images"].add(r.image_id)
        matched_q.add(r.question_id)
        if r.ranks:
            t["perturbed"] += 1
            t["augmented_images"].add(r.image_id)
            perturbed_q.add(r.question_id)
            aug_images.add(r.image_id)
            for k in ks:
                n = sum(1 for rank in r.ranks if rank <= k)
                t["perturbations"][f"k{k}"] += n
                aug_k[f"k{k}"] += n
        else:
            t["reasons"][r.reason] += 1
            reasons[r.reason] += 1
    n_q = n_questions
    if n_q > len(matched_q):
        reasons["no_match"] += n_q - len(matched_q)
    out_t = {}
    for tid, t in per_t.items():
        out_t[tid] = {"matched": t["matched"], "perturbed": t["perturbed"],
                      "perturbations": t["perturbations"], "images": len(t["images"]),
                      "augmented_images": len(t["augmented_images"]),
                      "reasons": dict(sorted(t["reasons"].items()))}
    return {
        "max_k": max_k, "seed": seed, "ks": ks,
        "questions": n_q, "images": len(images),
        "images_with_scene_graph": len(images & set(scene_graphs)),
        "matched_questions": len(matched_q), "perturbed_questions": len(perturbed_q),
        "augmented_images": len(aug_images),
        "perturbations": {k: aug_k.get(k, 0) for k in (f"k{k}" for k in ks)},
        "percent_augmented_images": _pct(len(aug_images), len(images)),
        "percent_augmented_questions": {k: _pct(aug_k.get(k, 0), n_q) for k in (f"k{k}" for k in ks)},
        "reasons": dict(sorted(reasons.items())),
        "templates": out_t,
    }


def _pct(a: int, b: int) -> float:
    return round(100.0 * a / b, 2) if b else 0.0
