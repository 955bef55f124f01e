"""How long `contrastgen ood gqa` takes and how much memory it holds, at GQA scale.

Why its own script: the OOD splits read every question twice (answer counts, then the splits),
and a run must fit on an ordinary machine however large its input. This prints wall time, CPU
time and the largest process's peak RSS, on the benchmark's synthetic data (made and cached as
`bench_generate.py` makes it) or on files you give.

    .venv/bin/python benchmarks/bench_ood.py                      # 1M questions on 75k images
    .venv/bin/python benchmarks/bench_ood.py --questions 5000000 --images 375000
    .venv/bin/python benchmarks/bench_ood.py --data DIR           # DIR/questions.json
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


def run(questions: Path, rule: str) -> dict[str, object]:
    """One `contrastgen ood gqa` in a child process."""
    out_parent = Path(tempfile.mkdtemp(prefix="bench-ood-"))
    exe = shutil.which("contrastgen", path=str(Path(sys.executable).parent)) or "contrastgen"
    cmd = [exe, "ood", "gqa", "--questions", str(questions), "--out", str(out_parent / "out"), "--rule", rule]
    print("running:", " ".join(cmd), flush=True)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    error = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    shutil.rmtree(out_parent, ignore_errors=True)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"contrastgen ood gqa failed:\n{error[-4000:]}")
    return {"wall_s": round(wall, 1), "cpu_user_s": round(usage.ru_utime, 1), "cpu_sys_s": round(usage.ru_stime, 1),
            "peak_rss_gib": round(usage.ru_maxrss / 2**20, 2)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=75_000)
    ap.add_argument("--questions", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, help="a directory with questions.json (made there if absent)")
    ap.add_argument("--rule", choices=("paper", "released"), default="paper")
    args = ap.parse_args(argv)
    data = ensure_data(args.images, args.questions, args.seed, args.data)
    questions = data / "questions.json"
    result = run(questions, args.rule)
    n = count_questions(questions)
    m = machine()
    print(f"{n:,} questions in {result['wall_s']} s wall, CPU {result['cpu_user_s']} s user + "
          f"{result['cpu_sys_s']} s sys, peak RSS {result['peak_rss_gib']} GiB (largest process); "
          f"{m['cpus']} CPUs, {m['memory_gib']} GiB; host probe {host_probe():.3f} s (lower is faster)")


if __name__ == "__main__":
    main()
