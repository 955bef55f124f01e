"""Running the engine over a whole dataset: shards of images in worker processes, merged in order.

Why shards of images: every question of an image shares one SceneIndex, built once; images are
independent, so shards parallelise without coordination. Workers are forked after the corpus is
built, so the questions, graphs and corpus are shared copy-on-write instead of pickled. Results are
merged back in the order of the input questions, so the output does not depend on `workers`.
"""

from __future__ import annotations

import functools
import gc
import multiprocessing as mp
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from contrastgen.collector import no_gc, one_collection
from contrastgen.datasets.base import DictQuestions, QuestionSource
from contrastgen.datasets.gqa import InputPaths
from contrastgen.datasets.spilled import SpilledQuestions, spill_questions, spill_scene_graphs
from contrastgen.engine import MODES, Engine
from contrastgen.errors import InputError
from contrastgen.files import scratch
from contrastgen.groups.index import GroupIndex
from contrastgen.groups.record import add_groups, group_stats
from contrastgen.groups.search import REASONS as GROUP_REASONS
from contrastgen.groups.search import finder_for
from contrastgen.jsonio import dumps
from contrastgen.parallel.backend import LOCAL, Backend, default_workers
from contrastgen.parallel.lifetime import die_with_parent
from contrastgen.programs.edits import PROGRAM_PATH
from contrastgen.run.entries import ViewEntry, view_entries
from contrastgen.run.per_image import ImageWork, RunOptions, perturb_in_image
from contrastgen.run.spill import ResultSpill
from contrastgen.run.stats import Outcome, StatsTally, outcome
from contrastgen.scene.corpus import Corpus
from contrastgen.templates.patterns import Template, load_templates, screener

SHARD_IMAGES = 256



@dataclass(frozen=True)
class ShardContext:
    """Everything a shard's work reads: the same for every shard of a run."""

    engine: Engine
    questions: QuestionSource
    scene_graphs: Mapping[str, dict]  # dicts, or graphs kept as JSON (`packing.GraphJson`)
    options: RunOptions


# Each forked worker holds the run's context here, inherited through the fork (never pickled);
# the parent process never sets it.
_WORKER_CONTEXT: ShardContext | None = None


def _adopt(context: ShardContext) -> None:
    global _WORKER_CONTEXT
    die_with_parent()
    _WORKER_CONTEXT = context


def _run_forked_shard(images: list[str]) -> ShardResult:
    assert _WORKER_CONTEXT is not None, "a pool worker started without its context"
    with one_collection():  # the worker is the run's own process, so it may freeze what it keeps
        return run_shard(_WORKER_CONTEXT, images)


@dataclass
class Generation:
    """A whole run, already serialised (see `contrastgen.run.entries` for why).

    `lines` are the lines of contrast_sets.jsonl in the order of the input questions; `views` are
    the originals and perturbations of the GQA and LXMERT outputs, sorted by question id;
    `perturbed` the ids of the questions that got a perturbation, in input order.
    """

    lines: Iterable[bytes]  # a list, or read back from disk (`run.spill`) for a file-to-file run
    views: Iterable[ViewEntry]  # likewise; re-iterable either way
    stats: dict[str, Any]
    max_k: int
    seed: int
    perturbed: list[str] = field(default_factory=list)
    spill: Any = field(default=None, repr=False)  # keeps the spilled files until the run is dropped

    @functools.cached_property
    def records(self) -> list[dict[str, Any]]:
        """The contrast-set records as dicts, for library callers (the writers use the bytes)."""
        return [orjson.loads(line) for line in self.lines]


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
    positions: list[int] = field(default_factory=list)  # input position of each `lines` entry (spilled input)
    groups: Counter = field(default_factory=Counter)  # `--groups`: pairs, groups and reasons


