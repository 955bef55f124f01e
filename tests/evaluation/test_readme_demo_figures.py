"""The README's `make demo` figures are what `contrastgen demo` prints today.

Why: the figures drifted once (the README said 312 perturbations while the demo printed 285). This
runs the demo as a user does and holds the README's sentences to its output.
"""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from contrastgen.cli import cli

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_quotes_the_demo_figures(tmp_path):
    result = CliRunner().invoke(cli, ["demo", "--out", str(tmp_path / "demo")], terminal_width=200)
    assert result.exit_code == 0, result.output
    out = result.output
    checked = re.search(r"verify: (\d+) perturbations checked, 0 failed", out)
    overall = re.search(r"overall\s+(\d+)\s+([\d.]+)->([\d.]+)\s+(-?[\d.]+)\s+([\d.]+)", out)
    assert checked and overall, out
    n, orig, pert = overall.group(1), overall.group(2), overall.group(3)
    assert checked.group(1) == n
    readme = README.read_text()
    demo = re.search(r"`make demo` prints[^\n]*(?:\n(?!\n)[^\n]*)*", readme)
    assert demo, "the README has a paragraph starting '`make demo` prints'"
    text = " ".join(demo.group(0).split())
    assert f"{n} perturbations" in text, (n, text)
    assert f"from {orig}% on originals to {pert}% on perturbations" in text, (orig, pert, text)
    assert f"all {n} perturbations pass" in " ".join(readme.split()), "the verify section quotes the count"
