"""Where `generate --groups` spends what it adds: the group search's parts, timed in each process.

`bench_groups.py` gives the end-to-end cost (with and without `--groups`); this script runs
`contrastgen generate --groups` in this process with the search's parts wrapped in timers of CPU
time (the wrapping costs about a microsecond a call), and prints, for each part, its seconds and
calls, and the candidate scenes built against those looked up. With `--workers 1` every shard is
timed here; the parts' sum against the bench's added CPU says how much the rest of the run slows
beside the search (a larger working set).

With `--workers N` the run forks its workers (and its loading helper) as it does for a user;
each process writes its own timers to a file after each shard or batch, and the script prints
them process by process: its whole CPU time, the shards', the search's parts, the writing of the
shards' results and the collections. `--without` first runs the same without `--groups`, so the
shards' CPU outside the search, with groups and without, can be compared process by process: what
groups add to a worker is its search plus whatever the search slows around it.

    .venv/bin/python benchmarks/profile_groups.py --data DIR [--mode both]
    .venv/bin/python benchmarks/profile_groups.py --data DIR --workers 2 --without
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from script_inputs import require

import contrastgen.families.gqa as gqa_shards
import contrastgen.families.gqa_index_load as index_load
import contrastgen.run.shards as run_shards
from contrastgen.cli import main as cli_main
from contrastgen.groups.index import GroupIndex, IndexBuilder
from contrastgen.groups.search import GroupFinder

SECONDS: Counter = Counter()
CALLS: Counter = Counter()
SHARDS, WRITING, SEARCH = "shards (perturbing, searching, serialising)", "shards and writing their results", "the search, in all"
# where each process writes its timers (`--workers N`); None: one process, printed at the end
_DUMPS: list[Path] = []
_CPU_BEFORE = [0.0]  # this process's CPU seconds before the run being timed (the driver runs two)


def timed(owner: Any, name: str, label: str, *, dump: bool = False) -> None:
    """Replace `owner.name` by the same function, timed under `label`; `dump`: write this
    process's timers after each call (a worker's or the helper's unit of work)."""
    inner: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(inner)  # found by its own name: the pool pickles a function it hands the helper
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()  # CPU time: on a shared host, waits for a core would count in wall time
        try:
            return inner(*args, **kwargs)
        finally:
            SECONDS[label] += time.process_time() - start
            CALLS[label] += 1
            if dump:
                write_timers()

    setattr(owner, name, wrapper)


def write_timers() -> None:
    """This process's timers and whole CPU time, into the run's folder of timers."""
    if not _DUMPS:
        return
    data = {"cpu": _cpu() - _CPU_BEFORE[0], "seconds": SECONDS, "calls": CALLS}
    (_DUMPS[0] / f"{os.getpid()}.json").write_text(json.dumps(data))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _forget_parents_timers() -> None:
    # a forked process starts with a copy of its parent's counters, and its own CPU time at zero
    SECONDS.clear()
    CALLS.clear()
    _CPU_BEFORE[0] = 0.0


def count_misses() -> None:
    """Count the scene lookups that build a scene (not in the process's cache)."""
    lookup = GroupFinder.scene

    def scene(self: GroupFinder, image_id: str) -> Any:
        if image_id not in self._scenes:
            CALLS["candidate scenes built"] += 1
        return lookup(self, image_id)

    GroupFinder.scene = scene  # type: ignore[method-assign]


def instrument() -> None:
    count_misses()
    timed(IndexBuilder, "add", "index and lookup records, while loading")
    timed(IndexBuilder, "finish", "postings, after loading")
    timed(GroupIndex, "candidates", "walks over the index")
    timed(GroupFinder, "scene", "candidate scenes (looked up)")
    timed(GroupFinder, "prove", "executing and proving cells")
    timed(gqa_shards, "add_groups", SEARCH)
    timed(gc, "collect", "collections (every shard, with or without groups)")
    # the shard function a backend runs: the family's, and around it the writing of its results
    timed(gqa_shards.Gqa, "shard", SHARDS, dump=True)
    gqa_shards.Gqa.shard = staticmethod(gqa_shards.Gqa.shard)  # type: ignore[assignment]
    timed(run_shards, "spill_shard", WRITING, dump=True)
    timed(index_load, "index_batch", "the loading helper's batches", dump=True)
    os.register_at_fork(after_in_child=_forget_parents_timers)