def run_shard(context: ShardContext, images: list[str]) -> ShardResult:
    """The questions of some images, perturbed and serialised: the unit a backend distributes."""
    engine, source, graphs, options = context.engine, context.questions, context.scene_graphs, context.options
    templates = engine.select_templates(options.templates)
    out = ShardResult(questions=0)
    position_of = getattr(source, "position_of", None)  # a spilled input orders the output by position
    for image_id in images:
        items = source.questions_of(image_id)
        out.questions += len(items)
        # a record of None: the loader's screen found that no template can match (it keeps every
        # record when the program path may use it)
        programs = options.mode != "templates"
        matched = [(qid, record, m) for qid, text, record in items
                   if record is not None and ((m := engine.match(text, templates)) or programs)]
        if not matched:
            continue
        work = ImageWork(engine, image_id, graphs.get(image_id), (text for _, text, _ in items))
        for qid, record, matches in matched:
            packed = record if isinstance(record, bytes) else None
            q = orjson.loads(packed) if packed is not None else record
            results = perturb_in_image(work, qid, q, options, matches)
            out.outcomes.extend(outcome(r) for r in results)
            records = [rec for r in results if (rec := r.to_record()) is not None]
            if options.groups is not None:
                add_groups(records, work.scene, finder_for(options.groups, engine.lex), options.seed, out.groups)
            if records:
                out.lines.append((qid, tuple(map(dumps, records))))
                if position_of is not None and (position := position_of(image_id, qid)) is not None:
                    out.positions.append(position)
                out.views.extend(view_entries(qid, q, records, original_json=packed))
    return out


def generate(engine: Engine, questions: dict[str, dict], scene_graphs: dict[str, dict], *, max_k: int = 5,
             seed: int = 0, templates: Iterable[str] | None = None, workers: int | None = None,
             progress: bool = False, corpus: Corpus | None = None, mode: str = "templates",
             backend: Backend = LOCAL, groups: bool = False) -> Generation:
    """Perturb every question of a loaded dataset; results in input order, independent of `workers`
    and of the backend."""
    return run_generation(engine, questions, scene_graphs, max_k=max_k, seed=seed,
                          templates=list(templates) if templates else None,
                          workers=workers, progress=progress, corpus=corpus, mode=mode, backend=backend,
                          groups=groups)


def run_generation(engine: Engine, questions: dict[str, dict] | SpilledQuestions,
                   scene_graphs: Mapping[str, dict], *, max_k: int, seed: int, templates: list[str] | None,
                   workers: int | None, progress: bool, corpus: Corpus | None,
                   mode: str = "templates", backend: Backend = LOCAL,
                   groups: bool | GroupIndex = False) -> Generation:
    """`groups`: look for two-image groups (True), with this index of the graphs if already built."""
    if max_k < 1:
        raise ValueError("max_k must be at least 1")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    engine.select_templates(templates)  # validates ids before any work
    workers = default_workers() if workers is None else max(1, workers)
    # Freeze what is loaded: the collector then never walks the millions of loaded objects (nor,
    # in forked workers, touches and so copies their pages). A caller that froze them keeps them
    # frozen.
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        return _generate(engine, questions, scene_graphs, max_k=max_k, seed=seed, templates=templates,
                         workers=workers, progress=progress, corpus=corpus, mode=mode, backend=backend,
                         groups=groups)
    finally:
        if not frozen_before:
            gc.unfreeze()


def _generate(engine: Engine, questions: dict[str, dict] | SpilledQuestions, scene_graphs: Mapping[str, dict],
              *, max_k: int, seed: int, templates: list[str] | None, workers: int, progress: bool,
              corpus: Corpus | None, mode: str, backend: Backend = LOCAL,
              groups: bool | GroupIndex = False) -> Generation:
    corpus = corpus if corpus is not None else engine.build_corpus(scene_graphs)
    index = groups if isinstance(groups, GroupIndex) else GroupIndex.build(scene_graphs, engine.lex) if groups else None
    source = questions if isinstance(questions, SpilledQuestions) else DictQuestions(questions)
    images = source.image_ids
    shards = [images[i:i + SHARD_IMAGES] for i in range(0, len(images), SHARD_IMAGES)]
    context = ShardContext(engine, source, scene_graphs,
                           RunOptions(corpus=corpus, max_k=max_k, seed=seed, templates=templates, mode=mode,
                                      groups=index))
    template_ids = ([t.id for t in engine.select_templates(templates)]
                    + ([PROGRAM_PATH] if mode != "templates" else []))
    tally = StatsTally(template_ids, max_k)
    lines: dict[str, tuple[bytes, ...]] = {}
    views: list[ViewEntry] = []
    group_counts: Counter = Counter()
    # inputs read from disk put their results on disk too; loaded ones keep them in memory
    sink = ResultSpill() if isinstance(source, SpilledQuestions) else None

    def collect(shard: ShardResult) -> None:
        tally.add(shard.outcomes)
        group_counts.update(shard.groups)
        if sink is not None:
            sink.add(shard.lines, shard.views, shard.positions)
        else:
            lines.update(shard.lines)
            views.extend(shard.views)
        advance(shard.questions)

    with _progress(progress, len(source)) as advance:
        if backend.name == "ray":  # Ray's machinery runs in this process too: the collector stays on
            from contrastgen.run.ray_backend import run_on_ray

            run_on_ray(source, scene_graphs, context.options, shards, collect, address=backend.address)
        elif workers > 1 and len(shards) > 1:
            # The driver only receives acyclic results (bytes, tuples, counts), so the collector's
            # passes over its growing line index and tallies would find nothing; the workers are
            # forked with it paused and collect once per shard. Forked after loading, so the
            # workers share the loaded data copy-on-write.
            with no_gc(), mp.get_context("fork").Pool(workers, initializer=_adopt, initargs=(context,)) as pool:
                for shard_out in pool.imap_unordered(_run_forked_shard, shards, chunksize=1):
                    collect(shard_out)
        else:
            with no_gc():
                for shard in shards:
                    with one_collection():
                        result = run_shard(context, shard)
                    collect(result)
    stats = tally.result(len(source), set(images), scene_graphs, seed)
    if index is not None:
        stats["groups"] = group_stats(group_counts, GROUP_REASONS)
    if sink is not None:
        spilled_lines, spilled_views, merging = sink.finish()
        _check_ids(merging, source.suspicious_ids)  # the merge runs here, once
        return Generation(lines=spilled_lines, views=spilled_views, stats=stats, max_k=max_k, seed=seed,
                          perturbed=spilled_lines.question_ids(), spill=sink)
    views.sort(key=_key)
    _check_ids(views, set(source.order))
    return Generation(lines=[line for qid in source.order for line in lines.get(qid, ())], views=views,
                      stats=stats, max_k=max_k, seed=seed,
                      perturbed=[qid for qid in source.order if qid in lines])


