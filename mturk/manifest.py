"""Reading the private manifest an export wrote, checked to be one this version understands.

Kept apart from scoring so that light tools (the simulator) can read a
manifest without importing pandas and crowd-kit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from contrastgen.errors import InputError
from contrastgen.jsonio import read_json

from .export import MANIFEST_FORMAT, MANIFEST_VERSION


def load_manifest(manifest: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, Any]:
    """Accept a manifest path or an already-loaded manifest; check it is one of ours."""
    path = None if isinstance(manifest, Mapping) else str(manifest)
    data = dict(manifest) if isinstance(manifest, Mapping) else read_json(manifest)
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise InputError("not a contrastgen MTurk manifest (field 'format' is missing or wrong)", path=path)
    if data.get("version") != MANIFEST_VERSION:
        raise InputError(f"manifest version {data.get('version')!r} is not supported "
                         f"(this contrastgen reads version {MANIFEST_VERSION})", path=path)
    for field in ("params", "columns", "hits", "items"):
        if field not in data:
            raise InputError(f"manifest lacks {field!r}", path=path)
    return data