def generate(data: Path, workers: int, mode: str, groups: bool, timers: Path | None) -> float:
    """One run in this process (its workers forked from it); its CPU seconds here."""
    _DUMPS[:] = [timers] if timers is not None else []
    SECONDS.clear()
    CALLS.clear()
    _CPU_BEFORE[0] = _cpu()
    with tempfile.TemporaryDirectory(prefix="profile-groups-") as tmp:
        start = time.process_time()
        try:
            cli_main(["generate", "--questions", str(data / "questions.json"),
                      "--scene-graphs", str(data / "scene_graphs.json"), "--out", str(Path(tmp) / "out"),
                      "--workers", str(workers), "--no-progress", "--mode", mode, *(["--groups"] if groups else [])])
        except SystemExit as done:  # the command line's way to end: only a failure ends the script
            if done.code not in (0, None):
                raise
        write_timers()
        return time.process_time() - start


def print_parts(seconds: Counter, calls: Counter, indent: str = "") -> None:
    for label, value in seconds.most_common():
        print(f"{indent}{label:52s} {value:8.2f} s {calls[label]:>10,} calls", file=sys.stderr)
    if calls["candidate scenes built"]:
        print(f"{indent}{'candidate scenes built':52s} {'':10s} {calls['candidate scenes built']:>10,}", file=sys.stderr)


def print_processes(timers: Path, title: str) -> float:
    """Each process's timers (the driver's last), and the workers' shard CPU outside the search."""
    print(f"\n{title}", file=sys.stderr)
    found = [(int(f.stem), json.loads(f.read_text())) for f in timers.glob("*.json")]
    driver = os.getpid()
    outside = 0.0
    for pid, data in sorted(found, key=lambda item: (item[0] == driver, item[0])):
        seconds, calls = Counter(data["seconds"]), Counter(data["calls"])
        role = "driver" if pid == driver else "worker" if calls[SHARDS] else "loading helper"
        rest = seconds[SHARDS] - seconds[SEARCH]
        outside += rest
        print(f"  {role} {pid}: {data['cpu']:.1f} CPU-s; its shards outside the search {rest:.2f} s", file=sys.stderr)
        print_parts(seconds, calls, "    ")
    return outside


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="a folder with questions.json and scene_graphs.json")
    ap.add_argument("--mode", choices=("templates", "programs", "both"), default="templates")
    ap.add_argument("--workers", type=int, default=1, help="worker processes (each timed on its own)")
    ap.add_argument("--without", action="store_true", help="first run the same without --groups, to compare")
    args = ap.parse_args(argv)
    require("profile_groups.py", args.data, "a folder with questions.json and scene_graphs.json, as benchmarks/make_gqa_like.py --out DIR makes", holding=("questions.json", "scene_graphs.json"))
    instrument()
    if args.workers <= 1 and not args.without:
        start = time.process_time()
        try:
            generate(args.data, 1, args.mode, True, None)
        finally:
            print(f"\nwhole run: {time.process_time() - start:.1f} CPU-s", file=sys.stderr)
            print_parts(SECONDS, CALLS)
        return
    rests = []
    for groups in ((False, True) if args.without else (True,)):
        with tempfile.TemporaryDirectory(prefix="profile-groups-timers-") as timers:
            cpu = generate(args.data, args.workers, args.mode, groups, Path(timers))
            rests.append(print_processes(Path(timers), f"{'with' if groups else 'without'} --groups "
                                                      f"(the driver's CPU {cpu:.1f} s):"))
    if len(rests) == 2:
        print(f"\nthe shards outside the search, every process: {rests[0]:.2f} s without --groups, "
              f"{rests[1]:.2f} s with ({rests[1] - rests[0]:+.2f} s)", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
