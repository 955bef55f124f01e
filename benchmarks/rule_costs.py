"""What each refusal rule of the template path costs: CPU seconds per rule, scaled to a run.

Why: a flat profile names functions, not rules. This script runs the calls of `contrastgen
generate --mode templates` in one process (stream and spill the inputs, build the corpus,
perturb with one worker, in-process), with a timer and a counter around each function that
decides a refusal (the loader's record checks and template screen; the pattern and slot grammar;
the program's agreement with the words, the original program's execution, the original's
presuppositions, the slot that runs on; each template's handler and the candidate tests inside
it) and around the steps every question pays for (noun phrases, scene index, grounding, the
ranking, the edited programs, serialisation). It prints, per rule, its calls, how many of them
refused (a rule's refusal: it returned its refusing value or raised `Refusal`; for the candidate
tests, a candidate turned down), and its CPU seconds measured and scaled to `--scale` questions.

How it measures: each wrapped call is timed with `time.perf_counter`; the timers' own cost,
calibrated at start, is taken off each call and off every call nested in it, so a rule's time
is its own work and that of what it calls. Times are inclusive: a nested rule (indented) is part
of its parent's. Wall time is turned into CPU time by the phase's own ratio of process CPU to
wall (1.0 on an idle host; under contention every rule is slowed alike). The outputs are the
run's own (the wrappers change no value), so the counts are the run's.

    .venv/bin/python benchmarks/rule_costs.py --data DIR [--scale 1000000] [--json]
    .venv/bin/python benchmarks/rule_costs.py --images 7500 --questions 100000
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_generate import ensure_data, machine
from script_inputs import require

import contrastgen
from contrastgen.perturb import Refusal

_clock = time.perf_counter


@dataclass
class Tally:
    """One rule's calls, refusals and measured seconds (wall, overhead taken off)."""

    label: str
    depth: int
    phase: str
    refuses: bool = False  # a rule that can refuse (else a step every question pays for)
    calls: int = 0
    refused: int = 0
    seconds: float = 0.0


class Timers:
    """The wrappers' shared state: a count of every timed call (to take nested timers' cost off
    their parent) and the calibrated cost of one timed call."""

    def __init__(self) -> None:
        self.count = 0
        self.full = 0.0  # what one timed call adds to its caller's time
        self.inner = 0.0  # what one timed call adds to its own measured time
        self.tallies: dict[str, Tally] = {}

    def tally(self, label: str, depth: int, phase: str, refuses: bool) -> Tally:
        return self.tallies.setdefault(label, Tally(label, depth, phase, refuses))

    def wrap(self, fn: Callable[..., Any], tally: Tally, refused: Callable[[Any], bool] | None) -> Callable[..., Any]:
        """`fn` timed into `tally`; `refused(result)` says whether a call refused (a raised
        `Refusal` always does)."""
        timers = self
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args: Any, **kwargs: Any) -> Iterator[Any]:
                it = fn(*args, **kwargs)
                tally.calls += 1
                while True:
                    c0 = timers.count
                    t0 = _clock()
                    try:
                        item = next(it)
                    except StopIteration:
                        timers.close(tally, t0, c0)
                        return
                    except Refusal:
                        timers.close(tally, t0, c0)
                        tally.refused += 1
                        raise
                    timers.close(tally, t0, c0)
                    yield item
            return generator

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            c0 = timers.count
            t0 = _clock()
            try:
                result = fn(*args, **kwargs)
            except Refusal:
                timers.close(tally, t0, c0)
                tally.calls += 1
                tally.refused += 1
                raise
            timers.close(tally, t0, c0)
            tally.calls += 1
            if refused is not None and refused(result):
                tally.refused += 1
            return result
        return timed

    def close(self, tally: Tally, t0: float, c0: int) -> None:
        elapsed = _clock() - t0
        nested = self.count - c0
        self.count += 1
        tally.seconds += elapsed - nested * self.full - self.inner

    def calibrate(self, n: int = 200_000) -> None:
        """The cost of one timed call, from a timed no-op against a bare one (best of five)."""
        def noop() -> None:
            return None

        probe = Tally("probe", 0, "")
        timed = self.wrap(noop, probe, None)
        bare_best = timed_best = float("inf")
        for _ in range(5):
            t = _clock()
            for _ in range(n):
                noop()
            bare_best = min(bare_best, _clock() - t)
            probe.seconds, self.inner, self.full = 0.0, 0.0, 0.0
            t = _clock()
            for _ in range(n):
                timed()
            timed_best = min(timed_best, _clock() - t)
        self.full = (timed_best - bare_best) / n
        self.inner = max(probe.seconds / (5 * n) - bare_best / n, 0.0)
        self.count = 0


def patch_everywhere(original: Any, replacement: Any) -> int:
    """Put `replacement` wherever a contrastgen module holds `original` by name (a function
    imported with `from ... import` is one name per importing module); how many places."""
    places = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("contrastgen") or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if value is original:
                setattr(module, attr, replacement)
                places += 1
    return places


