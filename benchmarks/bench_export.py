"""How fast and how lean `contrastgen export` is, per format.

Runs `contrastgen export OUT_DIR --format F` in a child process for each format and prints wall
time, rows per second, the child's peak RSS and the size written. OUT_DIR is a `generate` output
(e.g. `python benchmarks/bench_generate.py --questions 200000 --images 15000 --keep DIR`).

    .venv/bin/python benchmarks/bench_export.py OUT_DIR [--formats parquet,hf,jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_generate import machine
from script_inputs import require

# The child reports its own peak RSS: RUSAGE_CHILDREN would give the largest of all children so far.
CHILD = ("import atexit, resource, sys\n"
         "atexit.register(lambda: sys.stderr.write("
         "f\"MAXRSS_KIB {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n\"))\n"
         "from contrastgen.cli import main\n"
         "main(sys.argv[1:])\n")


def size_mib(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def run(source: Path, fmt: str, workdir: Path) -> dict[str, object]:
    out = workdir / fmt
    cmd = [sys.executable, "-c", CHILD, "export", str(source), "--format", fmt, "--out", str(out)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HF_DATASETS_OFFLINE": "1"})
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"export --format {fmt} failed:\n{proc.stderr[-3000:]}")
    rss = next(int(ln.split()[1]) for ln in proc.stderr.splitlines() if ln.startswith("MAXRSS_KIB"))
    rows = int(proc.stdout.split("wrote ", 1)[1].split(" ", 1)[0].replace(",", ""))
    return {"format": fmt, "rows": rows, "wall_s": round(wall, 1), "rows_per_s": round(rows / wall),
            "peak_rss_gib": round(rss / 2**20, 2), "written_mib": round(size_mib(out), 1)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="a `contrastgen generate` output directory")
    ap.add_argument("--formats", default="parquet,hf,jsonl")
    args = ap.parse_args(argv)
    require("bench_export.py", args.source,
            "a contrastgen generate output, such as bench_generate.py --keep DIR writes", holding=("contrast_sets.jsonl",))
    source_mib = (args.source / "contrast_sets.jsonl").stat().st_size / 2**20
    workdir = Path(tempfile.mkdtemp(prefix="bench-export-"))
    try:
        results = [run(args.source, fmt, workdir) for fmt in args.formats.split(",")]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps({"source_jsonl_mib": round(source_mib, 1), "results": results, "machine": machine()},
                     indent=1))


if __name__ == "__main__":
    main()
