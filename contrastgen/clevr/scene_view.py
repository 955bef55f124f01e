"""A CLEVR-family scene as the CLEVR executor reads it, built from the engine's data model.

Why a view rather than the scene file itself: the data model (`datasets.base.SceneGraph`) is what
every reader produces and what the verifier, the viewer and the HTTP service receive, so the
executor must run on it, whichever file it came from. The view types the attributes back (the
vocabulary's value sets are disjoint), numbers the objects as CLEVR does, and indexes relations
the way CLEVR's `relate` asks them: "the objects left of object i".
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from contrastgen.datasets.clevr_vocab import RELATION_VALUES, Vocabulary, load_vocabulary
from contrastgen.errors import InputError

Part = tuple[int, str]  # (object index, raw part name)


@dataclass(frozen=True)
class ClevrObject:
    index: int
    shape: str
    size: str
    color: str
    material: str
    parts: dict[str, dict[str, str]] = field(default_factory=dict)  # raw part name -> size/color/material

    def value(self, attribute: str) -> str:
        return getattr(self, attribute)


@dataclass(frozen=True)
class ClevrScene:
    image_id: str
    objects: tuple[ClevrObject, ...]
    related: dict[tuple[str, int], tuple[int, ...]]  # (relation value, i) -> objects in that relation to i

    def parts_of(self, index: int) -> list[Part]:
        """An object's parts in the generator's order (Super-CLEVR's part_dict), as object2part
        lists them; only the parts the scene file describes exist."""
        obj = self.objects[index]
        order = load_vocabulary().parts_of_shape.get(obj.shape, ())
        rank = {name: i for i, name in enumerate(order)}
        return [(index, name) for name in sorted(obj.parts, key=lambda n: (rank.get(n, len(rank)), n))]


def _typed(attributes: list[str], vocab: Vocabulary, *, image_id: str, object_id: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in attributes:
        kind = vocab.type_of_value.get(value)
        if kind is None:
            continue  # an attribute CLEVR's questions never ask about
        out[kind.lower()] = value
    missing = [k for k in ("size", "color", "material") if k not in out]
    if missing:
        raise InputError(f"object has no {', '.join(missing)} among its attributes",
                         record=f"image {image_id} object {object_id}")
    return out


def clevr_scene(image_id: str, graph: dict[str, Any]) -> ClevrScene:
    """The executor's view of one data-model scene graph whose object ids are CLEVR's indices."""
    vocab = load_vocabulary()
    objects_in = graph["objects"]
    try:
        order = sorted(objects_in, key=int)
    except ValueError as exc:
        raise InputError("CLEVR object ids must be the objects' indices", record=f"image {image_id}") from exc
    if [int(k) for k in order] != list(range(len(order))):
        raise InputError("CLEVR object ids must be 0..n-1", record=f"image {image_id}")
    objects = []
    related: dict[tuple[str, int], list[int]] = defaultdict(list)
    for key in order:
        obj = objects_in[key]
        typed = _typed(obj.get("attributes", []), vocab, image_id=image_id, object_id=key)
        parts = {name: _typed(part.get("attributes", []), vocab, image_id=image_id, object_id=f"{key} part {name}")
                 for name, part in (obj.get("parts") or {}).items()}
        objects.append(ClevrObject(int(key), obj["name"], typed["size"], typed["color"], typed["material"], parts))
        for rel in obj.get("relations", []):
            value = RELATION_VALUES.get(rel["name"])
            if value is not None:
                related[(value, int(rel["object"]))].append(int(key))
    return ClevrScene(image_id, tuple(objects), {k: tuple(sorted(v)) for k, v in related.items()})
