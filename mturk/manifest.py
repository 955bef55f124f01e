"""Reading the private manifest an export wrote, checked to be one this version understands.

Kept apart from scoring so that light tools (the simulator) can read a
manifest without importing pandas and crowd-kit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from contrastgen.errors import InputError
from contrastgen.jsonio import read_json

from .export import MANIFEST_FORMAT, MANIFEST_VERSION

Text = Annotated[str, Field(min_length=1)]


class _Part(BaseModel):
    # fields the export writes and ingest does not read are kept as they are
    model_config = ConfigDict(extra="allow", strict=True)


class _Params(_Part):
    items_per_hit: int = Field(ge=1)
    assignments: int = Field(ge=1)
    title: str
    reward: str


class _Hit(_Part):
    hit_token: Text
    items: list[Text]


class _Item(_Part):
    role: Literal["original", "perturbed", "gold", "padding"]
    image_id: Text
    image_url: str
    question: str
    answers: list[Text]


class _Manifest(_Part):
    """What ingest and the simulator read of a manifest, typed. Why check it whole: a manifest
    is a file a requester keeps for weeks and may edit; a null where a token or an answer
    should be must be refused naming the field, not surface as a KeyError while scoring."""

    params: _Params
    columns: list[Text]
    answer_fields: list[Text]
    hits: list[_Hit]
    items: dict[str, _Item]


def _checked(data: Mapping[str, Any], path: str | None) -> None:
    try:
        manifest = _Manifest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".")
        raise InputError(f"manifest field {where}: {first['msg']}", path=path) from None
    n_slots = manifest.params.items_per_hit
    for i, hit in enumerate(manifest.hits):
        if len(hit.items) != n_slots:
            raise InputError(f"manifest field hits[{i}].items has {len(hit.items)} items, not items_per_hit "
                             f"{n_slots}", path=path)
        unknown = [t for t in hit.items if t not in manifest.items]
        if unknown:
            raise InputError(f"manifest field hits[{i}].items names {unknown[0]!r}, which is not in items",
                             path=path)
    for token, item in manifest.items.items():
        if item.role != "padding" and not item.answers:
            raise InputError(f"manifest field items.{token}.answers is empty (a scored item needs its answer)",
                             path=path)


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
    _checked(data, path)
    return data
