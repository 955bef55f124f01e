"""How often contrastgen's GQA program executor gives the gold answer.

On the bundled sample, on synthetic data, and on real GQA questions over scene graphs built from
their own programs (`graphs_from_programs.py`; GQA's graphs are not available here). Prints the
counts per data set and every miss, with the executor's reason for each refusal.

    .venv/bin/python benchmarks/execute_programs.py [--gqa ../shared/data/gqa/val_balanced_questions_sample.json]

Without --gqa, the real questions are left out.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

import graphs_from_programs  # noqa: E402
import script_inputs  # noqa: E402
import synth  # noqa: E402

from contrastgen.language.lexicon import Lexicon  # noqa: E402
from contrastgen.programs.executor import GqaExecutor, ProgramRefusal  # noqa: E402
from contrastgen.resources import sample_dir  # noqa: E402
from contrastgen.scene.index import SceneIndex  # noqa: E402


def execute_all(questions: dict, graphs: dict, lex: Lexicon) -> dict:
    """{"right": n, "wrong": [(qid, got)], "refused": [(qid, reason)], "skipped": n}"""
    out: dict = {"right": 0, "wrong": [], "refused": [], "skipped": 0}
    scenes: dict[str, SceneIndex] = {}
    for qid, q in questions.items():
        image = str(q["imageId"])
        graph = graphs.get(image)
        if not q.get("semantic") or graph is None:
            out["skipped"] += 1
            continue
        scene = scenes.get(image) or scenes.setdefault(image, SceneIndex.build(image, graph, lex))
        try:
            got = GqaExecutor(scene, lex, graph).run(q["semantic"]).answer
        except ProgramRefusal as exc:
            out["refused"].append((qid, exc.reason, str(exc)))
            continue
        if got == str(q.get("answer", "")).lower():
            out["right"] += 1
        else:
            out["wrong"].append((qid, got))
    return out


def report(label: str, questions: dict, result: dict) -> None:
    n = result["right"] + len(result["wrong"]) + len(result["refused"])
    reasons = Counter(r for _, r, _ in result["refused"])
    print(f"{label}: {n:,} questions with a program and a graph: {result['right']:,} right "
          f"({100 * result['right'] / max(n, 1):.1f}%), {len(result['wrong'])} wrong, "
          f"{len(result['refused'])} refused {dict(reasons)}")
    for qid, got in result["wrong"]:
        q = questions[qid]
        print(f"  wrong   {qid}: {q['question']!r} gold {q['answer']!r}, got {got!r} | {q.get('semanticStr')}")
    for qid, _, why in result["refused"]:
        q = questions[qid]
        print(f"  refused {qid}: {q['question']!r} gold {q['answer']!r}: {why} | {q.get('semanticStr')}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gqa", type=Path, help="real GQA questions (their graphs are built from their programs)")
    ap.add_argument("--synth-questions", type=int, default=4000)
    args = ap.parse_args()
    if args.gqa is not None:
        script_inputs.require("execute_programs.py", args.gqa, "GQA questions with programs, such as ../shared/data/gqa/val_balanced_questions_sample.json")
    lex = Lexicon.load()
    sample = sample_dir()
    qs = orjson.loads((sample / "questions.json").read_bytes())
    report("sample", qs, execute_all(qs, orjson.loads((sample / "scene_graphs.json").read_bytes()), lex))
    qs, gs = synth.make_dataset(300, args.synth_questions, seed=5)
    report("synthetic", qs, execute_all(qs, gs, lex))
    if args.gqa is not None:
        qs = orjson.loads(args.gqa.read_bytes())
        report("real GQA (graphs from programs)", qs, execute_all(qs, graphs_from_programs.build(qs), lex))


if __name__ == "__main__":
    main()
