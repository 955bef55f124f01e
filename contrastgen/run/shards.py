"""Running a dataset family's shards on a backend and merging their results into one `Generation`.

Why the merge does not depend on the order shards finish in: results are merged back in the
order of the input questions (lines by question id, views sorted by id), so the output is the
same bytes whatever runs the shards: this process, a local fork pool of any size, or Ray
(`parallel.tasks.map_tasks`, which gives each shard's one result). A family gives one shard
function for every backend (`families.base`): forked workers inherit the run's whole context, a
Ray task gets the options once and its own shard's questions and graphs.

Inputs read from disk put their results on disk too (`result_spill`); loaded ones keep them in
memory.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from contrastgen.datasets.base import QuestionSource
from contrastgen.datasets.question_spill import SpilledQuestions
from contrastgen.errors import InputError
from contrastgen.families import base
from contrastgen.families.base import Family, Prepared, Settings
from contrastgen.groups.record import group_stats
from contrastgen.parallel.tasks import map_tasks
from contrastgen.results.generation import Generation, ShardResult
from contrastgen.results.stats import StatsTally
from contrastgen.results.view_bytes import ViewEntry
from contrastgen.run.result_spill import ResultSpill, spill_shard
from contrastgen.terminal.progress import progress as progress_bar


def run_shards(family: Family, prepared: Prepared, settings: Settings) -> Generation:
    """Every shard of the prepared inputs, merged into one Generation."""
    context = prepared.context
    source, graphs = context.questions, context.graphs
    images = source.image_ids
    size = base.SHARD_IMAGES  # read when called: a test that asks for small shards sets it in one place
    shards = [images[i:i + size] for i in range(0, len(images), size)]
    merge = _Merge(prepared.template_ids, settings.max_k, spill=isinstance(source, SpilledQuestions))
    shard, state = family.shard, context
    if merge.sink is not None and settings.backend.name != "ray":
        # this machine's workers write their results into the run's folder themselves
        shard, state = spill_shard, (family.shard, context, merge.sink.folder, settings.max_k)
    with progress_bar("generating", len(source), enabled=settings.progress) as advance:
        # The driver only receives acyclic results (bytes, tuples, counts) and the shards allocate
        # much acyclic data (`batch_gc`). Forked after loading, the workers share the loaded data
        # copy-on-write.
        for result in map_tasks(shard, state, shards, backend=settings.backend,
                                workers=settings.workers if len(shards) > 1 else 1, ordered=False, batch_gc=True):
            merge.add(result)
            advance(result.questions)
            # freed here, not after the next shard froze what it keeps: a shard run in this
            # process then freezes only its own survivors
            del result
    gen = merge.finish(source, images, graphs, settings.max_k, settings.seed)
    if settings.groups:
        gen.stats["groups"] = group_stats(merge.groups, family.group_reasons)
    gen.stats.update(prepared.stats)
    return gen


class _Merge:
    def __init__(self, template_ids: list[str] | None, max_k: int, *, spill: bool):
        self.tally = StatsTally(template_ids, max_k)
        self.lines: dict[str, tuple[bytes, ...]] = {}
        self.views: list[ViewEntry] = []
        self.sink = ResultSpill() if spill else None
        self.groups: Counter = Counter()

    def add(self, shard: ShardResult) -> None:
        if shard.tally is not None:
            self.tally.merge(shard.tally)
        else:
            self.tally.add(shard.outcomes)
        self.groups.update(shard.groups)
        if shard.spilled is not None:
            assert self.sink is not None
            self.sink.add_spilled(shard.spilled)
        elif self.sink is not None:
            self.sink.add(shard.lines, shard.views, shard.positions)
        else:
            self.lines.update(shard.lines)
            self.views.extend(shard.views)

    def finish(self, source: QuestionSource, images: list[str], graphs: Mapping[str, Any], max_k: int,
               seed: int) -> Generation:
        stats = self.tally.result(len(source), set(images), graphs, seed)
        if self.sink is not None:
            assert isinstance(source, SpilledQuestions)
            spilled_lines, spilled_views, merging = self.sink.finish()
            check_ids(merging, source.suspicious_ids)  # the merge runs here, once
            return Generation(lines=spilled_lines, views=spilled_views, stats=stats, max_k=max_k, seed=seed,
                              perturbed=spilled_lines.question_ids(), spill=self.sink)
        views = self.views
        views.sort(key=_key)
        check_ids(views, set(source.order))
        return Generation(lines=[line for qid in source.order for line in self.lines.get(qid, ())], views=views,
                          stats=stats, max_k=max_k, seed=seed,
                          perturbed=[qid for qid in source.order if qid in self.lines])


def _key(entry: ViewEntry) -> str:
    return entry.key


def check_ids(views: Iterator[ViewEntry] | list[ViewEntry], question_ids: set[str]) -> None:
    """A perturbation id (`<question id>_<suffix><rank>`) must not be a question id of the input:
    the views are keyed by id, and one of the two would silently replace the other."""
    for e in views:
        if e.rank and e.key in question_ids:
            raise InputError("a question has the id this run gives to a perturbation "
                             "(<question id>_<template suffix><rank>); rename it",
                             record=f"question {e.key}")
