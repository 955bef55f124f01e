"""Where `generate --groups` spends what it adds: the group search's parts, timed in one process.

`bench_groups.py` gives the end-to-end cost (with and without `--groups`); this script runs
`contrastgen generate --groups --workers 1` in this process with the search's parts wrapped in
timers of CPU time (the wrapping costs about a microsecond a call), and prints, for each part, its seconds and
calls, and the candidate scenes built against those looked up. One process, so that every shard
is timed here; the parts' sum against the bench's added CPU says how much the rest of the run
slows beside the search (a larger working set).

    .venv/bin/python benchmarks/profile_groups.py --data DIR [--mode both]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from script_inputs import require

import contrastgen.families.gqa as gqa_shards
from contrastgen.cli import main as cli_main
from contrastgen.groups.index import GroupIndex, IndexBuilder
from contrastgen.groups.search import GroupFinder

SECONDS: Counter = Counter()
CALLS: Counter = Counter()


def timed(owner: Any, name: str, label: str) -> None:
    """Replace `owner.name` by the same function, timed under `label`."""
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()  # CPU time: on a shared host, waits for a core would count in wall time
        try:
            return inner(*args, **kwargs)
        finally:
            SECONDS[label] += time.process_time() - start
            CALLS[label] += 1

    setattr(owner, name, wrapper)


def count_misses() -> None:
    """Count the scene lookups that build a scene (not in the process's cache)."""
    lookup = GroupFinder.scene

    def scene(self: GroupFinder, image_id: str) -> Any:
        if image_id not in self._scenes:
            CALLS["candidate scenes built"] += 1
        return lookup(self, image_id)

    GroupFinder.scene = scene  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="a folder with questions.json and scene_graphs.json")
    ap.add_argument("--mode", choices=("templates", "programs", "both"), default="templates")
    args = ap.parse_args(argv)
    require("profile_groups.py", args.data, "a folder with questions.json and scene_graphs.json, as benchmarks/make_gqa_like.py --out DIR makes", holding=("questions.json", "scene_graphs.json"))
    count_misses()
    timed(IndexBuilder, "add", "index and lookup records, while loading")
    timed(IndexBuilder, "finish", "postings, after loading")
    timed(GroupIndex, "candidates", "walks over the index")
    timed(GroupFinder, "scene", "candidate scenes (looked up)")
    timed(GroupFinder, "prove", "executing and proving cells")
    timed(gqa_shards, "add_groups", "the search, in all")
    timed(gc, "collect", "collections (every shard, with or without groups)")
    with tempfile.TemporaryDirectory(prefix="profile-groups-") as tmp:
        start = time.process_time()
        try:
            cli_main(["generate", "--questions", str(args.data / "questions.json"),
                      "--scene-graphs", str(args.data / "scene_graphs.json"), "--out", str(Path(tmp) / "out"),
                      "--workers", "1", "--no-progress", "--groups", "--mode", args.mode])
        finally:
            print(f"\nwhole run: {time.process_time() - start:.1f} CPU-s", file=sys.stderr)
            for label, seconds in SECONDS.most_common():
                print(f"{label:52s} {seconds:8.2f} s {CALLS[label]:>10,} calls", file=sys.stderr)
            print(f"{'candidate scenes built':52s} {'':10s} {CALLS['candidate scenes built']:>10,}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