# (label, depth, phase, where, attribute, refused): `where` a module or class path; refused(result)
# says a call refused (None: the step refuses nothing; a raised Refusal always counts).
def _FALSE(r: Any) -> bool:
    return r is False


def _TRUE(r: Any) -> bool:
    return r is True


def _NONE(r: Any) -> bool:
    return r is None


def _EMPTY(r: Any) -> bool:
    return not r


def _REASON(r: Any) -> bool:
    return r[0] is not None  # (reason, run)


RULES: list[tuple[str, int, str, str, str, Callable[[Any], bool] | None]] = [
    ("question record checks", 0, "load", "contrastgen.datasets.gqa", "validate_question", None),
    ("template screen (whole record kept?)", 0, "load", "screen", "", _FALSE),
    ("scene-graph checks", 0, "load", "contrastgen.datasets.gqa", "validate_scene_graph", None),
    ("match: template patterns", 0, "perturb", "contrastgen.templates.patterns", "match_all", _EMPTY),
    ("match: slot grammar (no_match)", 0, "perturb", "contrastgen.engine.question", "readable", _FALSE),
    ("noun-phrase parsing (cached)", 1, "perturb", "contrastgen.language.nounphrase", "parse_cached", None),
    ("graph JSON parse", 0, "perturb", "contrastgen.datasets.packing:GraphJson", "__getitem__", None),
    ("image's question texts (duplicates)", 0, "perturb", "contrastgen.families.gqa_image_work:ImageWork", "__init__", None),
    ("scene index", 0, "perturb", "contrastgen.scene.index:SceneIndex", "build", None),
    ("relation edges (lazy)", 0, "perturb", "contrastgen.scene.index:SceneIndex", "_index_adjacency", None),
    ("context (read, agree, ground)", 0, "perturb", "contrastgen.engine.question:Engine", "context", None),
    ("program reading", 1, "perturb", "contrastgen.scene.program_reading", "read_program", None),
    ("program agrees with words (program_mismatch)", 1, "perturb", "contrastgen.templates.program_agreement", "agreeing_reading", _NONE),
    ("grounding", 1, "perturb", "contrastgen.scene.ground", "ground_slots", None),
    ("seeded order", 1, "perturb", "contrastgen.perturb.ranking", "seeded_rng", None),
    ("original program executes (not_executable, answer_mismatch)", 0, "perturb", "contrastgen.engine.template_path", "original_run", _REASON),
    ("original presupposition", 0, "perturb", "contrastgen.engine.template_path", "presupposition_fails", _TRUE),
    ("slot runs on (unsupported_phrase)", 0, "perturb", "contrastgen.engine.template_path", "slot_runs_on", _TRUE),
    ("handlers (each template's own refusals and search)", 0, "perturb", "handlers", "", None),
    ("referent is unique (ambiguous, not_grounded)", 2, "perturb", "contrastgen.templates.base", "referent", None),
    ("candidate: another kind (distinct_kind)", 2, "perturb", "contrastgen.templates.base", "distinct_kind", _FALSE),
    ("candidate: one object (unique_object)", 2, "perturb", "contrastgen.templates.base", "unique_object", _NONE),
    ("candidate: provably absent (absent_provably)", 2, "perturb", "contrastgen.templates.base", "absent_provably", _FALSE),
    ("evidence: kind names", 2, "perturb", "contrastgen.templates.base", "kind_names", None),
    ("ranking: already asked (duplicate)", 0, "perturb", "contrastgen.perturb.ranking:Ranking", "offer", _FALSE),
    ("edited programs", 0, "perturb", "contrastgen.engine.template_path", "edited_program", None),
    ("record lines", 0, "perturb", "contrastgen.perturb.record:PerturbResult", "record", None),
    ("view entries (GQA, LXMERT)", 0, "perturb", "contrastgen.results.view_bytes", "view_entries", None),
]


# Steps that refuse by raising `Refusal` (their return value refuses nothing).
RAISING = frozenset({"context (read, agree, ground)", "handlers (each template's own refusals and search)",
                     "referent is unique (ambiguous, not_grounded)"})


def _resolve(where: str) -> tuple[Any, bool]:
    """The module or class a rule's function lives in, and whether it is a class."""
    module_name, _, cls = where.partition(":")
    module = __import__(module_name, fromlist=["_"])
    return (getattr(module, cls), True) if cls else (module, False)


def install(timers: Timers, engine: Any, templates: tuple[Any, ...]) -> Callable[[str], bool] | None:
    """Wrap every rule's function; the template screen's wrapped predicate is returned for the
    loader (it is made per run, not looked up by name)."""
    from contrastgen.families.gqa import keeps_whole
    from contrastgen.templates.registry import Binding

    screen = None
    for label, depth, phase, where, attr, refused in RULES:
        tally = timers.tally(label, depth, phase, refused is not None or label in RAISING)
        if where == "screen":
            screen = timers.wrap(keeps_whole(templates, "templates"), tally, refused)
            continue
        if where == "handlers":
            for tid, binding in list(engine.bindings.items()):
                sub = timers.tally(f"{tid}", 1, phase, True)
                engine.bindings[tid] = Binding(tid, timers.wrap(binding.perturb, sub, None), binding.answer)
            continue
        owner, is_class = _resolve(where)
        if is_class:
            raw = owner.__dict__[attr]
            if isinstance(raw, classmethod):
                setattr(owner, attr, classmethod(timers.wrap(raw.__func__, tally, refused)))
            else:
                setattr(owner, attr, timers.wrap(raw, tally, refused))
        else:
            original = getattr(owner, attr)
            patch_everywhere(original, timers.wrap(original, tally, refused))
    return screen


