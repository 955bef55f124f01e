"""Running a generation's shards on a Ray cluster instead of the local worker pool.

Why Ray, and why this shape: a shard (`run_shard`: the questions of some images) is already a pure
function of its questions, their scene graphs and the run's options, so a cluster needs nothing
else. Each task gets exactly its shard's questions and graphs (no node needs the whole input);
the options, with the corpus statistics, go to the object store once; each worker process loads
the engine once, from the rules the package ships. Results come back as the same `ShardResult`
bytes the local pool returns, and the driver merges them as it does for the pool (order-free), so
the output is byte-identical to a local run. A task whose worker dies is retried by Ray
(`max_retries`); a retried shard recomputes the same bytes, and the driver keeps one result per
shard, so nothing is lost or doubled.

Ray is an optional dependency (`pip install 'contrastgen[ray]'`); this module imports it only when
a run asks for it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from contrastgen.datasets.base import QuestionItem, QuestionSource
from contrastgen.datasets.packing import GraphJson
from contrastgen.parallel.ray_session import (
    MAX_RETRIES,
    crash_on_first_attempt,
    in_flight_limit,
    ray_session,
)


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


_ENGINE: Any = None  # a worker process's engine, loaded by its first task


def _shard_task(options: Any, index: int, items: dict[str, list[QuestionItem]],
                graphs: Mapping[str, dict[str, Any]], positions: dict[str, int] | None = None) -> Any:
    """What a Ray worker runs: one shard, with the engine this process loaded once."""
    global _ENGINE
    from contrastgen.engine import Engine
    from contrastgen.run.generate import ShardContext, run_shard

    crash_on_first_attempt(index)
    if _ENGINE is None:
        _ENGINE = Engine.load()
    return run_shard(ShardContext(_ENGINE, ShardQuestions(items, positions), graphs, options), list(items))


def run_on_ray(source: QuestionSource, scene_graphs: Mapping[str, dict[str, Any]], options: Any,
               shards: list[list[str]], collect: Callable[[Any], None], *, address: str | None) -> None:
    """Run every shard as a Ray task and `collect` each result once, in completion order."""
    with ray_session(address) as ray:
        task = ray.remote(max_retries=MAX_RETRIES)(_shard_task)
        options_ref = ray.put(options)
        window = in_flight_limit(ray.cluster_resources().get("CPU", 1))

        def submit(index: int) -> None:
            images = shards[index]
            items = {image: source.questions_of(image) for image in images}
            position_of = getattr(source, "position_of", None)  # a spilled input's output order
            positions = ({qid: position_of(image, qid) for image, qs in items.items() for qid, _, _ in qs}
                         if position_of is not None else None)
            # packed graphs travel as their JSON (smaller than pickled dicts; the task parses them)
            graphs = (scene_graphs.subset(images) if isinstance(scene_graphs, GraphJson)
                      else {image: scene_graphs[image] for image in images if image in scene_graphs})
            pending[task.remote(options_ref, index, items, graphs, positions)] = index

        # A window of tasks in flight, not every shard at once: each submitted task's questions
        # and graphs sit in the object store until it ends, so submitting all would copy the
        # whole input there (and into the driver's shared memory) before the first result.
        pending: dict[Any, int] = {}
        queue = iter(range(len(shards)))
        for index in itertools.islice(queue, window):
            submit(index)
        done: set[int] = set()
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                index = pending.pop(ref)
                result = ray.get(ref)
                if index not in done:  # one result per shard, whatever Ray retried
                    done.add(index)
                    collect(result)
                for following in itertools.islice(queue, 1):
                    submit(following)
