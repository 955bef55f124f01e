"""How fast and how lean `contrastgen captions generate` is on the 1M-question corpus's graphs.

Makes (or reuses) the GQA-shaped synthetic dataset `bench_generate.py` times the generator on
(75,000 scene graphs for 1M questions, cached under benchmarks/.cache/), runs `contrastgen captions
generate` on its graphs in a child process, and prints wall time, graphs per second, the largest
process's peak RSS and the peak PSS summed over the process tree, and what was written. Target
(docs/captions.md): captions for every graph in under 2 minutes on 2 cores.

    .venv/bin/python benchmarks/bench_captions.py [--images 75000 --questions 1000000] [--workers 2]
    .venv/bin/python benchmarks/bench_captions.py --data DIR   # DIR/scene_graphs.json (made if absent)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_generate import TreeMemorySampler, ensure_data

TARGET_S = 120.0


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
    if keep is None:
        shutil.rmtree(parent, ignore_errors=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=75_000)
    ap.add_argument("--questions", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, help="folder with (or to make) scene_graphs.json")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="keep the output here")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON object")
    args = ap.parse_args()
    data = ensure_data(args.images, args.questions, args.seed, args.data)
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
