"""The documented `make demo` figures are what `contrastgen demo` prints.

Why: quoted figures drift when the engine changes (a page once said 312 perturbations while the
demo printed 285). This runs the demo as a user does and holds the pages' sentences to its output.
"""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from contrastgen.cli import cli

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_docs_quote_the_demo_figures(tmp_path):
    result = CliRunner().invoke(cli, ["demo", "--out", str(tmp_path / "demo")], terminal_width=200)
    assert result.exit_code == 0, result.output
    out = result.output
    checked = re.search(r"verify: (\d+) perturbations checked, 0 failed", out)
    overall = re.search(r"overall\s+(\d+)\s+([\d.]+)->([\d.]+)\s+(-?[\d.]+)\s+([\d.]+)", out)
    assert checked and overall, out
    n, orig, pert = overall.group(1), overall.group(2), overall.group(3)
    assert checked.group(1) == n
    evaluation = (DOCS / "evaluation.md").read_text()
    demo = re.search(r"`make demo` prints[^\n]*(?:\n(?!\n)[^\n]*)*", evaluation)
    assert demo, "docs/evaluation.md has a paragraph starting '`make demo` prints'"
    text = " ".join(demo.group(0).split())
    assert f"{n} perturbations" in text, (n, text)
    assert f"from {orig}% on originals to {pert}% on perturbations" in text, (orig, pert, text)
    verification = " ".join((DOCS / "verification.md").read_text().split())
    assert f"all {n} perturbations pass" in verification, "docs/verification.md quotes the count"
