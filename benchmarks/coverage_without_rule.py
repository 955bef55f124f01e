"""What the proof rules cost in coverage: generate with them switched off, and count.

Why: on the real questions, fewer than half get a perturbation, and the question is what bounds
that: the proofs' rules or the graphs. This script runs the same generation three times and
prints the questions perturbed each time:
- as shipped;
- without the rule that refuses the most, never saying "the" of a new object of a kind
  annotators leave out (clothing, body parts, the stuff of a scene:
  rules/lexicon/unannotated_prone.txt): `Lexicon.is_unannotated_prone` answers no for every word;
- without any proof of the program path besides that (`programs.proofs.EditProofs`: every "no"
  shown, the words' ids, new objects said as "the" ones): what is left is what makes an edit a
  perturbation at all (a new name denoting one object, an answer that changes or provably stays,
  words that read, a question not already asked).
What the last two generate is not proven (the verifier still applies the rules), so they are only
counted; nothing is written.

    .venv/bin/python benchmarks/graphs_from_programs.py ../shared/data/gqa/val_balanced_questions_sample.json G [--density 16]
    .venv/bin/python benchmarks/coverage_without_rule.py G
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import orjson

from contrastgen.engine import Engine
from contrastgen.language.lexicon import Lexicon
from contrastgen.programs.proofs import EditProofs
from contrastgen.run.generate import generate
from contrastgen.templates.base import _prone as template_prone


def coverage(questions: dict, graphs: dict) -> dict[str, int]:
    """Questions with any perturbation and with a contrast, and perturbations at k = 5."""
    gen = generate(questions, graphs, engine=Engine.load(), max_k=5, seed=0, workers=1, mode="both")
    stats = gen.stats
    return {"questions": stats["questions"], "perturbed": stats["perturbed_questions"],
            "with_contrast": stats["questions_with_contrast"], "perturbations": stats["perturbations"]["k5"]}


@contextmanager
def without_prone_rule() -> Iterator[None]:
    template_prone.cache_clear()  # the templates keep what they read of the rule
    try:
        with mock.patch.object(Lexicon, "is_unannotated_prone", lambda self, word: False):
            yield
    finally:
        template_prone.cache_clear()


@contextmanager
def without_edit_proofs() -> Iterator[None]:
    with mock.patch.object(EditProofs, "holds", lambda self, *args: True), \
            mock.patch.object(EditProofs, "new_references_unshown", lambda self, *args: None):
        yield


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graphs_dir", type=Path, help="questions.json and scene_graphs.json (graphs_from_programs.py)")
    args = ap.parse_args(argv)
    questions = orjson.loads((args.graphs_dir / "questions.json").read_bytes())
    graphs = orjson.loads((args.graphs_dir / "scene_graphs.json").read_bytes())
    rows = [("as shipped", coverage(questions, graphs))]
    with without_prone_rule():
        rows.append(("without the prone rule", coverage(questions, graphs)))
        with without_edit_proofs():
            rows.append(("without any edit proof", coverage(questions, graphs)))
    n = rows[0][1]["questions"]
    for label, c in rows:
        print(f"{label:<24} perturbed {c['perturbed']:>6,} ({c['perturbed'] / n:.1%})  "
              f"with a contrast {c['with_contrast']:>6,} ({c['with_contrast'] / n:.1%})  "
              f"perturbations {c['perturbations']:>7,}")


if __name__ == "__main__":
    main()
