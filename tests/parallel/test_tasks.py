"""`map_tasks` gives each batch's result once, in the batches' order, whoever runs it, and
reads the batches only as fast as the workers take them."""

from __future__ import annotations

import os
import time

import pytest

from contrastgen.parallel.tasks import map_tasks


def _slow_when_even(offset: int, batch: list[int]) -> tuple[int, list[int]]:
    if batch[0] % 2 == 0:  # even batches finish last: order must come from the map, not the clock
        time.sleep(0.02)
    return os.getpid(), [x + offset for x in batch]


def _fails_on_seven(_: None, batch: list[int]) -> list[int]:
    if 7 in batch:
        raise ValueError("seven")
    return batch


@pytest.mark.parametrize("workers", [1, 2])
def test_results_come_back_in_the_batches_order(workers):
    batches = [[i, i] for i in range(12)]
    results = list(map_tasks(_slow_when_even, 100, batches, workers=workers))
    assert [r for _, r in results] == [[i + 100, i + 100] for i in range(12)]
    pids = {pid for pid, _ in results}
    assert (os.getpid() in pids) == (workers == 1) and len(pids) <= workers


def test_the_pool_reads_batches_only_as_it_needs_them():
    read = []

    def batches():
        for i in range(40):
            read.append(i)
            yield [i]

    results = map_tasks(_slow_when_even, 0, batches(), workers=2)
    next(results)
    assert len(read) <= 5  # a window of 2 x workers, not the whole input
    assert [r for _, r in results] == [[i] for i in range(1, 40)]


def test_a_failing_batch_fails_the_map():
    with pytest.raises(ValueError, match="seven"):
        list(map_tasks(_fails_on_seven, None, ([i] for i in range(10)), workers=2))


def _pid_and_state(state, extra: int) -> tuple[int, int]:
    return os.getpid(), state() + extra


def test_a_helper_runs_calls_beside_this_process_with_the_state_it_inherited():
    """The state reaches the helper through the fork, never pickled (a lambda could not be), and
    calls handed to it run in its one other process while this one goes on."""
    from contrastgen.parallel.tasks import helper

    with helper(lambda: 40) as beside:
        pending = [beside.submit(_pid_and_state, n) for n in (1, 2)]
        results = [p.get(timeout=30) for p in pending]
    assert [r for _, r in results] == [41, 42]
    assert len({pid for pid, _ in results}) == 1 and results[0][0] != os.getpid()
