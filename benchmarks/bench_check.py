"""Does a change make `contrastgen generate` slower? The 30k benchmark against a stored baseline.

A figure in seconds means nothing on its own: the same code's CPU time moves by a third between
hours on a shared host. What moves far less is its ratio to a fixed piece of work measured in the
same minute on the same host: the *parse floor*, the CPU seconds that orjson (garbage collector
off) takes to parse the same questions and scene graphs, which no run can go below. This script
runs the 30k benchmark (`bench_generate.run`) and the floor in turn, `--repeat` times, and
compares the ratio of the least CPU time of each (generate's / the floor's) with the one stored in
`benchmarks/baseline.json`; it says plainly when the change costs more than `--budget` (10%) and
then exits 1. It is a review tool, not a timed test: run it before and after a change, on a host
that is not otherwise busy.

    .venv/bin/python benchmarks/bench_check.py                    # `make bench-check`: both modes
    .venv/bin/python benchmarks/bench_check.py --mode templates --repeat 5
    .venv/bin/python benchmarks/bench_check.py --record           # store this tree's ratios as the baseline
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import bench_generate

BASELINE = Path(__file__).resolve().parent / "baseline.json"
IMAGES, QUESTIONS, SEED = 2000, 30_000, 0

# Run in a child so that the parse is timed in a fresh interpreter, as generate's own is.
_FLOOR = """
import gc, sys, time, orjson
gc.disable()
start = time.process_time()
for path in sys.argv[1:]:
    with open(path, "rb") as fh:
        orjson.loads(fh.read())
print(time.process_time() - start)
"""


@dataclass(frozen=True)
class Measurement:
    """`runs` runs of one mode: generate's least CPU seconds, the floor's least, their ratio."""

    mode: str
    runs: int
    generate_cpu_s: float
    floor_cpu_s: float
    ratio: float
    perturbations: int
    host_probe_s: float


def parse_floor(data: Path) -> float:
    """CPU seconds to parse the run's two input files with orjson and the collector off, best of
    three: the least any reader of these bytes can spend."""
    files = [str(data / "questions.json"), str(data / "scene_graphs.json")]
    best = float("inf")
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", _FLOOR, *files], check=True, capture_output=True, text=True)
        best = min(best, float(done.stdout))
    return best


def measure(data: Path, mode: str, repeat: int) -> Measurement:
    """`repeat` pairs of (generate, floor), each pair in the same minute; the least of each."""
    ratios, cpus, floors, probes, perturbations = [], [], [], [], set()
    for i in range(repeat):
        result = bench_generate.run(data, 1, 5, None, QUESTIONS, mode)
        floor = parse_floor(data)
        cpu = float(result["cpu_user_s"]) + float(result["cpu_sys_s"])
        ratios.append(cpu / floor)
        cpus.append(cpu)
        floors.append(floor)
        probes.append(float(result["host_probe_s"]))
        perturbations.add(int(result["perturbations"]))
        print(f"  [{mode} {i + 1}] generate {cpu:.1f} CPU-s, floor {floor:.3f} CPU-s, ratio {cpu / floor:.1f}, "
              f"host probe {result['host_probe_s']} s", flush=True)
    if len(perturbations) != 1:
        raise SystemExit(f"the {mode} runs wrote different outputs: {sorted(perturbations)} perturbations")
    # The least of each, as timeit takes: what a shared host adds to a run's CPU time is only ever
    # more (another process's cache misses, a slower core), so the minimum is the figure nearest the
    # code's own cost; the pair ratios' spread is printed so a reader sees how noisy the host was.
    print(f"  [{mode}] ratios of the pairs {min(ratios):.1f}-{max(ratios):.1f}, median {statistics.median(ratios):.1f}",
          flush=True)
    return Measurement(mode, repeat, round(min(cpus), 2), round(min(floors), 3), round(min(cpus) / min(floors), 2),
                       perturbations.pop(), round(statistics.median(probes), 3))


def verdict(now: Measurement, stored: dict[str, object], budget: float) -> tuple[bool, str]:
    """Whether `now` stays within `budget` of the stored ratio, and the sentence that says so."""
    base = float(stored["ratio"])  # type: ignore[arg-type]
    change = now.ratio / base - 1
    made = f"{now.perturbations:,} perturbations (baseline {int(stored['perturbations']):,})"  # type: ignore[call-overload]
    if change > budget:
        return False, (f"{now.mode}: SLOWER: this tree costs {change:+.1%} against the baseline "
                       f"(ratio to the parse floor {now.ratio:.1f}, baseline {base:.1f}; budget {budget:.0%}); {made}")
    return True, (f"{now.mode}: within budget: {change:+.1%} against the baseline "
                  f"(ratio {now.ratio:.1f}, baseline {base:.1f}; budget {budget:.0%}); {made}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("templates", "both", "all"), default="all",
                    help="generate's mode to check (all: templates and both)")
    ap.add_argument("--repeat", type=int, default=5, help="pairs of runs per mode; the least of each is compared")
    ap.add_argument("--budget", type=float, default=0.10, help="the most a change may cost, as a share")
    ap.add_argument("--record", action="store_true", help=f"store this tree's ratios in {BASELINE.name}")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    data = bench_generate.ensure_data(IMAGES, QUESTIONS, SEED)
    modes = ("templates", "both") if args.mode == "all" else (args.mode,)
    stored = json.loads(BASELINE.read_text()) if BASELINE.is_file() else {}
    if args.record:
        stored.update({m: asdict(measure(data, m, args.repeat)) for m in modes})
        stored["machine"] = bench_generate.machine()
        BASELINE.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
        print(f"baseline written to {BASELINE}")
        return
    missing = [m for m in modes if m not in stored]
    if missing:
        raise SystemExit(f"{BASELINE} has no baseline for {', '.join(missing)}: make one with --record")
    ok = True
    for mode in modes:
        good, sentence = verdict(measure(data, mode, args.repeat), stored[mode], args.budget)
        ok &= good
        print(sentence, flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
