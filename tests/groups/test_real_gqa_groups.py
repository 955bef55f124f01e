"""Groups on GQA's own wording: the real questions of ../shared over graphs built from their
programs (`benchmarks/graphs_from_programs.py`; GQA's scene graphs are not in ../shared). Every
group found is re-proven by the verifier."""

from __future__ import annotations

from pathlib import Path

import pytest

from contrastgen.engine import Engine
from contrastgen.run.generate import generate
from contrastgen.verify.checker import verify_contrast_sets

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "gqa" / "val_balanced_questions_sample.json"


def test_real_questions_are_grouped_and_every_group_is_re_proven():
    if not REAL.exists():
        pytest.skip(f"real GQA questions absent ({REAL}); they live in ../shared beside the repository")
    from graphs_from_programs import build

    from contrastgen.datasets.gqa import load_questions

    questions = load_questions(REAL)
    graphs = build(questions)
    gen = generate(questions, graphs, engine=Engine.load(), max_k=5, seed=0, workers=1, mode="both", groups=True)
    stats = gen.stats["groups"]
    report = verify_contrast_sets(gen.records, graphs)
    assert report.ok, report.failures[:5]
    assert report.groups == stats["grouped"] >= 100 and stats["swap"] >= 5
    # the words say "the" of clothes and body parts often in GQA: refused up front, and counted
    assert stats["reasons"]["unannotated_prone"] > 0
