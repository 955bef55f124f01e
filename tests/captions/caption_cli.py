"""Running the command line in tests of caption sets."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from contrastgen.cli import cli


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


def generate(graphs: Path, out: Path, *extra: str) -> Path:
    result = run("captions", "generate", "--scene-graphs", graphs, "--out", out, "--workers", "1", *extra)
    assert result.exit_code == 0, result.output
    return out
