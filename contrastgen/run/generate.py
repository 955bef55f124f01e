"""Generating contrast sets for a whole dataset: the library's entry points, for each family.

    gen = generate(engine, questions, scene_graphs, max_k=5, workers=2)          # GQA, loaded
    gen = generate_from_files(engine, questions_path, graphs_path, ...)          # GQA, streamed
    gen = generate_clevr(questions, scenes, max_k=5, workers=2)                  # CLEVR-family

Each runs its family's shards (`run.shards`) on this process, a local fork pool or Ray, and the
output does not depend on which, nor on `workers`. `run.pipeline` adds loading and writing, as
the command line and the HTTP service use them.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing as mp
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from contrastgen.collector import no_gc
from contrastgen.datasets.base import DictQuestions
from contrastgen.datasets.gqa import InputPaths
from contrastgen.datasets.question_spill import (
    GraphSpill,
    SpilledQuestions,
    spill_questions,
    spill_scene_graphs,
)
from contrastgen.engine import MODES, Engine
from contrastgen.files import scratch
from contrastgen.groups.index import GroupIndex, IndexBuilder, RecordFile
from contrastgen.groups.search import REASONS as GROUP_REASONS
from contrastgen.parallel.backend import LOCAL, Backend, default_workers
from contrastgen.perturb import PROGRAM_PATH
from contrastgen.results.generation import Generation
from contrastgen.run import shards
from contrastgen.run.clevr_shards import (
    ClevrContext,
    ClevrOptions,
    remote_clevr_shard,
    run_clevr_shard,
)
from contrastgen.run.gqa_shards import ShardContext, forked_shard, remote_shard
from contrastgen.run.index_load import HANDOFF_IMAGES, SharedIndexing, helper_started
from contrastgen.run.per_image import RunOptions
from contrastgen.run.shards import Family, run_shards
from contrastgen.scene.corpus import Corpus
from contrastgen.templates.patterns import Template, load_templates, screener


def generate(engine: Engine, questions: dict[str, dict], scene_graphs: dict[str, dict], *, max_k: int = 5,
             seed: int = 0, templates: Iterable[str] | None = None, workers: int | None = None,
             progress: bool = False, corpus: Corpus | None = None, mode: str = "templates",
             backend: Backend = LOCAL, groups: bool = False) -> Generation:
    """Perturb every question of a loaded dataset; results in input order, independent of `workers`
    and of the backend. `groups`: also look for each contrast pair's two-image group."""
    return run_generation(engine, questions, scene_graphs, max_k=max_k, seed=seed,
                          templates=list(templates) if templates else None,
                          workers=workers, progress=progress, corpus=corpus, mode=mode, backend=backend,
                          groups=groups)


def run_generation(engine: Engine, questions: dict[str, dict] | SpilledQuestions,
                   scene_graphs: Mapping[str, dict], *, max_k: int, seed: int, templates: list[str] | None,
                   workers: int | None, progress: bool, corpus: Corpus | None,
                   mode: str = "templates", backend: Backend = LOCAL,
                   groups: bool | GroupIndex = False) -> Generation:
    """A GQA run over loaded (or spilled) questions. `groups`: look for two-image groups (True),
    with this index of the graphs if it is built already."""
    _check_max_k(max_k)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    engine.select_templates(templates)  # validates ids before any work
    workers = default_workers() if workers is None else max(1, workers)
    with _frozen():
        corpus = corpus if corpus is not None else engine.build_corpus(scene_graphs)
        source = questions if isinstance(questions, SpilledQuestions) else DictQuestions(questions)
        index = _index(groups, scene_graphs, engine)
        options = RunOptions(corpus=corpus, max_k=max_k, seed=seed, templates=templates, mode=mode, groups=index)
        family = Family(local=forked_shard, context=ShardContext(engine, source, scene_graphs, options),
                        remote=remote_shard, options=options,
                        group_reasons=GROUP_REASONS if index is not None else None)
        template_ids = ([t.id for t in engine.select_templates(templates)]
                        + ([PROGRAM_PATH] if mode != "templates" else []))
        return run_shards(family, source, scene_graphs, template_ids=template_ids, max_k=max_k, seed=seed,
                          workers=workers, progress=progress, backend=backend)


