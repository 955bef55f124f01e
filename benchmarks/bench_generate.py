"""How fast and how lean `contrastgen generate` is at GQA scale.

Makes (or reuses) a GQA-shaped synthetic dataset with `synth`, runs `contrastgen
generate` on it in a child process, and reports wall time, questions per second, the child's peak
resident memory, perturbations emitted, and the machine. The data is cached under
benchmarks/.cache/gqa-like-<images>-<questions>-<seed>-<synth hash>/ (gitignored) so that reruns time only the
engine. Targets (docs/performance.md): 1M questions in < 60 s wall and < 90 CPU-seconds, < 3 GiB in the
largest process and < 4 GiB over the tree, on 2 cores / 24 GiB.

    .venv/bin/python benchmarks/bench_generate.py [--images 75000 --questions 1000000] [--workers N]
    .venv/bin/python benchmarks/bench_generate.py --data DIR   # reuse DIR's questions.json/scene_graphs.json (made if absent)
    .venv/bin/python benchmarks/bench_generate.py --repeat 5   # five runs, then the medians
    .venv/bin/python benchmarks/bench_generate.py --against REV --repeat 3   # side by side with a git revision
    .venv/bin/python benchmarks/bench_generate.py --against REV --at-once --repeat 3   # both at the same time

Why `--against`: on a shared host the same code's CPU time moves by a third between hours, more
than most changes it would measure. Runs of the revision (a git worktree, run with this
environment) and of the working tree alternate, so both see the same host, and their outputs
must be the same bytes. Alternating still leaves each run to its own minute of a host whose
speed moves within minutes; `--at-once` runs the two at the same time, one worker each (one core
each on two), so every pair shares the host's state, and a pair's difference is the code's. With
`--workers N` each run of the pair has N workers: what a change to how the workers and the driver
share a run costs shows only with two or more.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import synth
from synth import write_dataset

CACHE = Path(__file__).resolve().parent / ".cache"


def machine() -> dict[str, object]:
    """CPU count, memory and Python: the figures only mean something next to these."""
    mem_kib = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "memory_gib": round(mem_kib / 2**20, 1),
            "python": platform.python_version(), "platform": platform.platform()}


def host_probe() -> float:
    """CPU seconds of a fixed pure-Python loop (best of three), taken next to every run.

    Why: the hosts these figures come from differ and drift (the same run took 88 CPU-s on one
    2-core host and 140-205 on another, where a 30M-step loop took 2.6-4.3 s within one day); a
    figure compared with another, or with a target, means something only at a similar probe. It
    shows a slower CPU, not all contention: two 1M runs 0.02 s of probe apart took 144 and 172
    CPU-s. Side by side (`--against`) stays the way to compare code."""
    best = float("inf")
    for _ in range(3):
        start, total = time.process_time(), 0
        for i in range(10_000_000):
            total += i
        best = min(best, time.process_time() - start)
    return round(best, 3)


def synth_fingerprint() -> str:
    """Short hash of the generator and its vocabulary, so a changed generator never reuses stale data."""
    h = hashlib.sha256(Path(synth.__file__).read_bytes())
    h.update(Path(synth.__file__).with_name("synth_vocab.json").read_bytes())
    return h.hexdigest()[:8]


def ensure_data(images: int, questions: int, seed: int, data: Path | None = None) -> Path:
    data = data or CACHE / f"gqa-like-{images}-{questions}-{seed}-{synth_fingerprint()}"
    if not (data / "questions.json").is_file() or not (data / "scene_graphs.json").is_file():
        print(f"making {questions:,} questions on {images:,} images in {data} ...", flush=True)
        start = time.perf_counter()
        write_dataset(data, images, questions, seed)
        print(f"  done in {time.perf_counter() - start:.1f} s", flush=True)
    return data


def _pss_kib(pid: int) -> int:
    """Proportional set size: shared copy-on-write pages are split between the processes sharing
    them, so summing PSS over a process tree gives the memory the tree really uses (summing RSS
    would count the forked workers' shared pages once per worker)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree_pss_kib(root: int) -> int:
    """Memory of `root` and all its descendants, from /proc (Linux)."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return sum(_pss_kib(pid) for pid in tree)


class TreeMemorySampler(threading.Thread):
    """Samples the summed PSS of a process tree: worker processes run at the same time, so the
    machine needs their sum, which getrusage (largest single process) does not give."""

    def __init__(self, pid: int, interval: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.interval, self.peak_kib = pid, interval, 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.peak_kib = max(self.peak_kib, _tree_pss_kib(self.pid))
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


def count_questions(path: Path) -> int:
    """Streamed, so this process stays small: the next run's child starts as a copy of it, and a
    parsed million questions (about 6 GiB) would be counted as that run's largest process."""
    from contrastgen.datasets.streaming import stream_records

    return sum(1 for _ in stream_records(path, "question"))


def run(data: Path, workers: int | None, max_k: int, keep: Path | None,
        n_questions: int | None = None, mode: str = "templates", source: Path | None = None,
        probe: bool = True, extra: tuple[str, ...] = ()) -> dict[str, object]:
    """One `contrastgen generate` in a child process; `source`: run that checkout's code instead;
    `probe`: time the host after it (not while another run is still going); `extra`: more
    options for `generate` (`--groups`)."""
    out_parent = Path(tempfile.mkdtemp(prefix="bench-generate-"))
    out = keep or out_parent / "out"
    exe = shutil.which("contrastgen", path=str(Path(sys.executable).parent)) or "contrastgen"
    cmd = [exe, "generate", "--questions", str(data / "questions.json"),
           "--scene-graphs", str(data / "scene_graphs.json"), "--out", str(out),
           "--max-k", str(max_k), "--no-progress", "--mode", mode]
    if workers:
        cmd += ["--workers", str(workers)]
    cmd += list(extra)
    print("running:", " ".join(cmd), flush=True)
    start = time.perf_counter()
    log = out_parent / "generate.log"
    with log.open("wb") as fh:
        env = None if source is None else {**os.environ, "PYTHONPATH": str(source)}
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
        sampler = TreeMemorySampler(proc.pid)
        sampler.start()
        # this run's own usage (its process and every descendant it reaped): the process-wide
        # RUSAGE_CHILDREN would carry the largest process of an earlier run into the next
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = returncode = os.waitstatus_to_exitcode(status)
        sampler.stop()
    wall = time.perf_counter() - start
    if returncode != 0:
        sys.stderr.write(log.read_text(errors="replace")[-4000:])
        shutil.rmtree(out_parent, ignore_errors=True)
        raise SystemExit(f"contrastgen generate failed with exit code {returncode}")
    if n_questions is None:
        n_questions = count_questions(data / "questions.json")
    perturbations = originals = 0
    with (out / "contrast_sets.jsonl").open("rb") as fh:
        for line in fh:
            originals += 1
            perturbations += line.count(b'"rank":')
    result = {
        "questions": n_questions,
        "wall_s": round(wall, 1),
        "questions_per_s": round(n_questions / wall),
        # ru_maxrss of a reaped child is its largest single process, itself or a descendant (KiB
        # on Linux): the peak of the biggest process, not the sum over worker processes.
        "peak_rss_child_gib": round(usage.ru_maxrss / 2**20, 2),
        # Sampled every 0.5 s: PSS summed over the child and its worker processes.
        "peak_pss_tree_gib": round(sampler.peak_kib / 2**20, 2),
        "cpu_user_s": round(usage.ru_utime, 1),
        "cpu_sys_s": round(usage.ru_stime, 1),
        "originals_with_perturbations": originals,
        "perturbations": perturbations,
        "workers": workers or "default",
        "max_k": max_k,
        "machine": machine(),
        "host_probe_s": host_probe() if probe else None,
    }
    # `contrastgen generate` prints the seconds of each of its phases; the rest of the wall time
    # is interpreter start-up and tear-down
    phases = [ln for ln in log.read_text(errors="replace").splitlines() if ln.startswith("seconds: ")]
    result["phases"] = phases[-1].removeprefix("seconds: ") if phases else ""
    result["output_sha256"] = output_digest(out)
    shutil.rmtree(out_parent, ignore_errors=True)  # its log and, unless kept, the output
    return result


def output_digest(out: Path) -> str:
    """One hash over every output file's path and bytes: equal digests, the same output."""
    digest = hashlib.sha256()
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(out)).encode() + b"\0")
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def report(result: dict[str, object], label: str = "") -> None:
    m = result["machine"]
    print(f"{label}{result['questions']:,} questions in {result['wall_s']} s wall "
          f"({result['questions_per_s']:,} questions/s), peak RSS {result['peak_rss_child_gib']} GiB "
          f"(largest process; {result['peak_pss_tree_gib']} GiB PSS summed over the process tree), "
          f"{result['perturbations']:,} perturbations for {result['originals_with_perturbations']:,} questions; "
          f"CPU {result['cpu_user_s']} s user + {result['cpu_sys_s']} s sys; "
          f"{m['cpus']} CPUs, {m['memory_gib']} GiB, Python {m['python']}; "
          f"host probe {result['host_probe_s']} s (lower is faster)", flush=True)
    if result["phases"]:
        print(f"{label}phases (s): {result['phases']}", flush=True)


