"""The GQA family: GQA's files (questions keyed by id, with functional programs; scene graphs
keyed by image id) through the engine, on its two paths (the templates and the program edits).

Why shards of images: every question of an image shares one SceneIndex, built once; images are
independent, so shards parallelise without coordination. A local worker is forked after the
corpus is built and inherits the run's whole context, the caller's engine included; a Ray task
gets the options (and corpus statistics) once and only its shard's questions and graphs, and each
Ray worker process loads the engine once, from the rules the package ships.

From files (`prepare_files`), the questions are streamed into a file of the run's shards
(`datasets.question_spill`) in a second process while this one streams the scene graphs into
another and builds the corpus: the two loads take similar time, and the driver keeps offsets,
hashes and image ids, not the inputs (`gqa_index_load` shares the group index's work between
the two).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contrastgen.datasets import gqa as gqa_files
from contrastgen.datasets.base import DictQuestions
from contrastgen.datasets.inputs import InputPaths
from contrastgen.datasets.question_spill import (
    GraphSpill,
    SpilledQuestions,
    spill_questions,
    spill_scene_graphs,
)
from contrastgen.engine import MODES, Engine
from contrastgen.engine.question import TEMPLATE_SEED
from contrastgen.families import base
from contrastgen.families.base import Family, Prepared, Settings, ShardContext, register
from contrastgen.families.gqa_image_work import ImageWork, RunOptions, perturb_in_image
from contrastgen.families.gqa_index_load import HANDOFF_IMAGES, HelperIndex, SharedIndexing
from contrastgen.files import scratch
from contrastgen.gc_policy import no_gc
from contrastgen.groups.index import GroupIndex, IndexBuilder, RecordFile
from contrastgen.groups.record import add_groups
from contrastgen.groups.search import finder_for
from contrastgen.jsonio import dumps
from contrastgen.parallel.tasks import helper
from contrastgen.perturb import PROGRAM_PATH, TEMPLATE_PATH, PerturbResult
from contrastgen.programs.edits.editor import PROGRAM_SEED
from contrastgen.results.generation import Generation, ShardResult
from contrastgen.results.stats import outcome
from contrastgen.results.view_bytes import view_entries
from contrastgen.scene.corpus import Corpus
from contrastgen.templates.patterns import Template, load_templates, screener

# Why a (question, path) may end without perturbations on the templates and the program path.
REASONS = ("no_answer", "no_match", "no_scene_graph", "not_grounded", "ambiguous", "answer_mismatch",
           "no_distractor", "duplicate", "unannotated_prone", "unsupported_phrase", "no_relation",
           "no_opposite", "inconsistent_graph", "program_mismatch", "not_executable", "unaligned",
           "no_argument", "original_presupposition", "uninformative_answer", "attribute_kind",
           "answer_in_question", "several_colors")


@dataclass(frozen=True)
class GqaOptions:
    """What a GQA run asks beyond the shared settings."""

    templates: list[str] | None = None  # template ids; None: all
    mode: str = "templates"  # engine.MODES: the templates, the program path, or both
    engine: Engine | None = None  # a library caller's own engine; None: the one the package's rules make
    corpus: Corpus | None = None  # the corpus statistics, when built already


def run_shard(context: ShardContext, images: list[str]) -> ShardResult:
    """The questions of some images, perturbed and serialised: the unit a backend distributes.

    Why the group search waits for the whole shard's questions: interleaved with them question by
    question, the engine and the search take turns over different code and data, and each ran
    slower for it (133k questions over 15k graphs, one process: the perturbing 13%, the search
    20%); one after the other, each keeps its own warm. The search sees the records in the same
    order either way. A shard's images (256) wait with their scenes until its search is done."""
    engine = context.local if context.local is not None else _process_engine()
    source, graphs, options = context.questions, context.graphs, context.options
    match = engine.matcher(engine.select_templates(options.templates))
    out = ShardResult(questions=0)
    done: list[tuple[str, str, dict[str, Any], bytes | None, list[PerturbResult]]] = []
    works: dict[str, ImageWork] = {}  # with groups: each image's, whose scene its records' search may ask
    for image_id in images:
        items = source.questions_of(image_id)
        out.questions += len(items)
        # a record of None: the loader's screen found that no template can match (it keeps every
        # record when the program path may use it)
        programs = options.mode != "templates"
        matched = [(qid, record, m) for qid, text, record in items
                   if record is not None and ((m := match(text)) or programs)]
        if not matched:
            continue
        work = ImageWork(engine, image_id, graphs.get(image_id), (text for _, text, _ in items))
        for qid, record, matches in matched:
            packed = record if isinstance(record, bytes) else None
            q = orjson.loads(packed) if packed is not None else record
            results = perturb_in_image(work, qid, q, options, matches)
            out.outcomes.extend(outcome(r) for r in results)
            done.append((image_id, qid, q, packed, [r for r in results if r.perturbations]))
        if options.groups is not None:
            works[image_id] = work
    if options.groups is not None:
        finder = finder_for(options.groups, engine.lex)
        for image_id, _, _, _, kept in done:
            add_groups(kept, works[image_id], finder, options.seed, out.groups)
    position_of = getattr(source, "position_of", None)  # a spilled input orders the output by position
    for image_id, qid, q, packed, kept in done:
        if kept:
            records = [r.record() for r in kept]
            out.lines.append((qid, tuple(map(dumps, records))))
            if position_of is not None and (position := position_of(image_id, qid)) is not None:
                out.positions.append(position)
            out.views.extend(view_entries(qid, q, records, original_json=packed))
    return out


