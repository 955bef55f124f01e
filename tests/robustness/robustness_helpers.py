"""Running the command line for the fault and hostile-input tests: in this process, or as a
process that root's powers over file permissions do not help."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli

_PR_CAPBSET_DROP, _CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 24, 1, 2


def invoke(*args: str, env: dict[str, str] | None = None):
    """The command line in this process; the result's `error` is its one error line."""
    result = CliRunner().invoke(cli, [str(a) for a in args], env=env)
    result.error = next((line for line in result.output.splitlines() if line.startswith(("contrastgen: error:",
                                                                                       "Error:"))), "")
    return result


def assert_refused(result, *needles: str) -> None:
    """Exit 2, one error line naming each needle, no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    assert result.error, result.output
    for needle in needles:
        assert needle in result.error, (needle, result.error)


def _drop_root_reads() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl")


def run_as_ordinary_user(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`contrastgen ARGS` in a process that file permissions bind even when it runs as root."""
    if os.geteuid() != 0:
        preexec = None
    else:
        preexec = _drop_root_reads
        probe = subprocess.run(["true"], preexec_fn=preexec, capture_output=True)
        if probe.returncode != 0:
            pytest.skip("cannot drop root's file-permission powers here")
    return subprocess.run([sys.executable, "-m", "contrastgen", *map(str, args)], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, preexec_fn=preexec)


def copy_of(src: Path, dest: Path) -> Path:
    if src.is_dir():
        shutil.copytree(src, dest)
    else:
        shutil.copyfile(src, dest)
    return dest
