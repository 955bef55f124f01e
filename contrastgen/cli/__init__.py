"""The `contrastgen` command line.

Each family of commands lives in its own module and exposes `register(group)`; this module only
assembles them and turns `ContrastgenError` (and any `OSError` on the way: a full disk, a
read-only folder) into a one-line message and exit code 2, so no subcommand needs its own error
handling and no traceback reaches a user for bad input. Before any command runs, what killed
runs left in TMPDIR is removed (`files.scratch.sweep`).

Why a family is imported only when one of its commands runs: importing all of them took 1.1 s
before any work (`ood` alone pulls in scipy.stats), paid by every `contrastgen generate`, every
`verify` and every test that runs the command line.
"""

from __future__ import annotations

import functools
import importlib
import os
import select
import stat
import sys

import click

from contrastgen import __version__
from contrastgen.errors import ContrastgenError
from contrastgen.files import scratch

# The command each family contributes, by name; each module defines `register(group: click.Group)`.
# tests/cli/test_cli_lazy.py holds this table to what the modules register.
COMMAND_MODULES: dict[str, str] = {
    "augment": "contrastgen.cli.engine_cmds",
    "demo": "contrastgen.cli.engine_cmds",
    "generate": "contrastgen.cli.engine_cmds",
    "match": "contrastgen.cli.engine_cmds",
    "baseline": "contrastgen.cli.evaluate_cmds",
    "evaluate": "contrastgen.cli.evaluate_cmds",
    "mturk": "contrastgen.cli.mturk_cmds",
    "ood": "contrastgen.cli.ood_cmds",
    "serve": "contrastgen.cli.serve_cmds",
    "lexicon": "contrastgen.cli.lexicon_cmds",
    "verify": "contrastgen.cli.verify_cmds",
    "view": "contrastgen.cli.view_cmds",
    "clevr": "contrastgen.cli.clevr_cmds",
    "export": "contrastgen.cli.export_cmds",
    "captions": "contrastgen.cli.caption_cmds",
}


@functools.cache
def family(module: str) -> dict[str, click.Command]:
    """The commands one module registers (none when the module is left out of this install)."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:  # a family left out of this install: the rest still work
        if exc.name != module:
            raise
        return {}
    group = click.Group()
    mod.register(group)
    return dict(group.commands)


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        return family(module).get(cmd_name) if module else None

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        # what killed runs left in TMPDIR goes first; SIGTERM and SIGHUP then end this run as an
        # error would, so its own temporary files go too
        scratch.sweep()
        scratch.install_signal_cleanup()
        try:
            return super().invoke(ctx)
        except ContrastgenError as exc:
            click.echo(f"contrastgen: error: {exc}", err=True)
            ctx.exit(2)
        except BrokenPipeError as exc:
            if exc.filename is not None or not _stdout_is_closed():
                click.echo(f"contrastgen: error: {os_error_sentence(exc)}", err=True)
                ctx.exit(2)
            # `contrastgen match ... | head`: the reader had what it wanted, a normal end. stdout
            # now points at /dev/null so the interpreter's last flush does not fail again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(0)
        except OSError as exc:
            click.echo(f"contrastgen: error: {os_error_sentence(exc)}", err=True)
            ctx.exit(2)


def _stdout_is_closed() -> bool:
    """Whether this process's stdout is a pipe whose reader has gone (a write to it fails)."""
    try:
        sys.stdout.flush()
        os.write(sys.stdout.fileno(), b"")
    except BrokenPipeError:
        return True
    except (OSError, ValueError):
        return False
    try:
        mode = os.fstat(sys.stdout.fileno()).st_mode
    except OSError:
        return False
    # a write of nothing succeeds on a broken pipe; poll tells whether the other end is closed
    if not stat.S_ISFIFO(mode):
        return False
    poller = select.poll()
    poller.register(sys.stdout.fileno(), select.POLLERR)
    return any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))


def os_error_sentence(exc: OSError) -> str:
    """One sentence for a failure of the system (a full disk, a read-only or forbidden folder, a
    file that went away) that no more specific error caught."""
    reason = exc.strerror or str(exc)
    where = exc.filename if exc.filename is not None else None
    return f"{where}: {reason}" if where else reason


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="contrastgen")
def cli() -> None:
    """Contrast sets, OOD splits and shortcut metrics for VQA models, proven from scene graphs."""


def main(argv: list[str] | None = None) -> None:
    cli.main(args=argv, prog_name="contrastgen", standalone_mode=True)


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