_ENGINE: Engine | None = None  # a Ray worker process's engine, loaded by its first task


def _process_engine() -> Engine:
    global _ENGINE
    if _ENGINE is None:
        _ENGINE = Engine.load()
    return _ENGINE


class Gqa(Family):
    name = "gqa"
    describe = "GQA: questions keyed by id, with programs"
    Options = GqaOptions
    shard = staticmethod(run_shard)
    seed_keys = {TEMPLATE_PATH: TEMPLATE_SEED, PROGRAM_PATH: PROGRAM_SEED}
    reasons = REASONS

    def warnings(self, stats: Mapping[str, Any], options: GqaOptions) -> list[str]:
        # --mode programs|both edits GQA programs (`semantic`); input without any (VQA-style
        # questions, a stripped file) would otherwise end with a bare "program 0" in the table
        if options.mode == "templates" or stats.get("templates", {}).get("program", {}).get("matched", 0):
            return []
        rest = "; the templates alone ran" if options.mode == "both" else ""
        return [f"--mode {options.mode}: no question has a program (`semantic`), so no program edit was tried{rest}"]

    def load_questions(self, path: InputPaths) -> dict[str, dict[str, Any]]:
        return gqa_files.load_questions(path)

    def load_scenes(self, path: str | Path) -> Mapping[str, Any]:
        return gqa_files.load_scene_graphs(path)

    def prepare(self, questions: Mapping[str, Any], graphs: Mapping[str, Any], settings: Settings,
                options: GqaOptions) -> Prepared:
        engine = options.engine or Engine.load()
        _check(engine, options)
        source = questions if isinstance(questions, SpilledQuestions) else DictQuestions(questions)  # type: ignore[arg-type]
        corpus = options.corpus if options.corpus is not None else engine.build_corpus(graphs)
        index = GroupIndex.build(graphs, engine.lex) if settings.groups else None
        return _prepared(engine, source, graphs, settings, options, corpus, index)

    @contextlib.contextmanager
    def prepare_files(self, questions: InputPaths, graphs: str | Path, settings: Settings, options: GqaOptions,
                      lap: Callable[[str], None]) -> Iterator[Prepared]:
        # The engine before the data: loading it allocates enough to trigger full collections,
        # which would walk the whole dataset if it were loaded already.
        engine = options.engine or Engine.load()
        lap("engine")
        _check(engine, options)
        # the inputs' files live in a temporary folder until the shards are done
        folder = scratch.make_dir("input-")
        try:
            spilled, graphs_read, corpus, index = _load(engine, questions, Path(graphs), settings, options, folder)
            lap("load")
            yield _prepared(engine, spilled, graphs_read, settings, options, corpus, index)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def write_augmented(self, gen: Generation, prepared: Prepared, questions: InputPaths, out: Path, *,
                        lxmert_file: Path, replace: bool, seed: int, replace_share: float) -> dict[str, int]:
        """The originals read again from their files, streamed: a training split does not fit
        in memory as records."""
        from contrastgen.writers.augmented import write_augmented_from_files

        return write_augmented_from_files(gen, questions, out, replace=replace, seed=seed, lxmert_file=lxmert_file,
                                          replace_share=replace_share)


