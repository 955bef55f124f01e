"""A reader that stops reading (`contrastgen match ... | head`) is a normal end of the command,
not an error: exit 0 and nothing on stderr, as the docs' pipelines expect."""

from __future__ import annotations

import subprocess
import sys

import pytest

from contrastgen.resources import sample_dir


@pytest.mark.parametrize("command", [
    ["match", str(sample_dir() / "questions.json")],
    ["clevr", "read", str(sample_dir().parent / "sample_clevr" / "questions" / "superCLEVR_questions_5.json")],
])
def test_a_closed_pipe_is_a_normal_end(command):
    proc = subprocess.Popen([sys.executable, "-m", "contrastgen", *command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()  # as `head -1` does once it has its line
    _, err = proc.communicate(timeout=120)
    assert first.startswith(b"{")
    assert proc.returncode == 0, err.decode()
    assert err == b""
