"""The command line imports a family of commands only when one of its commands runs."""

from __future__ import annotations

import importlib
import subprocess
import sys

import click
from click.testing import CliRunner

from contrastgen.cli import COMMAND_MODULES, cli


def test_command_table_is_what_the_modules_register():
    registered = {}
    for module in sorted(set(COMMAND_MODULES.values())):
        group = click.Group()
        importlib.import_module(module).register(group)
        registered.update({name: module for name in group.commands})
    assert registered == COMMAND_MODULES


def test_help_lists_every_command():
    out = CliRunner().invoke(cli, ["--help"]).output
    for name in COMMAND_MODULES:
        assert f"  {name} " in out


def test_running_generate_does_not_import_the_other_families():
    code = ("import sys\n"
            "from contrastgen.cli import cli\n"
            "cli.main(args=['generate', '--help'], standalone_mode=False)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('contrastgen.ood', 'contrastgen.cli.', 'scipy.stats'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = out.strip().splitlines()[-1]
    assert "contrastgen.cli.engine_cmds" in loaded
    assert "contrastgen.ood" not in loaded and "scipy.stats" not in loaded and "ood_cmds" not in loaded


def test_unknown_command_is_a_usage_error():
    result = CliRunner().invoke(cli, ["no-such-command"])
    assert result.exit_code == 2 and "No such command" in result.output