def summary(results: list[dict[str, object]], label: str) -> dict[str, float]:
    """Median and range of wall and CPU time over repeated runs."""
    walls = [float(r["wall_s"]) for r in results]
    cpus = [float(r["cpu_user_s"]) + float(r["cpu_sys_s"]) for r in results]
    med = {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus)}
    runs = f"{len(results)} run" + ("s" if len(results) != 1 else "")
    probes = [float(r["host_probe_s"]) for r in results]
    print(f"{label}{runs}: wall median {med['wall_s']:.1f} s ({min(walls):.1f}-{max(walls):.1f}), "
          f"CPU median {med['cpu_s']:.1f} s ({min(cpus):.1f}-{max(cpus):.1f}), "
          f"host probe {min(probes):.2f}-{max(probes):.2f} s", flush=True)
    return med


def _at_once(runs: list[Callable[[], dict[str, object]]], *, reverse: bool = False) -> list[dict[str, object]]:
    """Start every run at once (each waits on its own child process); their results in order.
    `reverse` starts them last first, so that alternating pairs give neither run the head start."""
    results: list[dict[str, object] | None] = [None] * len(runs)

    def one(i: int) -> None:
        results[i] = runs[i]()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(runs))]
    for t in reversed(threads) if reverse else threads:
        t.start()
    for t in threads:
        t.join()
    if any(r is None for r in results):
        raise SystemExit("a run of the pair failed")
    return [r for r in results if r is not None]