def generate_clevr(questions: dict[str, dict[str, Any]], scenes: Mapping[str, dict[str, Any]], *, max_k: int = 5,
                   seed: int = 0, workers: int | None = 1, progress: bool = False,
                   backend: Backend = LOCAL, groups: bool = False, every_original: bool = False) -> Generation:
    """Contrast sets for CLEVR-family questions (`datasets.clevr.load_questions`) on their scenes,
    in input order; independent of `workers` and of the backend. `groups`: also look for each
    contrast pair's two-image group (`groups.clevr`). `every_original`: the views hold every
    original (`augment`'s training file), not only the perturbed ones (`generate`'s)."""
    _check_max_k(max_k)
    workers = default_workers() if workers is None else max(1, workers)
    with _frozen():
        source = DictQuestions(questions)
        index = _index(groups, scenes, None)
        options = ClevrOptions(max_k=max_k, seed=seed, groups=index, every_original=every_original)
        family = Family(local=run_clevr_shard, context=ClevrContext(source, scenes, options),
                        remote=remote_clevr_shard, options=options,
                        group_reasons=(*GROUP_REASONS, "unreadable") if index is not None else None)
        gen = run_shards(family, source, scenes, template_ids=None, max_k=max_k, seed=seed, workers=workers,
                         progress=progress, backend=backend)
    gen.stats["dataset"] = "clevr"
    return gen


def _index(groups: bool | GroupIndex, graphs: Mapping[str, Any], engine: Engine | None) -> GroupIndex | None:
    """The corpus's inverted index when groups are asked for (built here unless given)."""
    if isinstance(groups, GroupIndex):
        return groups
    if not groups:
        return None
    from contrastgen.language.lexicon import Lexicon

    return GroupIndex.build(graphs, engine.lex if engine is not None else Lexicon.load())


def _index_builder(groups: bool, engine: Engine, folder: Path) -> IndexBuilder | None:
    """With groups, the index and the candidates' lookup records, made as the graphs are read
    (once, while the questions are read in the other process)."""
    return IndexBuilder(engine.lex, RecordFile(folder / "lookup.bin")) if groups else None


def _check_max_k(max_k: int) -> None:
    if max_k < 1:
        raise ValueError("max_k must be at least 1")


@contextlib.contextmanager
def _frozen() -> Iterator[None]:
    """Freeze what is loaded: the collector then never walks the millions of loaded objects (nor,
    in forked workers, touches and so copies their pages). A caller that froze them keeps them
    frozen."""
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        yield
    finally:
        if not frozen_before:
            gc.unfreeze()


def generate_from_files(engine: Engine, questions: InputPaths, scene_graphs: Path, *, max_k: int, seed: int,
                        templates: list[str] | None, workers: int | None, progress: bool,
                        lap: Callable[[str], None] = lambda phase: None, mode: str = "templates",
                        backend: Backend = LOCAL, groups: bool = False) -> Generation:
    """`contrastgen generate`'s GQA run: load both inputs at once, then generate.

    The questions are streamed into a file of the run's shards (`datasets.question_spill`) in a
    second process while this one streams the scene graphs into another and builds the corpus:
    the two loads take similar time, and the driver keeps offsets, hashes and image ids, not the
    inputs; the results go to disk too (`run.result_spill`), so its memory does not grow with the
    questions. `lap(name)` is called as each phase ends (the CLI prints the seconds).
    """
    chosen = tuple(t.id for t in engine.select_templates(templates))
    workers = default_workers() if workers is None else max(1, workers)
    # the inputs' files live in a temporary folder until the shards are done
    folder = scratch.make_dir("input-")
    try:
        with no_gc(), scratch.writing(folder):  # loading allocates only acyclic data: nothing for the collector to find
            if workers > 1:
                with mp.get_context("fork").Pool(1, initializer=helper_started, initargs=(engine.lex,)) as pool:
                    pending = pool.apply_async(_spill_questions, (questions, chosen, mode, folder))
                    builder = _index_builder(groups, engine, folder)
                    sharing = SharedIndexing(builder, pool, pending, folder) if builder else None
                    spill = GraphSpill(scene_graphs, folder, sharing.each if sharing else None)
                    for batch in spill.batches(HANDOFF_IMAGES):
                        if sharing:
                            sharing.batch_written(batch)
                    graphs = spill.graphs()
                    corpus = engine.build_corpus(graphs)
                    spilled = pending.get()  # the questions' errors first: the index is no use without them
                    if sharing:
                        sharing.join()
                    index = builder.finish(graphs) if builder else None
            else:
                spilled = _spill_questions(questions, chosen, mode, folder)
                builder = _index_builder(groups, engine, folder)
                graphs = spill_scene_graphs(scene_graphs, folder, builder.add if builder else None)
                corpus = engine.build_corpus(graphs)
                index = builder.finish(graphs) if builder else None
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
        # read when called: a test that asks for small shards sets it in one place
        return spill_questions(path, keeps_whole(chosen, mode), folder, shards.SHARD_IMAGES)


def keeps_whole(templates: tuple[Template, ...], mode: str) -> Callable[[str], bool]:
    """Which questions the loader keeps whole: those a template may match, or with programs every
    one (the rest are kept as their text only)."""
    return screener(templates) if mode == "templates" else _keep_all


def _keep_all(text: str) -> bool:
    """The program path may perturb any question: the loader keeps every record."""
    return True
