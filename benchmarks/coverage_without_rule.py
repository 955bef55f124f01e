"""What the unannotated-prone rule costs in coverage: generate with it switched off, and count.

Why: on the real questions, fewer than half get a perturbation, and the question is what bounds
that: the proofs' rules or the graphs. The rule that refuses the most is the one that never says
"the" of a new object of a kind annotators leave out (clothing, body parts, the stuff of a scene:
rules/lexicon/unannotated_prone.txt). This script runs the same generation with
`Lexicon.is_unannotated_prone` answering no for every word, and prints the questions perturbed
with and without the rule. What it generates with the rule off is not proven (the verifier still
applies the rule), so it only counts and writes nothing.

    .venv/bin/python benchmarks/graphs_from_programs.py ../shared/data/gqa/val_balanced_questions_sample.json G [--density 16]
    .venv/bin/python benchmarks/coverage_without_rule.py G
"""

from __future__ import annotations

import argparse
from pathlib import Path

import orjson

from contrastgen.engine import Engine
from contrastgen.language.lexicon import Lexicon
from contrastgen.run.generate import generate
from contrastgen.templates.base import _prone as template_prone


def coverage(questions: dict, graphs: dict) -> dict[str, int]:
    """Questions with any perturbation and with a contrast, and perturbations at k = 5."""
    gen = generate(Engine.load(), questions, graphs, max_k=5, seed=0, workers=1, mode="both")
    stats = gen.stats
    return {"questions": stats["questions"], "perturbed": stats["perturbed_questions"],
            "with_contrast": stats["questions_with_contrast"], "perturbations": stats["perturbations"]["k5"]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graphs_dir", type=Path, help="questions.json and scene_graphs.json (graphs_from_programs.py)")
    args = ap.parse_args(argv)
    questions = orjson.loads((args.graphs_dir / "questions.json").read_bytes())
    graphs = orjson.loads((args.graphs_dir / "scene_graphs.json").read_bytes())
    with_rule = coverage(questions, graphs)
    original = Lexicon.is_unannotated_prone
    Lexicon.is_unannotated_prone = lambda self, word: False  # type: ignore[method-assign]
    template_prone.cache_clear()  # the templates keep what they read of the rule
    try:
        without = coverage(questions, graphs)
    finally:
        Lexicon.is_unannotated_prone = original  # type: ignore[method-assign]
        template_prone.cache_clear()
    n = with_rule["questions"]
    for label, c in (("with the rule", with_rule), ("without it (not proven)", without)):
        print(f"{label:<24} perturbed {c['perturbed']:>6,} ({c['perturbed'] / n:.1%})  "
              f"with a contrast {c['with_contrast']:>6,} ({c['with_contrast'] / n:.1%})  "
              f"perturbations {c['perturbations']:>7,}")


if __name__ == "__main__":
    main()