def against(revision: str, data: Path, args: argparse.Namespace, n_questions: int | None) -> None:
    """Alternate runs of `revision` and of the working tree; the medians side by side."""
    repo = Path(__file__).resolve().parents[1]
    tree = Path(tempfile.mkdtemp(prefix="bench-against-")) / "tree"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "-q", str(tree), revision], check=True)
    try:
        runs: dict[str, list[dict[str, object]]] = {revision: [], "working tree": []}
        sources = {revision: tree, "working tree": None}
        for i in range(args.repeat):
            if args.at_once:  # one worker each (unless asked), started together: the pair shares the host
                pair = _at_once([functools.partial(run, data, args.workers or 1, args.max_k, None, n_questions, args.mode,
                                                   source, probe=False) for source in sources.values()],
                                reverse=i % 2 == 1)
                probe = host_probe()
                for result in pair:
                    result["host_probe_s"] = probe
            else:
                pair = [run(data, args.workers, args.max_k, None, n_questions, args.mode, source)
                        for source in sources.values()]
            for label, result in zip(sources, pair, strict=True):
                report(result, f"[{label} {i + 1}] ")
                runs[label].append(result)
        before, after = (summary(runs[label], f"{label}: ") for label in runs)
        digests = {r["output_sha256"] for rs in runs.values() for r in rs}
        print(f"CPU {before['cpu_s']:.1f} -> {after['cpu_s']:.1f} s ({after['cpu_s'] / before['cpu_s'] - 1:+.1%}), "
              f"wall {before['wall_s']:.1f} -> {after['wall_s']:.1f} s; outputs "
              + ("identical" if len(digests) == 1 else f"DIFFER ({len(digests)} distinct)"))
        cpu = [[float(r["cpu_user_s"]) + float(r["cpu_sys_s"]) for r in runs[label]] for label in runs]
        ratios = [b / a - 1 for a, b in zip(*cpu, strict=True)]
        print("CPU change in each pair: " + ", ".join(f"{r:+.1%}" for r in ratios)
              + f"; median {statistics.median(ratios):+.1%}")
    finally:
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(tree.parent, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=75_000)
    ap.add_argument("--questions", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic data")
    ap.add_argument("--data", type=Path,
                    help="dataset directory (questions.json, scene_graphs.json); made there if absent")
    ap.add_argument("--workers", type=int, help="passed to contrastgen generate (default: its own)")
    ap.add_argument("--max-k", type=int, default=5)
    ap.add_argument("--mode", choices=("templates", "programs", "both"), default="templates",
                    help="passed to contrastgen generate (the program path's speed: --mode both)")
    ap.add_argument("--keep", type=Path, help="keep the generated output here")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON object")
    ap.add_argument("--repeat", type=int, default=1, help="run this many times and report the medians")
    ap.add_argument("--against", metavar="REV",
                    help="alternate runs with git revision REV (a worktree, this environment)")
    ap.add_argument("--at-once", action="store_true",
                    help="with --against: run each pair at the same time, one worker each (or --workers)")
    args = ap.parse_args(argv)
    if args.at_once and not args.against:
        ap.error("--at-once compares with a revision: give --against REV")
    made_here = args.data is None or not (args.data / "questions.json").is_file()
    data = ensure_data(args.images, args.questions, args.seed, args.data)
    n_questions = args.questions if made_here else count_questions(data / "questions.json")
    if args.against:
        against(args.against, data, args, n_questions)
        return
    results = []
    for i in range(args.repeat):
        keep = args.keep if i == 0 else None
        results.append(run(data, args.workers, args.max_k, keep, n_questions, args.mode))
        if args.json:
            print(json.dumps(results[-1], sort_keys=True), flush=True)
        else:
            report(results[-1], f"[run {i + 1}] " if args.repeat > 1 else "")
    if args.repeat > 1 and not args.json:
        summary(results, "")


if __name__ == "__main__":
    main()