def generate_from_files(engine: Engine, questions: InputPaths, scene_graphs: Path, *, max_k: int, seed: int,
                        templates: list[str] | None, workers: int | None, progress: bool,
                        lap: Callable[[str], None] = lambda phase: None, mode: str = "templates",
                        backend: Backend = LOCAL, groups: bool = False) -> Generation:
    """`contrastgen generate`'s run: load both inputs at once, then generate.

    The questions are streamed into a file of the run's shards (`datasets.spilled`) in a second
    process while this one streams the scene graphs into another and builds the corpus: the two
    loads take similar time, and the driver keeps offsets, hashes and image ids, not the inputs;
    the results go to disk too (`run.spill`), so its memory does not grow with the questions.
    `lap(name)` is called as each phase ends (the CLI prints the seconds).
    """
    chosen = tuple(t.id for t in engine.select_templates(templates))
    workers = default_workers() if workers is None else max(1, workers)
    # the inputs' files live in a temporary folder until the shards are done
    folder = scratch.make_dir("input-")
    try:
        with no_gc(), scratch.writing(folder):  # loading allocates only acyclic data: nothing for the collector to find
            if workers > 1:
                with mp.get_context("fork").Pool(1, initializer=die_with_parent) as pool:
                    pending = pool.apply_async(_spill_questions, (questions, chosen, mode, folder))
                    graphs = spill_scene_graphs(scene_graphs, folder)
                    corpus = engine.build_corpus(graphs)
                    # while the questions are still being read (the longer of the two loads)
                    index = GroupIndex.build(graphs, engine.lex) if groups else None
                    spilled = pending.get()
            else:
                spilled = _spill_questions(questions, chosen, mode, folder)
                graphs = spill_scene_graphs(scene_graphs, folder)
                corpus = engine.build_corpus(graphs)
                index = GroupIndex.build(graphs, engine.lex) if groups else None
        lap("load")
        gen = run_generation(engine, spilled, graphs, max_k=max_k, seed=seed, templates=templates,
                             workers=workers, progress=progress, corpus=corpus, mode=mode, backend=backend,
                             groups=index or False)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    lap("generation")
    return gen


def _spill_questions(path: InputPaths, template_ids: tuple[str, ...], mode: str, folder: Path) -> SpilledQuestions:
    chosen = tuple(t for t in load_templates() if t.id in template_ids)
    with no_gc():
        return spill_questions(path, keeps_whole(chosen, mode), folder, SHARD_IMAGES)


def keeps_whole(templates: tuple[Template, ...], mode: str) -> Callable[[str], bool]:
    """Which questions the loader keeps whole: those a template may match, or with programs every
    one (the rest are kept as their text only)."""
    return screener(templates) if mode == "templates" else _keep_all


def _keep_all(text: str) -> bool:
    """The program path may perturb any question: the loader keeps every record."""
    return True


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
