"""How long `contrastgen ood gqa` (or `ood vqavs`) takes and how much memory it holds, at GQA scale.

Why its own script: an OOD build reads every question at least twice (group statistics, then the
splits), and a run must fit on an ordinary machine however large its input. This prints wall
time, CPU time and the largest process's peak RSS, on the benchmark's synthetic data (made and
cached as `bench_generate.py` makes it) or on files you give.

    .venv/bin/python benchmarks/bench_ood.py                      # ood gqa, 1M questions on 75k images
    .venv/bin/python benchmarks/bench_ood.py --questions 5000000 --images 375000
    .venv/bin/python benchmarks/bench_ood.py --benchmark vqavs    # with the scene graphs' objects
    .venv/bin/python benchmarks/bench_ood.py --data DIR           # DIR/questions.json (and scene_graphs.json)
    .venv/bin/python benchmarks/bench_ood.py --benchmark vqavs --questions 200000 --images 15000 --ray
                                                                  # the local pool, then a Ray instance
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_generate import count_questions, ensure_data, host_probe, machine

from contrastgen.ood.vqavs_stream import BATCH_SAMPLES


def run(data: Path, benchmark: str, rule: str, extra: list[str] = ()) -> dict[str, object]:
    """One `contrastgen ood gqa|vqavs` (with `extra` options) in a child process."""
    out_parent = Path(tempfile.mkdtemp(prefix="bench-ood-"))
    exe = shutil.which("contrastgen", path=str(Path(sys.executable).parent)) or "contrastgen"
    cmd = [exe, "ood", benchmark, "--questions", str(data / "questions.json"), "--out", str(out_parent / "out")]
    cmd += ["--rule", rule] if benchmark == "gqa" else ["--objects", str(data / "scene_graphs.json")]
    cmd += extra
    print("running:", " ".join(cmd), flush=True)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    error = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    shutil.rmtree(out_parent, ignore_errors=True)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"contrastgen ood {benchmark} failed:\n{error[-4000:]}")
    return {"wall_s": round(wall, 1), "cpu_user_s": round(usage.ru_utime, 1), "cpu_sys_s": round(usage.ru_stime, 1),
            "peak_rss_gib": round(usage.ru_maxrss / 2**20, 2)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=75_000)
    ap.add_argument("--questions", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, help="a directory with questions.json and scene_graphs.json "
                                                  "(made there if absent)")
    ap.add_argument("--benchmark", choices=("gqa", "vqavs"), default="gqa", help="which OOD build to time")
    ap.add_argument("--rule", choices=("paper", "released"), default="paper", help="GQA-OOD's rule")
    ap.add_argument("--workers", type=int, help="vqavs: worker processes (default: the CPUs)")
    ap.add_argument("--batch", type=int, default=BATCH_SAMPLES, help="vqavs: questions per task")
    ap.add_argument("--ray", action="store_true",
                    help="vqavs: also run on Ray (a local instance, or --address) and print the overhead per task")
    ap.add_argument("--address", help="vqavs --ray: a running cluster")
    args = ap.parse_args(argv)
    data = ensure_data(args.images, args.questions, args.seed, args.data)
    extra = ["--batch", str(args.batch), *(["--workers", str(args.workers)] if args.workers else [])] \
        if args.benchmark == "vqavs" else []
    n = count_questions(data / "questions.json")
    m = machine()
    runs = [("local", extra)]
    if args.ray:
        runs.append(("ray", [*extra, "--backend", "ray", *(["--address", args.address] if args.address else [])]))
    results = {}
    for name, options in runs:
        result = results[name] = run(data, args.benchmark, args.rule, options)
        print(f"ood {args.benchmark} ({name}): {n:,} questions in {result['wall_s']} s wall, CPU "
              f"{result['cpu_user_s']} s user + {result['cpu_sys_s']} s sys, peak RSS {result['peak_rss_gib']} GiB "
              f"(largest process); {m['cpus']} CPUs, {m['memory_gib']} GiB; host probe {host_probe():.3f} s "
              "(lower is faster)", flush=True)
    if args.ray:
        tasks = 2 * -(-n // args.batch)  # counting, then labelling
        print(f"Ray overhead: {(results['ray']['wall_s'] - results['local']['wall_s']) / tasks:.3f} s per task of "
              f"{args.batch:,} questions ({tasks} tasks)")


if __name__ == "__main__":
    main()
