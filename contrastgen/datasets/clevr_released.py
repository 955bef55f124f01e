"""Super-CLEVR's scenes and questions as released, for the OOD splits (`ood superclevr`): the
records themselves, checked, not the data model (`datasets.clevr` reads them into that).

Why apart from `datasets.clevr`: the splits keep every question record as it was released (its
program, its `question_index` qualified by file when several are read) and need each object's
shape, colour and material, so they read the files as they are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contrastgen.datasets.clevr import answer_field, scene_graph, whole_field
from contrastgen.errors import InputError, duplicate_id
from contrastgen.jsonio import read_json

PathLike = str | os.PathLike[str]
CONCEPT_TYPES = ("shape", "color", "material")  # what every object of a scene must name


def _scene_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise InputError("no scene files (*.json) in this folder", path=str(path))
        return files
    if not path.is_file():
        raise InputError("no such scene file or folder", path=str(path))
    return [path]


def read_scenes(path: PathLike) -> dict[str, list[dict[str, Any]]]:
    """Objects by image: a scene file, a folder of them, or CLEVR's {"scenes": [...]}."""
    out: dict[str, list[dict[str, Any]]] = {}
    first_place: dict[str, str] = {}
    for file in _scene_files(Path(path)):
        data = read_json(file)
        scenes = data.get("scenes") if isinstance(data, dict) and "scenes" in data else [data]
        if not isinstance(scenes, list):
            raise InputError("'scenes' must be a list", path=str(file))
        for i, scene in enumerate(scenes):
            where = f"scene {i}"
            if not isinstance(scene, dict) or not isinstance(scene.get("objects"), list):
                raise InputError("a scene needs an 'objects' list", path=str(file), record=where)
            name = scene.get("image_filename") or scene.get("image")
            if not isinstance(name, str) or not name:
                raise InputError("a scene needs its 'image_filename'", path=str(file), record=where)
            for j, o in enumerate(scene["objects"]):
                missing = [t for t in CONCEPT_TYPES if not isinstance(o, dict) or not isinstance(o.get(t), str)]
                if missing:
                    raise InputError(f"object {j} has no {', '.join(missing)}", path=str(file), record=where)
            # the checks `generate` makes of a scene (boxes, parts, relationships), so a variant
            # is drawn only from scenes the contrast path would take
            scene_graph(scene, path=str(file), record=where)
            image = Path(name).stem
            if image in out:
                raise InputError(duplicate_id("scene", image, first_place[image], f"{where} of {file}"),
                                 path=str(file), record=where)
            first_place[image] = f"{where} of {file}"
            out[image] = scene["objects"]
    return out


def read_questions(paths: list[PathLike], scenes: Mapping[str, Any] | None = None,
                   scenes_path: PathLike | None = None) -> list[dict[str, Any]]:
    """CLEVR question files ({"questions": [...]}); each record names its scene's `image`, which
    must be among `scenes` when they are given. Given several files, each question's
    `question_index` is qualified by its file (`<file stem>/<index>`, the id `contrastgen generate`
    gives it), since every file numbers its questions from 0 and a split mixes them; an id given
    twice is refused, naming both places."""
    out = []
    first_place: dict[str, str] = {}
    for path in paths:
        data = read_json(path)
        qs = data.get("questions") if isinstance(data, dict) else None
        if not isinstance(qs, list):
            raise InputError("expected {\"questions\": [...]}", path=str(path))
        for i, q in enumerate(qs):
            if not isinstance(q, dict) or not isinstance(q.get("question"), str) or \
                    not isinstance(q.get("image") or q.get("image_filename"), str):
                raise InputError("a question needs 'question' and 'image'", path=str(path), record=f"question {i}")
            # the indices the splits key and group questions by, as `generate` checks them
            for name in ("question_index", "question_family_index", "image_index"):
                whole_field(q, name, path=str(path), where=f"question {i}")
            answer_field(q, path=str(path), where=f"question {i}")
            for name in ("template_filename", "image_filename"):
                if not isinstance(q.get(name, ""), str):
                    raise InputError(f"field {name!r} must be a string", path=str(path), record=f"question {i}")
            if len(paths) > 1:
                q = {**q, "question_index": f"{Path(path).stem}/{q.get('question_index', i)}"}
            index = q.get("question_index", i)
            place = f"question {i}" if len(paths) == 1 else f"question {i} of {path}"
            if str(index) in first_place:
                raise InputError(duplicate_id("question", index, first_place[str(index)], place),
                                 path=str(path), record=f"question {i}")
            first_place[str(index)] = place
            image = Path(str(q.get("image") or q.get("image_filename"))).stem
            if scenes is not None and image not in scenes:
                raise InputError(f"the question's scene {image!r} is not among the scenes of {scenes_path}",
                                 path=str(path), record=f"question {i}")
            out.append(q)
    return out
