"""The `contrastgen` command line.

Each family of commands lives in its own module and exposes `register(group)`; this module only
assembles them and turns `ContrastgenError` into a one-line message and exit code 2, so no
subcommand needs its own error handling and no traceback reaches a user for bad input.
"""

from __future__ import annotations

import importlib
import sys

import click

from contrastgen import __version__
from contrastgen.errors import ContrastgenError

# Modules that contribute commands; each defines `register(group: click.Group) -> None`.
_COMMAND_MODULES = (
    "contrastgen.cli.engine_cmds",
    "contrastgen.cli.evaluate_cmds",
    "contrastgen.cli.mturk_cmds",
    "contrastgen.cli.ood_cmds",
    "contrastgen.cli.serve_cmds",
    "contrastgen.cli.lexicon_cmds",
    "contrastgen.cli.verify_cmds",
    "contrastgen.cli.view_cmds",
    "contrastgen.cli.clevr_cmds",
    "contrastgen.cli.export_cmds",
)


class _Group(click.Group):
    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except ContrastgenError as exc:
            click.echo(f"contrastgen: error: {exc}", err=True)
            ctx.exit(2)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="contrastgen")
def cli() -> None:
    """Contrast sets, OOD splits and shortcut metrics for VQA models, proven from scene graphs."""


for _name in _COMMAND_MODULES:
    try:
        _mod = importlib.import_module(_name)
    except ModuleNotFoundError as exc:  # a family left out of this install: the rest still work
        if exc.name != _name:
            raise
        continue
    _mod.register(cli)


def main(argv: list[str] | None = None) -> None:
    cli.main(args=argv, prog_name="contrastgen", standalone_mode=True)


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
