"""How fast and how lean `contrastgen captions generate` is on the 1M-question corpus's graphs.

Makes (or reuses) the GQA-shaped synthetic dataset `bench_generate.py` times the generator on
(75,000 scene graphs for 1M questions, cached under benchmarks/.cache/), runs `contrastgen captions
generate` on its graphs in a child process, and prints wall time, graphs per second, the largest
process's peak RSS and the peak PSS summed over the process tree, and what was written. Target
(docs/captions.md): captions for every graph in under 2 minutes on 2 cores.

    .venv/bin/python benchmarks/bench_captions.py [--images 75000 --questions 1000000] [--workers 2]
    .venv/bin/python benchmarks/bench_captions.py --data DIR   # DIR/scene_graphs.json (made if absent)
    .venv/bin/python benchmarks/bench_captions.py --phases     # wall and CPU of each step of a run

`--phases` runs the command's function in this process instead, and prints each step's wall time
and CPU, this process's (the driver's) and its workers' apart (read from /proc as they run): which
steps have one process busy and which both cores, the question a wall target asks after a CPU one.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_generate import TreeMemorySampler, ensure_data

TARGET_S = 90.0  # the target for captions generate on the 1M corpus's 75k graphs, 2 workers


def run(graphs: Path, workers: int, keep: Path | None) -> dict[str, object]:
    parent = Path(tempfile.mkdtemp(prefix="bench-captions-"))
    out = keep or parent / "out"
    exe = shutil.which("contrastgen", path=str(Path(sys.executable).parent)) or "contrastgen"
    cmd = [exe, "captions", "generate", "--scene-graphs", str(graphs), "--out", str(out), "--workers", str(workers)]
    print("running:", " ".join(cmd), flush=True)
    log = parent / "captions.log"
    start = time.perf_counter()
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
        sampler = TreeMemorySampler(proc.pid)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        sampler.stop()
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.stderr.write(log.read_text(errors="replace")[-4000:])
        shutil.rmtree(parent, ignore_errors=True)
        raise SystemExit("contrastgen captions generate failed")
    stats = json.loads((out / "stats.json").read_text())
    result = {
        "graphs": stats["images"], "captions": stats["records"],
        "negatives": sum(k["pairs"] for k in stats["kinds"].values()),
        "wall_s": round(wall, 1), "graphs_per_s": round(stats["images"] / wall),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_largest_process_gib": round(usage.ru_maxrss / 2**20, 2),
        "peak_pss_tree_gib": round(sampler.peak_kib / 2**20, 2),
        "output_mib": round((out / "captions.jsonl").stat().st_size / 2**20),
        "workers": workers, "cpus": os.cpu_count(), "python": platform.python_version(),
        "target_s": TARGET_S, "met": wall < TARGET_S,
    }
    shutil.rmtree(parent, ignore_errors=True)  # its log and, unless kept, the output
    return result


class _TreeCpu(threading.Thread):
    """This process's CPU-seconds and its live children's, sampled from /proc (a child's last
    sample stands for it once it has exited: a step's workers are counted up to 0.2 s short)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.children: dict[str, float] = {}
        self.running = True

    @staticmethod
    def cpu(pid: str) -> float | None:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def run(self) -> None:
        me = str(os.getpid())
        while self.running:
            for task in Path(f"/proc/{me}/task").iterdir():
                try:
                    pids = (task / "children").read_text().split()
                except OSError:
                    continue
                for pid in pids:
                    found = self.cpu(pid)
                    if found is not None:
                        self.children[pid] = found
            time.sleep(0.2)

    def now(self) -> tuple[float, float, float]:
        return time.perf_counter(), self.cpu(str(os.getpid())) or 0.0, sum(self.children.values())


def phases(graphs: Path, workers: int) -> list[tuple[str, float, float, float]]:
    """(step, wall s, driver CPU-s, workers' CPU-s) of one run of `generate_captions` here."""
    from contrastgen.captions import blind
    from contrastgen.captions import generate as g

    sampler = _TreeCpu()
    sampler.start()
    marks = [("start", *sampler.now())]

    def timed(module: object, name: str, step: str) -> None:
        fn = getattr(module, name)

        def call(*args: object, **kwargs: object) -> object:
            marks.append(("(between steps)", *sampler.now()))
            try:
                return fn(*args, **kwargs)
            finally:
                time.sleep(0.3)  # a last sample of the step's workers
                marks.append((step, *sampler.now()))

        setattr(module, name, call)

    timed(g, "read_graphs", "read and count the graphs")
    timed(g, "write_captions", "caption and write")
    timed(blind, "check", "blind check")
    out = Path(tempfile.mkdtemp(prefix="bench-captions-")) / "out"
    g.generate_captions(graphs, out, g.CaptionOptions(), workers=workers)
    marks.append(("rewrite, stats, manifest", *sampler.now()))
    sampler.running = False
    shutil.rmtree(out.parent, ignore_errors=True)
    rows = [(step, t - t0, d - d0, c - c0) for (_, t0, d0, c0), (step, t, d, c) in itertools.pairwise(marks)]
    return [r for r in rows if r[0] != "(between steps)" or r[1] > 0.05]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=75_000)
    ap.add_argument("--questions", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, help="folder with (or to make) scene_graphs.json")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="keep the output here")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON object")
    ap.add_argument("--phases", action="store_true", help="each step's wall time and CPU (run in this process)")
    args = ap.parse_args()
    data = ensure_data(args.images, args.questions, args.seed, args.data)
    if args.phases:
        rows = phases(data / "scene_graphs.json", args.workers)
        for step, wall, driver, children in rows:
            print(f"{step:26s} wall {wall:7.1f} s  driver {driver:6.1f} CPU-s  workers {children:6.1f} CPU-s")
        print(f"{'total':26s} wall {sum(r[1] for r in rows):7.1f} s  driver {sum(r[2] for r in rows):6.1f} CPU-s  "
              f"workers {sum(r[3] for r in rows):6.1f} CPU-s")
        return
    result = run(data / "scene_graphs.json", args.workers, args.keep)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['graphs']:,} graphs -> {result['captions']:,} captions, {result['negatives']:,} negatives "
          f"({result['output_mib']} MiB)")
    print(f"wall {result['wall_s']} s ({result['graphs_per_s']:,} graphs/s; target < {TARGET_S:.0f} s: "
          f"{'met' if result['met'] else 'NOT met'}), CPU {result['cpu_s']} s, "
          f"peak RSS {result['peak_rss_largest_process_gib']} GiB (largest process), "
          f"peak PSS {result['peak_pss_tree_gib']} GiB (whole tree), {result['workers']} workers on "
          f"{result['cpus']} CPUs")


if __name__ == "__main__":
    main()
