"""GQA's redundancy ladder on real GQA questions, end to end: build, verify, score two baselines.

Builds the graphs from the questions' own programs (`graphs_from_programs.py`, thin and, with
`--density 16`, at GQA's density; GQA's graphs are not available here), the ladder on each
(`contrastgen ood gqa-redundancy`), re-proves every rung (`contrastgen verify`), and scores:
- a scripted oracle: each level's question answered by executing its own program on the graph
  (`programs.executor.GqaExecutor`), which must score 100% at every level (the ladder keeps answers);
- a blind prior: the most frequent level-0 answer per template, GQA type or first words
  (`evaluation.baselines`, fitted in-sample on level 0), which sees only the words.
Prints, per graph kind, the questions per level, the build's and the verification's time (and
this process's peak RSS), and each baseline's accuracy per level and drop.

    .venv/bin/python benchmarks/gqa_redundancy_ladder.py --gqa ../shared/data/gqa/val_balanced_questions_sample.json --out /tmp/ladder
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

from script_inputs import require

from contrastgen.datasets.gqa import load_questions, load_scene_graphs
from contrastgen.evaluation.baselines import prior_predictions
from contrastgen.evaluation.run_baselines import template_resolver
from contrastgen.jsonio import write_json
from contrastgen.language.lexicon import Lexicon
from contrastgen.ood.evaluate import evaluate_ood
from contrastgen.programs.executor import GqaExecutor, ProgramRefusal, parse_program
from contrastgen.programs.redundancy_ladder import LadderConfig, run_gqa_redundancy
from contrastgen.scene.index import SceneIndex
from contrastgen.verify.gqa_redundancy import verify_ladder_dir

HERE = Path(__file__).resolve().parent


def oracle(questions: dict, graphs: dict, lex: Lexicon) -> dict[str, str]:
    """Each question's answer from its own program on its graph (none where it does not run)."""
    out, scenes = {}, {}
    for qid, q in questions.items():
        image = str(q["imageId"])
        scene = scenes.get(image) or scenes.setdefault(image, SceneIndex.build(image, graphs[image], lex))
        try:
            out[qid] = GqaExecutor(scene, lex, graphs[image]).run_steps(parse_program(q["semantic"])).answer
        except ProgramRefusal:
            continue
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gqa", required=True, type=Path, help="GQA questions with programs")
    ap.add_argument("--out", required=True, type=Path, help="scratch folder")
    args = ap.parse_args()
    require("gqa_redundancy_ladder.py", args.gqa, "GQA questions with programs, such as ../shared/data/gqa/val_balanced_questions_sample.json")
    lex = Lexicon.load()
    for kind, extra in (("thin", []), ("density16", ["--density", "16"])):
        graphs_dir = args.out / kind / "graphs"
        subprocess.run([sys.executable, str(HERE / "graphs_from_programs.py"), str(args.gqa), str(graphs_dir), *extra],
                       check=True, stdout=subprocess.DEVNULL)
        ladder = args.out / kind / "ladder"
        started = time.perf_counter()
        stats = run_gqa_redundancy(graphs_dir / "questions.json", graphs_dir / "scene_graphs.json", ladder,
                                   LadderConfig())
        built = time.perf_counter()
        report = verify_ladder_dir(ladder, graphs_dir / "scene_graphs.json")
        verified = time.perf_counter()
        graphs = load_scene_graphs(graphs_dir / "scene_graphs.json")
        levels = [load_questions(ladder / f) for f in stats["files"]]
        every = {qid: q for level in levels for qid, q in level.items()}
        predictions = {"oracle": oracle(every, graphs, lex),
                       "prior": prior_predictions(levels[0], every, template_resolver(every))[0]}
        for name, preds in predictions.items():
            write_json(args.out / kind / f"{name}.json", preds)
        scored = evaluate_ood(ladder, predictions)
        print(f"## {kind} graphs: questions per level {stats['questions_per_level']}, reaching "
              f"{stats['reaching']}, refused {stats['refused']}, removals that are no rung "
              f"{stats['removals_refused']}; verify: {report.checked} rungs checked, "
              f"{report.failed_perturbations} rejected; build {built - started:.1f} s "
              f"({stats['input_questions'] / (built - started):.0f} questions/s), verify {verified - built:.1f} s, "
              f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
        for name, m in scored["models"].items():
            cells = [f"level {r['level']} ({r['questions']}): {100 * r['accuracy']:.1f}%"
                     + (f", drop {100 * r['drop']:+.1f}" if r["level"] else "") for r in m["levels"]]
            d = m["deepest"]
            print(f"  {name}: " + "; ".join(cells) + f"; deepest: {100 * d['accuracy']:.1f}%, drop {100 * d['drop']:+.1f}")


if __name__ == "__main__":
    main()
