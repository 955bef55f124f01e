"""`contrastgen clevr compile | read`: the CLEVR family's rule build step and its reader."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from contrastgen.jsonio import dumps


@click.group("clevr")
def clevr_group() -> None:
    """CLEVR and Super-CLEVR question families (generate, verify and evaluate take CLEVR data directly)."""


@clevr_group.command("compile")
def compile_cmd() -> None:
    """Rebuild rules/clevr/question_patterns.json from the template files and the vocabulary."""
    from contrastgen.datasets.clevr_templates import write_patterns

    click.echo(f"wrote {write_patterns()}", err=True)


@clevr_group.command("read")
@click.argument("questions", type=click.Path(path_type=Path))
def read_cmd(questions: Path) -> None:
    """Print each question's recovered parameters and CLEVR-format program (JSONL), or why it
    cannot be read."""
    from contrastgen.datasets.clevr import load_questions
    from contrastgen.datasets.clevr_reading import Unreadable, read_question

    out = sys.stdout.buffer
    for qid, q in load_questions(questions).items():
        reading = read_question(q)
        if isinstance(reading, Unreadable):
            out.write(dumps({"question_id": qid, "refused": reading.reason, "detail": reading.detail}))
        else:
            out.write(dumps({"question_id": qid, "family": reading.family.key, "params": reading.values,
                             "program": reading.program()}))


def register(group: click.Group) -> None:
    group.add_command(clevr_group)
