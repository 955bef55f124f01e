"""What `generate --groups` costs: the same data generated without and with it, figures side by side.

Runs `contrastgen generate` in a child process (as `bench_generate.py` does, with its
measurements: wall and CPU time, questions per second, peak RSS of the largest process, PSS over
the process tree) without `--groups` and then with it, on the same data, and prints both, the
overhead, and the groups found (from the run's stats). Target (docs/performance.md): grouping adds
at most 50% to generation time.

    .venv/bin/python benchmarks/bench_groups.py --data DIR              # DIR/questions.json, DIR/scene_graphs.json
    .venv/bin/python benchmarks/bench_groups.py --images 2000 --questions 30000   # synthetic, cached
    .venv/bin/python benchmarks/bench_groups.py --data /tmp/i32/bench1m --keep OUT   # then: contrastgen verify OUT
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import bench_generate
from bench_generate import ensure_data, report, run
from script_inputs import require


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, help="a folder with questions.json and scene_graphs.json")
    ap.add_argument("--images", type=int, default=2000)
    ap.add_argument("--questions", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic data")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--mode", choices=("templates", "programs", "both"), default="templates")
    ap.add_argument("--repeat", type=int, default=1, help="pairs of runs; the medians are compared")
    ap.add_argument("--keep", type=Path, help="keep the last run with --groups here (for `contrastgen verify`)")
    args = ap.parse_args(argv)
    if args.data is not None:
        require("bench_groups.py", args.data, "a folder with questions.json and scene_graphs.json, as benchmarks/make_gqa_like.py --out DIR makes", holding=("questions.json", "scene_graphs.json"))
    data = args.data or ensure_data(args.images, args.questions, args.seed)
    n_questions = bench_generate.count_questions(data / "questions.json")
    without, with_groups, groups = [], [], {}
    for _ in range(args.repeat):
        without.append(run(data, args.workers, 5, None, n_questions, args.mode))
        report(without[-1], "without --groups: ")
        with tempfile.TemporaryDirectory(prefix="bench-groups-") as tmp:
            keep = args.keep or Path(tmp) / "out"
            with_groups.append(run(data, args.workers, 5, keep, n_questions, args.mode, extra=("--groups",)))
            groups = json.loads((keep / "stats.json").read_text())["groups"]
        report(with_groups[-1], "with --groups:    ")
    wall = [statistics.median(r["wall_s"] for r in runs) for runs in (without, with_groups)]
    cpu = [statistics.median(r["cpu_user_s"] + r["cpu_sys_s"] for r in runs) for runs in (without, with_groups)]
    rss = [max(r["peak_rss_child_gib"] for r in runs) for runs in (without, with_groups)]
    print(f"wall {wall[0]:.1f} -> {wall[1]:.1f} s (+{100 * (wall[1] / wall[0] - 1):.0f}%), "
          f"CPU {cpu[0]:.1f} -> {cpu[1]:.1f} s (+{100 * (cpu[1] / cpu[0] - 1):.0f}%), "
          f"largest process {rss[0]} -> {rss[1]} GiB; medians of {args.repeat}")
    print(f"groups: {groups['grouped']:,} of {groups['pairs']:,} pairs ({groups['swap']:,} swaps, "
          f"{groups['differs']:,} partial); reasons: {json.dumps(groups['reasons'])}")


if __name__ == "__main__":
    sys.exit(main())