def _check(engine: Engine, options: GqaOptions) -> None:
    if options.mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {options.mode!r}")
    engine.select_templates(options.templates)  # validates ids before any work


def _prepared(engine: Engine, source: DictQuestions | SpilledQuestions, graphs: Mapping[str, Any],
              settings: Settings, options: GqaOptions, corpus: Corpus, index: GroupIndex | None) -> Prepared:
    templates = list(options.templates) if options.templates else None
    run_options = RunOptions(corpus=corpus, max_k=settings.max_k, seed=settings.seed, templates=templates,
                             mode=options.mode, groups=index)
    template_ids = ([t.id for t in engine.select_templates(templates)]
                    + ([PROGRAM_PATH] if options.mode != "templates" else []))
    return Prepared(ShardContext(source, graphs, run_options, local=engine), template_ids)


def _load(engine: Engine, questions: InputPaths, graphs: Path, settings: Settings, options: GqaOptions,
          folder: Path) -> tuple[SpilledQuestions, Mapping[str, Any], Corpus, GroupIndex | None]:
    """Both inputs spilled into `folder`, at once when there are workers to spare; the corpus and,
    with groups, the index, made as the graphs are read."""
    chosen = tuple(t.id for t in engine.select_templates(options.templates))
    mode, groups = options.mode, settings.groups
    # loading allocates only acyclic data: nothing for the collector to find
    with no_gc(), scratch.writing(folder):
        if settings.workers > 1:
            with helper(HelperIndex(engine.lex)) as beside:
                pending = beside.submit(_spill_in_helper, questions, chosen, mode, folder)
                builder = _index_builder(groups, engine, folder)
                sharing = SharedIndexing(builder, beside, pending, folder) if builder else None
                spill = GraphSpill(graphs, folder, sharing.each if sharing else None)
                for batch in spill.batches(HANDOFF_IMAGES):
                    if sharing:
                        sharing.batch_written(batch)
                graphs_read = spill.graphs()
                corpus = engine.build_corpus(graphs_read)
                spilled = pending.get()  # the questions' errors first: the index is no use without them
                if sharing:
                    sharing.join()
                index = builder.finish(graphs_read) if builder else None
        else:
            spilled = _spill_questions(questions, chosen, mode, folder)
            builder = _index_builder(groups, engine, folder)
            graphs_read = spill_scene_graphs(graphs, folder, builder.add if builder else None)
            corpus = engine.build_corpus(graphs_read)
            index = builder.finish(graphs_read) if builder else None
    return spilled, graphs_read, corpus, index


def _index_builder(groups: bool, engine: Engine, folder: Path) -> IndexBuilder | None:
    """With groups, the index and the candidates' lookup records, made as the graphs are read
    (once, while the questions are read in the other process)."""
    return IndexBuilder(engine.lex, RecordFile(folder / "lookup.bin")) if groups else None


def _spill_in_helper(state: HelperIndex, path: InputPaths, template_ids: tuple[str, ...], mode: str,
                     folder: Path) -> SpilledQuestions:
    return _spill_questions(path, template_ids, mode, folder)


def _spill_questions(path: InputPaths, template_ids: tuple[str, ...], mode: str, folder: Path) -> SpilledQuestions:
    chosen = tuple(t for t in load_templates() if t.id in template_ids)
    with no_gc():
        # read when called: a test that asks for small shards sets it in one place
        return spill_questions(path, keeps_whole(chosen, mode), folder, base.SHARD_IMAGES)


def keeps_whole(templates: tuple[Template, ...], mode: str) -> Callable[[str], bool]:
    """Which questions the loader keeps whole: those a template may match, or with programs every
    one (the rest are kept as their text only)."""
    return screener(templates) if mode == "templates" else _keep_all


def _keep_all(text: str) -> bool:
    """The program path may perturb any question: the loader keeps every record."""
    return True


GQA = register(Gqa())
