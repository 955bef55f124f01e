"""What the repository tracks stays small and free of scratch output.

Why: a clone is the first thing a user pays for, and run outputs once made up most of its bytes.
Data that belongs in the repository (the bundled samples, the rules) lives in `contrastgen/data/`
and `rules/`; anything else over 5 MB is almost certainly an output someone meant to leave out.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LARGE_FILE = 5_000_000  # bytes
TOTAL = 15_000_000  # bytes, every tracked file
DATA_FOLDERS = ("contrastgen/data/", "rules/")


def _git(*args: str) -> list[str]:
    run = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, check=True)
    return [p for p in run.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


@pytest.fixture(scope="module")
def tracked() -> dict[str, int]:
    """Every tracked file present in the working tree, with its size in bytes."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if subprocess.run(["git", "-C", str(REPO), "rev-parse", "--is-inside-work-tree"],
                      capture_output=True).returncode != 0:
        pytest.skip(f"{REPO} is not a git checkout (an unpacked archive or an installed copy)")
    files = {p: (REPO / p).stat().st_size for p in _git("ls-files", "-z") if (REPO / p).is_file()}
    assert files, "git ls-files lists nothing"
    return files


def test_no_large_file_is_tracked_outside_the_data_folders(tracked):
    large = {p: n for p, n in tracked.items() if n > LARGE_FILE and not p.startswith(DATA_FOLDERS)}
    assert not large, f"tracked files over {LARGE_FILE:,} bytes outside {DATA_FOLDERS}: {large}"


def test_tracked_files_stay_under_the_total(tracked):
    total = sum(tracked.values())
    assert total < TOTAL, f"tracked files total {total:,} bytes, over {TOTAL:,}"


def test_nothing_the_ignore_rules_exclude_is_tracked(tracked):
    """Scratch folders (`out/`, top-level `_*/`, `*.err`, caches) are in .gitignore; a file
    committed before its rule existed would still be tracked, and would show here."""
    ignored = _git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
    assert not ignored, f"tracked but matched by .gitignore: {ignored[:20]}"
