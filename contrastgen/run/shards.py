"""Running a dataset family's shards on a backend and merging their results into one `Generation`.

Why the merge does not depend on the order shards finish in: results are merged back in the
order of the input questions (lines by question id, views sorted by id), so the output is the
same bytes whatever runs the shards: this process, a local fork pool of any size, or Ray
(`parallel.tasks.map_tasks`, which gives each shard's one result). A family (`gqa_shards`,
`clevr_shards`) gives two functions: the shard as a process of this run runs it (with the run's
whole context, inherited through the fork), and the shard as a Ray task runs it (with only its
shard's questions and graphs, `ShardQuestions`).

Inputs read from disk put their results on disk too (`result_spill`); loaded ones keep them in
memory.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from contrastgen.collector import no_gc
from contrastgen.datasets.base import QuestionItem, QuestionSource
from contrastgen.datasets.packing import GraphJson
from contrastgen.datasets.question_spill import SpilledQuestions
from contrastgen.errors import InputError
from contrastgen.groups.record import group_stats
from contrastgen.parallel.backend import LOCAL, Backend
from contrastgen.parallel.tasks import map_tasks
from contrastgen.results.generation import Generation, ShardResult
from contrastgen.results.stats import StatsTally
from contrastgen.results.view_bytes import ViewEntry
from contrastgen.run.result_spill import ResultSpill
from contrastgen.terminal.progress import progress as progress_bar

SHARD_IMAGES = 256

# What a Ray task carries: the shard's questions by image, their graphs, and (for a spilled
# input) each question's input position.
ShardPayload = tuple[dict[str, list[QuestionItem]], Mapping[str, dict[str, Any]], "dict[str, int] | None"]


@dataclass
class ShardQuestions:
    """One shard's questions as a `QuestionSource`: what a Ray task carries."""

    items: dict[str, list[QuestionItem]]  # image id -> its questions, in input order
    positions: dict[str, int] | None = None  # question id -> input position (a spilled input's)

    @property
    def order(self) -> list[str]:
        return [qid for items in self.items.values() for qid, _, _ in items]

    def __len__(self) -> int:
        return sum(len(v) for v in self.items.values())

    @property
    def image_ids(self) -> list[str]:
        return list(self.items)

    def questions_of(self, image_id: str) -> list[QuestionItem]:
        return self.items.get(image_id, [])

    def position_of(self, image_id: str, question_id: str) -> int | None:
        return None if self.positions is None else self.positions[question_id]


def payloads(source: QuestionSource, graphs: Mapping[str, Any], shards: list[list[str]]) -> Iterator[ShardPayload]:
    """Each shard's questions and graphs, made as the backend asks for the next (a window of
    tasks in flight holds their inputs, not the whole input)."""
    position_of = getattr(source, "position_of", None)  # a spilled input's output order
    for images in shards:
        items = {image: source.questions_of(image) for image in images}
        positions = ({qid: position_of(image, qid) for image, qs in items.items() for qid, _, _ in qs}
                     if position_of is not None else None)
        # packed graphs travel as their JSON (smaller than pickled dicts; the task parses them)
        subset = (graphs.subset(images) if isinstance(graphs, GraphJson)
                  else {image: graphs[image] for image in images if image in graphs})
        yield items, subset, positions


@dataclass(frozen=True)
class Family:
    """How one dataset family runs a shard: here (`local(context, images)`) and on Ray
    (`remote(options, payload)`)."""

    local: Callable[[Any, list[str]], ShardResult]
    context: Any
    remote: Callable[[Any, ShardPayload], ShardResult]
    options: Any
    group_reasons: tuple[str, ...] | None = None  # `--groups`: the reasons a pair may go ungrouped


def run_shards(family: Family, source: QuestionSource, graphs: Mapping[str, Any], *, template_ids: list[str] | None,
               max_k: int, seed: int, workers: int, progress: bool, backend: Backend = LOCAL) -> Generation:
    """Every shard of `source`, merged into one Generation. `template_ids`: the statistics' rows
    in order, or None to list the templates the outcomes name, sorted."""
    images = source.image_ids
    shards = [images[i:i + SHARD_IMAGES] for i in range(0, len(images), SHARD_IMAGES)]
    merge = _Merge(template_ids, max_k, spill=isinstance(source, SpilledQuestions))
    with progress_bar("generating", len(source), enabled=progress) as advance:
        if backend.name == "ray":  # Ray's machinery runs in this process too: the collector stays on
            for result in map_tasks(family.remote, family.options, payloads(source, graphs, shards),
                                    backend=backend, ordered=False):
                merge.add(result)
                advance(result.questions)
        else:
            # The driver only receives acyclic results (bytes, tuples, counts), so the collector's
            # passes over its growing line index and tallies would find nothing; the workers are
            # forked with it paused and collect once per shard. Forked after loading, so the
            # workers share the loaded data copy-on-write.
            with no_gc():
                for result in map_tasks(family.local, family.context, shards,
                                        workers=workers if len(shards) > 1 else 1, ordered=False):
                    merge.add(result)
                    advance(result.questions)
                    # freed here, not after the next shard froze what it keeps: a shard run in
                    # this process then freezes only its own survivors
                    del result
    gen = merge.finish(source, images, graphs, max_k, seed)
    if family.group_reasons is not None:
        gen.stats["groups"] = group_stats(merge.groups, family.group_reasons)
    return gen


class _Merge:
    def __init__(self, template_ids: list[str] | None, max_k: int, *, spill: bool):
        self.tally = StatsTally(template_ids, max_k)
        self.lines: dict[str, tuple[bytes, ...]] = {}
        self.views: list[ViewEntry] = []
        self.sink = ResultSpill() if spill else None
        self.groups: Counter = Counter()

    def add(self, shard: ShardResult) -> None:
        self.tally.add(shard.outcomes)
        self.groups.update(shard.groups)
        if self.sink is not None:
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
