"""Where `contrastgen generate` spends its time and memory, phase by phase.

`bench_generate.py` gives the end-to-end figure; this script runs the same library calls as the
CLI (stream the questions and scene graphs into their files, build the corpus, perturb in worker
processes, write the outputs) and reports wall time, CPU time and the process's peak RSS after
each phase, so a slow or fat run can be traced to its phase. The CLI loads questions and scene
graphs at the same time in two processes; here they run one after the other, so each is timed. Optionally cProfiles the whole run (--cprofile,
with --workers 1 so the perturbation work is in the profiled process).

    .venv/bin/python benchmarks/profile_generate.py --data DIR [--workers 2] [--cprofile FILE]
    .venv/bin/python benchmarks/profile_generate.py --images 7500 --questions 100000
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import tempfile
import time
from pathlib import Path

from bench_generate import ensure_data, machine
from script_inputs import require

from contrastgen.datasets.question_spill import spill_questions, spill_scene_graphs
from contrastgen.families.base import SHARD_IMAGES
from contrastgen.families.gqa import keeps_whole
from contrastgen.gc_policy import no_gc
from contrastgen.run.generate import generate
from contrastgen.writers import write_outputs


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=7_500)
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, help="directory with questions.json and scene_graphs.json")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--max-k", type=int, default=5)
    ap.add_argument("--mode", choices=("templates", "programs", "both"), default="templates",
                    help="passed to generate (programs and both keep every question whole)")
    ap.add_argument("--cprofile", type=Path, help="write a cProfile dump here and print the top functions")
    args = ap.parse_args(argv)
    if args.data is not None:
        require("profile_generate.py", args.data, "a folder with questions.json and scene_graphs.json, as benchmarks/make_gqa_like.py --out DIR makes", holding=("questions.json", "scene_graphs.json"))
    data = args.data or ensure_data(args.images, args.questions, args.seed)

    from contrastgen.engine import Engine

    rows: list[tuple[str, float, float, float]] = []
    profiler = cProfile.Profile() if args.cprofile else None

    def phase(name, fn):
        w, c = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        value = fn()
        if profiler:
            profiler.disable()
        rows.append((name, time.perf_counter() - w, time.process_time() - c, _peak_gib()))
        return value

    # the calls of `contrastgen generate` (contrastgen.families.gqa.Gqa.prepare_files), in sequence
    engine = phase("load engine (rules, lexicon)", Engine.load)
    with tempfile.TemporaryDirectory() as tmp:
        with no_gc():
            qs = phase("stream and spill questions", lambda: spill_questions(
                data / "questions.json", keeps_whole(engine.templates, args.mode), Path(tmp), SHARD_IMAGES))
            sg = phase("stream and spill scene graphs", lambda: spill_scene_graphs(data / "scene_graphs.json",
                                                                                   Path(tmp)))
            corpus = phase("build corpus", lambda: engine.build_corpus(sg))
        gen = phase("perturb (workers)", lambda: generate(qs, sg, engine=engine, max_k=args.max_k, seed=0, workers=args.workers, progress=False, corpus=corpus,
            mode=args.mode))
        phase("write outputs", lambda: write_outputs(gen, Path(tmp) / "out"))
        records = sum(1 for _ in gen.lines)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"{len(qs):,} questions, {len(sg):,} scene graphs ({qs.full:,} questions kept whole), {records:,} contrast-set records; "
          f"workers {args.workers}; {machine()}")
    print(f"{'phase':32} {'wall s':>8} {'CPU s (this process)':>21} {'peak RSS GiB':>13}")
    for name, wall, cpu, peak in rows:
        print(f"{name:32} {wall:8.1f} {cpu:21.1f} {peak:13.2f}")
    print(f"{'worker processes (total CPU)':32} {'':8} {children.ru_utime + children.ru_stime:21.1f} "
          f"{children.ru_maxrss / 2**20:13.2f}")
    if profiler:
        profiler.dump_stats(args.cprofile)
        pstats.Stats(str(args.cprofile)).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
