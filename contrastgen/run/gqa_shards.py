"""The GQA family's shard: the questions of some images through the engine (templates and program
edits), serialised.

Why shards of images: every question of an image shares one SceneIndex, built once; images are
independent, so shards parallelise without coordination. A local worker is forked after the
corpus is built and inherits the run's whole `ShardContext`; a Ray task carries only its shard's
questions and graphs (`run.shards.ShardQuestions`), with the options (and corpus statistics)
from the object store, and each Ray worker process loads the engine once, from the rules the
package ships.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from contrastgen.collector import one_collection
from contrastgen.datasets.base import QuestionSource
from contrastgen.engine import Engine
from contrastgen.groups.record import add_groups
from contrastgen.groups.search import finder_for
from contrastgen.jsonio import dumps
from contrastgen.results.generation import ShardResult
from contrastgen.results.stats import outcome
from contrastgen.results.view_bytes import view_entries
from contrastgen.run.per_image import ImageWork, RunOptions, perturb_in_image
from contrastgen.run.shards import ShardPayload, ShardQuestions


@dataclass(frozen=True)
class ShardContext:
    """Everything a shard's work reads: the same for every shard of a run."""

    engine: Engine
    questions: QuestionSource
    scene_graphs: Mapping[str, dict]  # dicts, or graphs kept as JSON (`packing.GraphJson`)
    options: RunOptions


def run_shard(context: ShardContext, images: list[str]) -> ShardResult:
    """The questions of some images, perturbed and serialised: the unit a backend distributes.

    Why the group search waits for the whole shard's questions: interleaved with them question by
    question, the engine and the search take turns over different code and data, and each ran
    slower for it (133k questions over 15k graphs, one process: the perturbing 13%, the search
    20%); one after the other, each keeps its own warm. The search sees the records in the same
    order either way. A shard's images (256) wait with their scenes until its search is done."""
    engine, source, graphs, options = context.engine, context.questions, context.scene_graphs, context.options
    templates = engine.select_templates(options.templates)
    out = ShardResult(questions=0)
    done: list[tuple[str, str, dict[str, Any], bytes | None, list[dict[str, Any]]]] = []
    works: dict[str, ImageWork] = {}  # with groups: each image's, whose scene its records' search may ask
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
            done.append((image_id, qid, q, packed, [rec for r in results if (rec := r.to_record()) is not None]))
        if options.groups is not None:
            works[image_id] = work
    if options.groups is not None:
        finder = finder_for(options.groups, engine.lex)
        for image_id, _, _, _, records in done:
            add_groups(records, works[image_id], finder, options.seed, out.groups)
    position_of = getattr(source, "position_of", None)  # a spilled input orders the output by position
    for image_id, qid, q, packed, records in done:
        if records:
            out.lines.append((qid, tuple(map(dumps, records))))
            if position_of is not None and (position := position_of(image_id, qid)) is not None:
                out.positions.append(position)
            out.views.extend(view_entries(qid, q, records, original_json=packed))
    return out


def forked_shard(context: ShardContext, images: list[str]) -> ShardResult:
    """A shard in a process of this run (a forked worker, or the driver itself), which may freeze
    what it keeps (`collector.one_collection`)."""
    with one_collection():
        return run_shard(context, images)


_ENGINE: Any = None  # a Ray worker process's engine, loaded by its first task


def remote_shard(options: RunOptions, payload: ShardPayload) -> ShardResult:
    """What a Ray worker runs: one shard, with the engine this process loaded once."""
    global _ENGINE
    if _ENGINE is None:
        _ENGINE = Engine.load()
    items, graphs, positions = payload
    return run_shard(ShardContext(_ENGINE, ShardQuestions(items, positions), graphs, options), list(items))
