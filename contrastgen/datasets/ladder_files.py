"""Reading a GQA redundancy ladder's level files (`level_<n>.json`, written by `contrastgen ood
gqa-redundancy`).

Why in `datasets`: the scorer (`ood`) and the verifier (`verify`) both read them, and the
verifier imports nothing from the side that writes them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contrastgen.errors import InputError
from contrastgen.jsonio import read_json

LADDER = "ladder"  # the block every level's record carries: its original, level and proof
_LEVEL_FILE = re.compile(r"level_(\d+)\.json")


def level_file(level: int) -> str:
    return f"level_{level}.json"


def read_levels(path: Path) -> list[dict[str, dict[str, Any]]]:
    """The level files, level 0 first, each {question id: record with a `ladder` block}; a gap
    in the numbering, or a record without its block, is refused naming the file and record."""
    found = {int(m.group(1)): f for f in path.iterdir() if (m := _LEVEL_FILE.fullmatch(f.name))}
    if 0 not in found:
        raise InputError("no level_0.json: not a GQA redundancy ladder", path=str(path))
    levels = []
    for n in range(max(found) + 1):
        if n not in found:
            raise InputError(f"level_{n}.json is missing between levels 0 and {max(found)}", path=str(path))
        data = read_json(found[n])
        if not isinstance(data, Mapping):
            raise InputError("expected an object keyed by question id", path=str(found[n]))
        for qid, record in data.items():
            if not isinstance(record, Mapping) or not isinstance(record.get(LADDER), Mapping):
                raise InputError("record has no 'ladder' block", path=str(found[n]), record=f"question {qid}")
        levels.append(dict(data))
    return levels
