"""The benchmark scripts' one check of the inputs a user names: each is there, or the script says
which is missing and where it comes from, in one sentence, and exits with code 2.

Why: the docs tell a newcomer to run these scripts, often before the input exists (a `generate`
output, an OOD build, `../shared`'s GQA file). A traceback from deep inside a reader names
neither the command that makes the input nor the script that wanted it.
"""

from __future__ import annotations

import sys
from pathlib import Path


def require(script: str, path: Path | str, comes_from: str, *, holding: tuple[str, ...] = ()) -> Path:
    """`path` (and each of `holding` inside it), or exit 2 with one sentence naming `script`, the
    missing path and `comes_from` (what the input is and how it is made)."""
    root = Path(path)
    for need in (root, *(root / name for name in holding)):
        if not need.exists():
            print(f"{script}: {need} is not there; it should be {comes_from}", file=sys.stderr)
            raise SystemExit(2)
    return root
