"""What `--backend ray` costs against the local pool, on one machine.

Runs `contrastgen generate` twice on the same synthetic data: with the local worker pool and with
`--backend ray` (a Ray instance this machine starts, or `--address`), and prints each run's phases
and the Ray overhead per shard (the difference in the generation phase over the number of shards).

    .venv/bin/python benchmarks/bench_ray.py [--images 7500 --questions 100000] [--address HOST:PORT]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_generate import ensure_data, machine

from contrastgen.families.base import SHARD_IMAGES


def run(data: Path, backend: list[str]) -> dict[str, object]:
    out = Path(tempfile.mkdtemp(prefix="bench-ray-")) / "out"
    exe = shutil.which("contrastgen", path=str(Path(sys.executable).parent)) or "contrastgen"
    cmd = [exe, "generate", "--questions", str(data / "questions.json"), "--scene-graphs",
           str(data / "scene_graphs.json"), "--out", str(out), "--no-progress", *backend]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})
    wall = time.perf_counter() - start
    shutil.rmtree(out.parent, ignore_errors=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    phases = next(ln for ln in proc.stderr.splitlines() if ln.startswith("seconds: "))
    seconds = dict(part.rsplit(" ", 1) for part in phases.removeprefix("seconds: ").split(", "))
    return {"wall_s": round(wall, 1), **{k: float(v) for k, v in seconds.items()}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=7_500)
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--address", help="a running cluster (default: Ray starts one on this machine)")
    args = ap.parse_args(argv)
    data = ensure_data(args.images, args.questions, 0)
    shards = math.ceil(args.images / SHARD_IMAGES)
    local = run(data, ["--workers", "2"])
    ray = run(data, ["--backend", "ray", *(["--address", args.address] if args.address else [])])
    print(json.dumps({"questions": args.questions, "images": args.images, "shards": shards, "local": local,
                      "ray": ray, "ray_overhead_per_shard_s": round((ray["generation"] - local["generation"]) / shards, 3),
                      "machine": machine()}, indent=1))


if __name__ == "__main__":
    main()
