"""Which JSON files a `--questions` or `--scene-graphs` path names, for every format's reader.

Why a module of its own: GQA, CLEVR and any other family accept the same shapes of input (one
file, a directory of shards, or several of either), so every reader resolves them the same way
here rather than borrowing another format's reader.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from contrastgen.errors import InputError

# One questions file, a directory of shards, or several of either (`--questions A --questions B`).
InputPaths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def json_files(path: InputPaths) -> list[Path]:
    """The JSON files to read, in order: the file, a directory's .json files sorted, or those of
    each path given; a file reached twice is refused (its questions would be read twice)."""
    if not isinstance(path, (str, os.PathLike)):
        files = [f for one in path for f in json_files(one)]
        seen: set[Path] = set()
        for f in files:
            if f.resolve() in seen:
                raise InputError("file given twice", path=str(f))
            seen.add(f.resolve())
        if not files:
            raise InputError("no questions file given")
        return files
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == ".json" and not p.name.startswith("."))
        if not files:
            raise InputError("directory holds no .json files", path=str(path))
        return files
    return [path]


def several(path: InputPaths) -> bool:
    """Were several paths given (ids are then qualified by file where a format numbers its own)?"""
    return not isinstance(path, (str, os.PathLike)) and len(path) > 1
