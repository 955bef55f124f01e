"""Where the rules (data files) live, whether installed from a wheel or editable."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def rules_dir() -> Path:
    """The directory of `rules/` (the `contrastgen.rules` package)."""
    return Path(str(files("contrastgen.rules")))