def handlers_total(timers: Timers, engine: Any) -> None:
    """The handlers' row: the sum of each template's."""
    row = timers.tallies["handlers (each template's own refusals and search)"]
    for tid in engine.bindings:
        sub = timers.tallies[tid]
        row.calls += sub.calls
        row.refused += sub.refused
        row.seconds += sub.seconds


def measure(data: Path, max_k: int) -> dict[str, Any]:
    from contrastgen.datasets.question_spill import spill_questions, spill_scene_graphs
    from contrastgen.engine import Engine
    from contrastgen.families.base import SHARD_IMAGES
    from contrastgen.gc_policy import no_gc
    from contrastgen.run.generate import generate

    engine = Engine.load()
    timers = Timers()
    timers.calibrate()
    screen = install(timers, engine, engine.templates)
    phases: dict[str, tuple[float, float]] = {}

    def phase(name: str, fn: Callable[[], Any]) -> Any:
        w, c = time.perf_counter(), time.process_time()
        value = fn()
        phases[name] = (time.perf_counter() - w, time.process_time() - c)
        return value

    with tempfile.TemporaryDirectory() as tmp:
        with no_gc():
            qs = phase("load", lambda: spill_questions(data / "questions.json", screen, Path(tmp), SHARD_IMAGES))
            sg = phase("load+", lambda: spill_scene_graphs(data / "scene_graphs.json", Path(tmp)))
            corpus = engine.build_corpus(sg)
        gen = phase("perturb", lambda: generate(qs, sg, engine=engine, max_k=max_k, seed=0, workers=1,
                                                 progress=False, corpus=corpus, mode="templates"))
        perturbations = sum(len(json.loads(line)["perturbations"]) for line in gen.lines)
    handlers_total(timers, engine)
    load_wall = phases["load"][0] + phases["load+"][0]
    load_cpu = phases["load"][1] + phases["load+"][1]
    return {"questions": len(qs), "images": len(sg), "kept_whole": qs.full, "perturbations": perturbations,
            "phases": {"load": (load_wall, load_cpu), "perturb": phases["perturb"]},
            "timer_ns": (timers.full * 1e9, timers.inner * 1e9),
            "rules": [vars(t) for t in timers.tallies.values()]}


def table(result: dict[str, Any], scale: int) -> str:
    factor = scale / result["questions"]
    lines = [f"| rule | calls | refused | CPU-s here | CPU-s at {scale:,} |", "|---|---|---|---|---|"]
    for name, (wall, cpu) in result["phases"].items():
        ratio = cpu / wall if wall else 1.0
        rows = [r for r in result["rules"] if r["phase"] == name]
        lines.append(f"| **{name} phase** (CPU {cpu:.2f} s of {wall:.2f} s wall) | | | **{cpu:.2f}** | "
                     f"**{cpu * factor:.1f}** |")
        for r in rows:
            cpu_s = max(r["seconds"], 0.0) * ratio
            indent = "&nbsp;&nbsp;" * (2 * r["depth"])
            refused = f"{r['refused']:,}" if r["refuses"] else ""
            lines.append(f"| {indent}{r['label']} | {r['calls']:,} | {refused} | {cpu_s:.2f} | {cpu_s * factor:.1f} |")
        rest = cpu - sum(max(r["seconds"], 0.0) * ratio for r in rows if r["depth"] == 0)
        lines.append(f"| in no row above (the loop, reading records, the driver) | | | {rest:.2f} | {rest * factor:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="directory with questions.json and scene_graphs.json")
    ap.add_argument("--images", type=int, default=2_000)
    ap.add_argument("--questions", type=int, default=30_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-k", type=int, default=5)
    ap.add_argument("--scale", type=int, default=1_000_000, help="scale the CPU seconds to this many questions")
    ap.add_argument("--json", action="store_true", help="print the measurements as one JSON object")
    args = ap.parse_args(argv)
    if args.data is not None:
        require("rule_costs.py", args.data, "a folder with questions.json and scene_graphs.json, as "
                "benchmarks/make_gqa_like.py --out DIR makes", holding=("questions.json", "scene_graphs.json"))
    data = args.data or ensure_data(args.images, args.questions, args.seed)
    result = measure(data, args.max_k)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    full, inner = result["timer_ns"]
    print(f"{result['questions']:,} questions on {result['images']:,} images ({result['kept_whole']:,} kept whole); "
          f"contrastgen {contrastgen.__version__}; timer {full:.0f} ns a call ({inner:.0f} inside); {machine()}")
    print(table(result, args.scale))


if __name__ == "__main__":
    main()
