"""Reading CLEVR and Super-CLEVR scene and question files into the data model.

Scenes come as one file per scene (Super-CLEVR's `scenes/*.json`) or as CLEVR's
`{"scenes": [...]}`; questions as `{"questions": [...]}`. A scene becomes a `SceneGraph` keyed by
its image name (the file name without extension, which is what a question's `image` field
holds):
- an object's id is its index in the scene (CLEVR's programs refer to objects by index), its
  `name` its shape, its attributes its size, colour and material;
- Super-CLEVR's parts become `parts`: raw part name -> {"name": the part in words, "attributes"};
- `relationships[r][i]` (the objects in relation r to object i) become relations on those objects
  ("to the left of" object i), named as the GQA model names spatial relations;
- a box is built around `pixel_coords`: CLEVR files give an object's centre and depth, not its
  extent, so the box is a square whose side shrinks with depth and with size "small". It is
  for drawing (the viewer, the crowd pages); no proof rests on it. Without `pixel_coords` the
  box is empty (0 x 0). A scene must give `relationships` with all four directions, one list per object
  (CLEVR's and Super-CLEVR's writers always do): read as "no relations", a missing field or
  direction would make "Is there a cube left of the sphere?" computably "no" when the file only
  failed to say.
A question keeps its record and gains `imageId` (= `image`), `answer` as words ("yes"/"no" for
CLEVR's booleans, digits for counts) and, when the file has one, its `program`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contrastgen.datasets.base import Questions, SceneGraphs
from contrastgen.datasets.clevr_vocab import RELATION_NAMES, load_vocabulary, part_display
from contrastgen.datasets.inputs import InputPaths, json_files, several
from contrastgen.datasets.streaming import top_level_start
from contrastgen.errors import InputError, duplicate_id
from contrastgen.jsonio import read_json

_OBJECT_FIELDS = ("shape", "size", "color", "material")
# Box side in pixels at depth 1 for a large object; CLEVR's camera puts objects at depth 7-15.
_BOX_SCALE = {"large": 1000.0, "small": 550.0}
_IMAGE_SIZE = (480.0, 320.0)  # CLEVR 1.0's renders; Super-CLEVR's files give their own


def answer_field(record: Mapping[str, Any], *, path: str, where: str) -> None:
    """A CLEVR answer, when given, is text, a count or a boolean, as CLEVR's generators write it.
    Anything else (null, an object) would be read as the words "None" or "{}" and scored as gold."""
    if "answer" not in record:
        return
    answer = record["answer"]
    if not isinstance(answer, str | int | float) or isinstance(answer, float) and not math.isfinite(answer):
        raise InputError(f"field 'answer' must be text, a number or a boolean, not {answer!r}", path=path,
                         record=where)


def whole_field(record: Mapping[str, Any], name: str, *, path: str, where: str) -> None:
    """A CLEVR index field, when given, is a whole number from 0 below 2**63 (CLEVR's and
    Super-CLEVR's generators number images, questions and families so). Why check a field that
    is not read here: a float, a string or 2**70 is not what the file's own writer could have
    written, so the file is not what it says it is."""
    if name not in record:
        return
    value = record[name]
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
        raise InputError(f"field {name!r} must be a whole number >= 0, not {value!r}", path=path, record=where)


def image_name(scene: Mapping[str, Any], *, path: str, record: str) -> str:
    name = scene.get("image_filename")
    if isinstance(name, str) and name:
        return os.path.splitext(os.path.basename(name))[0]
    raise InputError("scene has no 'image_filename'", path=path, record=record)


# Coordinates beyond this are no image's (a box of 1e308 or NaN is refused), as for GQA graphs.
_MAX_PIXELS = 1e6


def _box(obj: Mapping[str, Any], where: str, path: str) -> tuple[float, float, float, float, float, float]:
    if "pixel_coords" not in obj:  # a scene without renders (or coordinates): no box to draw
        return 0.0, 0.0, 0.0, 0.0, _IMAGE_SIZE[0], _IMAGE_SIZE[1]
    coords = obj["pixel_coords"]
    size = None
    if isinstance(coords, list) and len(coords) == 2 and isinstance(coords[0], list):  # Super-CLEVR
        coords, size = coords
    if not (isinstance(coords, list) and len(coords) >= 3 and all(isinstance(v, (int, float)) for v in coords[:3])):
        raise InputError("object has no pixel_coords [x, y, depth]", path=path, record=where)
    width, height = (size if isinstance(size, list) and len(size) == 2 else _IMAGE_SIZE)
    if not all(isinstance(v, (int, float)) and 0 < v <= _MAX_PIXELS for v in (width, height)):
        raise InputError("pixel_coords' image size must be two positive numbers", path=path, record=where)
    x, y, depth = (float(v) for v in coords[:3])
    if not all(-_MAX_PIXELS <= v <= _MAX_PIXELS for v in (x, y, depth)):  # false for NaN too
        raise InputError(f"pixel_coords {coords[:3]!r} are no pixel of an image", path=path, record=where)
    side = _BOX_SCALE.get(obj["size"], _BOX_SCALE["large"]) / max(depth, 1.0)
    left, top = max(0.0, x - side / 2), max(0.0, y - side / 2)
    w, h = min(float(width), x + side / 2) - left, min(float(height), y + side / 2) - top
    return round(left, 1), round(top, 1), round(w, 1), round(h, 1), float(width), float(height)


def scene_graph(scene: Any, *, path: str, record: str) -> tuple[str, dict[str, Any]]:
    """One CLEVR-family scene as (image id, data-model scene graph)."""
    if not isinstance(scene, Mapping):
        raise InputError("scene is not an object", path=path, record=record)
    image_id = image_name(scene, path=path, record=record)
    record = f"scene {image_id}"
    whole_field(scene, "image_index", path=path, where=record)
    objects_in = scene.get("objects")
    if not isinstance(objects_in, list):
        raise InputError("scene has no list of 'objects'", path=path, record=record)
    vocab = load_vocabulary()
    objects: dict[str, dict[str, Any]] = {}
    width = height = None
    for i, obj in enumerate(objects_in):
        where = f"{record} object {i}"
        if not isinstance(obj, Mapping):
            raise InputError("object is not an object", path=path, record=where)
        for name in _OBJECT_FIELDS:
            if not isinstance(obj.get(name), str):
                raise InputError(f"object has no {name!r}", path=path, record=where)
        if obj["shape"] not in vocab.values["Shape"]:
            raise InputError(f"unknown shape {obj['shape']!r}", path=path, record=where)
        x, y, w, h, width, height = _box(obj, where, path)
        item: dict[str, Any] = {"name": obj["shape"], "x": x, "y": y, "w": w, "h": h,
                                "attributes": [obj["size"], obj["color"], obj["material"]], "relations": []}
        # absent: an object without parts (CLEVR's have none); given, Super-CLEVR writes an object,
        # so null or a list is no file its writer made
        parts = obj.get("parts")
        if "parts" in obj and not isinstance(parts, Mapping):
            raise InputError("'parts' must be an object of part name -> its attributes", path=path, record=where)
        if parts:
            item["parts"] = {
                str(p): {"name": part_display(str(p)),
                         "attributes": [v.get(k) for k in ("size", "color", "material") if isinstance(v.get(k), str)]}
                for p, v in parts.items() if isinstance(v, Mapping)}
        objects[str(i)] = item
    if "relationships" not in scene:
        raise InputError("scene has no 'relationships' (CLEVR's object of relation -> one list per object)",
                         path=path, record=record)
    relationships = scene["relationships"]
    if not isinstance(relationships, Mapping):
        raise InputError("'relationships' is not an object", path=path, record=record)
    for relation, name in RELATION_NAMES.items():
        # every direction, one list per object: a direction left out (or `{}`) would read as
        # "no object is left of any other" and prove "no" where the file only failed to say
        if relation not in relationships:
            raise InputError(f"'relationships' has no {relation!r} (one list per object)", path=path, record=record)
        rows = relationships[relation]
        if not isinstance(rows, list) or len(rows) != len(objects_in):
            raise InputError(f"relationships[{relation!r}] does not have one list per object", path=path,
                             record=record)
        for target, members in enumerate(rows):
            if not isinstance(members, list):
                raise InputError(f"relationships[{relation!r}][{target}] is not a list of object indices",
                                 path=path, record=record)
            for member in members:
                if str(member) not in objects:
                    raise InputError(f"relationships[{relation!r}][{target}] names object {member}, which "
                                     "does not exist", path=path, record=record)
                objects[str(member)]["relations"].append({"name": name, "object": str(target)})
    graph: dict[str, Any] = {"width": width or _IMAGE_SIZE[0], "height": height or _IMAGE_SIZE[1],
                             "objects": objects, "dataset": "clevr"}
    return image_id, graph


def load_scenes(path: str | os.PathLike[str]) -> SceneGraphs:
    """Scenes from one file (a scene, or `{"scenes": [...]}`) or a directory of scene files."""
    graphs: SceneGraphs = {}
    first_place: dict[str, str] = {}
    for file in json_files(path):
        data = read_json(file)
        scenes = data.get("scenes") if isinstance(data, Mapping) and "scenes" in data else [data]
        if not isinstance(scenes, list):
            raise InputError("'scenes' is not a list", path=str(file))
        for i, scene in enumerate(scenes):
            image_id, graph = scene_graph(scene, path=str(file), record=f"scene {i}")
            if image_id in graphs:
                raise InputError(duplicate_id("scene", image_id, first_place[image_id], f"scene {i} of {file}"),
                                 path=str(file), record=f"scene {image_id}")
            first_place[image_id] = f"scene {i} of {file}"
            graphs[image_id] = graph  # type: ignore[assignment]
    if not graphs:
        raise InputError("no scenes found", path=str(path))
    return graphs


def _answer_words(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def load_questions(path: InputPaths) -> Questions:
    """Questions of `{"questions": [...]}` files, keyed by `question_index`; a directory of files,
    or several files, keys them `<file stem>/<question_index>`, since each file numbers its
    questions from 0."""
    files = json_files(path)
    prefixed = several(path) or Path(path).is_dir()  # type: ignore[arg-type]
    out: Questions = {}
    first_file: dict[str, str] = {}
    for file in files:
        data = read_json(file)
        rows = data.get("questions") if isinstance(data, Mapping) else None
        if not isinstance(rows, list):
            raise InputError("expected {\"questions\": [...]}", path=str(file))
        for i, q in enumerate(rows):
            where = f"question {i}"
            if not isinstance(q, Mapping):
                raise InputError("question is not an object", path=str(file), record=where)
            whole_field(q, "question_index", path=str(file), where=where)
            index = q.get("question_index", i)
            qid = f"{file.stem}/{index}" if prefixed else str(index)
            where = f"question {qid}"
            for name, kind in (("question", str), ("image", str)):
                if not isinstance(q.get(name), kind):
                    raise InputError(f"missing field {name!r}", path=str(file), record=where)
            # the family is what a question is read by; a malformed one (null included) is the
            # file's fault, not a question to count as unreadable
            for name in ("question_family_index", "image_index"):
                whole_field(q, name, path=str(file), where=where)
            for name in ("template_filename", "image_filename"):
                if not isinstance(q.get(name, ""), str):
                    raise InputError(f"field {name!r} must be a string", path=str(file), record=where)
            if qid in out:
                raise InputError(duplicate_id("question", qid, f"in {first_file[qid]}", f"question {i} of {file}"),
                                 path=str(file), record=where)
            first_file[qid] = f"question {i} of {file}"
            record = dict(q)
            record["imageId"] = q["image"]
            if "answer" in q:
                answer_field(q, path=str(file), where=where)
                record["answer"] = _answer_words(q["answer"])
            out[qid] = record  # type: ignore[assignment]
    if not out:
        raise InputError("no questions found", path=str(path))
    return out


def is_clevr_scenes(path: str | os.PathLike[str]) -> bool:
    """Whether `path` holds CLEVR scenes: `{"scenes": [...]}` or scene files (with `objects` and
    `image_filename` at the top), rather than GQA's graphs keyed by image id."""
    first = json_files(path)[0]
    if not first.is_file():
        raise InputError("file not found", path=str(first))
    kind, key = top_level_start(first)
    return kind == "object" and key in ("scenes", "objects", "image_filename", "relationships", "directions", "info")


def load_any_scene_graphs(path: str | os.PathLike[str]) -> SceneGraphs:
    """CLEVR scenes or GQA scene graphs, whichever `path` holds, in the data model."""
    if is_clevr_scenes(path):
        return load_scenes(path)
    from contrastgen.datasets.gqa import load_scene_graphs
    return load_scene_graphs(path)
