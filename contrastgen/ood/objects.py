"""Which objects each image contains, for the visual (KO, KOP) and multi-modal VQA-VS shortcuts.

VQA v2 itself has no object annotations; VQA-VS took them from COCO's instance annotations (the
80 categories). GQA has scene graphs. We accept three files: COCO `instances_*.json`, GQA scene
graphs, or a plain `{image_id: [object names]}` mapping for anything else (e.g. detector output).
An object counts once per image, as a word counts once per question in the MI statistics.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contrastgen.datasets.gqa import validate_scene_graph
from contrastgen.datasets.streaming import first_record, stream_records
from contrastgen.errors import InputError, duplicate_id
from contrastgen.jsonio import read_json

ImageObjects = dict[str, tuple[str, ...]]


def _from_coco(data: Mapping[str, Any], path: Path) -> ImageObjects:
    cats = data.get("categories")
    anns = data.get("annotations")
    if not isinstance(cats, list) or not isinstance(anns, list):
        raise InputError("COCO instances need 'categories' and 'annotations' lists", path=str(path))
    names: dict[str, str] = {}
    for c in cats:
        if not isinstance(c, Mapping) or not isinstance(c.get("name"), str) or "id" not in c:
            raise InputError("category without 'id' and 'name'", path=str(path), record=f"category {c!r:.60}")
        names[str(c["id"])] = c["name"]
    objects: dict[str, set[str]] = {}
    for img in data.get("images") or []:
        if isinstance(img, Mapping) and "id" in img:
            objects.setdefault(str(img["id"]), set())
    for a in anns:
        if not isinstance(a, Mapping) or "image_id" not in a:
            raise InputError("annotation without 'image_id'", path=str(path), record=f"annotation {a.get('id') if isinstance(a, Mapping) else a!r:.40}")
        cat = str(a.get("category_id"))
        if cat not in names:
            raise InputError(f"unknown category_id {cat}", path=str(path), record=f"annotation {a.get('id')}")
        objects.setdefault(str(a["image_id"]), set()).add(names[cat])
    return {k: tuple(sorted(v)) for k, v in objects.items()}


def _from_scene_graphs(path: Path) -> ImageObjects:
    """GQA scene graphs, streamed: a parsed graph file is several times its size on disk."""
    out: ImageObjects = {}
    record_of: dict[str, int] = {}
    for n, (image_id, g) in enumerate(stream_records(path, "image"), 1):
        if image_id in record_of:
            raise InputError(duplicate_id("image", image_id, f"record {record_of[image_id]}", f"record {n}"),
                             path=str(path), record=f"image {image_id}")
        record_of[image_id] = n
        graph = validate_scene_graph(str(image_id), g, path=str(path))
        out[str(image_id)] = tuple(sorted({o["name"].strip().lower() for o in graph["objects"].values()}))
    return out


def load_image_objects(path: str | os.PathLike[str]) -> ImageObjects:
    """Image id -> sorted distinct object names, from COCO instances, GQA scene graphs or a mapping."""
    p = Path(path)
    first = first_record(p)
    if isinstance(first, Mapping) and "objects" in first:
        return _from_scene_graphs(p)
    data = read_json(p)
    if not isinstance(data, Mapping) or not data:
        raise InputError("expected an object (COCO instances, scene graphs or image -> names)", path=str(p))
    if "annotations" in data and "categories" in data:
        return _from_coco(data, p)
    out: ImageObjects = {}
    for image_id, names in data.items():
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InputError("expected a list of object names", path=str(p), record=f"image {image_id}")
        out[str(image_id)] = tuple(sorted({n.strip().lower() for n in names if n.strip()}))
    return out
