"""A third dataset family, written as docs/families.md says: one module that reads its own files
into the data model and registers itself. It is a test fixture, not part of the package.

"Shapes" is a toy VQA-style dataset: scenes of coloured shapes on a canvas and questions about
them, each in a tiny JSON format of its own:

    questions: {"shapes_questions": [{"id": "s1", "scene": "a", "ask": "What color is the cube?",
                                      "answer": "red"}, ...]}
    scenes:    {"shapes_scenes": {"a": {"width": 100, "height": 80,
                                        "shapes": [{"shape": "cube", "color": "red", "x": 10, "y": 20,
                                                    "size": 8}, ...]}}}

Its questions are perturbed by the engine's paths (the templates), so it brings no seed key and no
refusal reason of its own, and its records are the template path's, which `contrastgen verify`
already checks: the family's part is reading, validating and registering.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contrastgen.datasets.inputs import InputPaths, json_files
from contrastgen.datasets.streaming import top_level_start
from contrastgen.errors import InputError
from contrastgen.families.base import Family, Prepared, Settings, register
from contrastgen.families.gqa import GQA, GqaOptions, run_shard
from contrastgen.jsonio import read_json

_QUESTIONS_KEY, _SCENES_KEY = "shapes_questions", "shapes_scenes"
_QUESTION_FIELDS = ("id", "scene", "ask")
_SHAPE_FIELDS = ("shape", "color", "x", "y", "size")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1e6


class Shapes(Family):
    name = "shapes"
    describe = 'Shapes (a test fixture): {"shapes_questions": [...]}'
    Options = GqaOptions  # the engine's paths run on it, so it takes their options
    shard = staticmethod(run_shard)  # the engine's shard: its records are the template path's
    seed_keys: Mapping[str, str] = {}  # no path of its own
    reasons = ()

    def detect(self, questions: InputPaths) -> bool:
        kind, key = top_level_start(json_files(questions)[0])
        return kind == "object" and key == _QUESTIONS_KEY

    def load_questions(self, path: InputPaths) -> dict[str, dict[str, Any]]:
        questions: dict[str, dict[str, Any]] = {}
        for file in json_files(path):
            data = read_json(file)
            rows = data.get(_QUESTIONS_KEY) if isinstance(data, dict) else None
            if not isinstance(rows, list):
                raise InputError(f"expected {{{_QUESTIONS_KEY!r}: [...]}}", path=str(file))
            for n, row in enumerate(rows):
                where = f"question {row.get('id', n) if isinstance(row, dict) else n}"
                if not isinstance(row, dict) or not all(isinstance(row.get(f), str) for f in _QUESTION_FIELDS):
                    raise InputError(f"a question needs the text fields {', '.join(_QUESTION_FIELDS)}",
                                     path=str(file), record=where)
                if row["id"] in questions:
                    raise InputError("question id given twice", path=str(file), record=where)
                question = {"question": row["ask"], "imageId": row["scene"]}
                if isinstance(row.get("answer"), str):
                    question["answer"] = row["answer"]
                questions[row["id"]] = question
        return questions

    def load_scenes(self, path: str | Path) -> dict[str, dict[str, Any]]:
        data = read_json(Path(path))
        scenes = data.get(_SCENES_KEY) if isinstance(data, dict) else None
        if not isinstance(scenes, dict):
            raise InputError(f"expected {{{_SCENES_KEY!r}: {{scene id: scene}}}}", path=str(path))
        return {str(scene_id): _graph(scene, str(path), f"scene {scene_id}") for scene_id, scene in scenes.items()}

    def prepare(self, questions: Mapping[str, Any], graphs: Mapping[str, Any], settings: Settings,
                options: GqaOptions) -> Prepared:
        return GQA.prepare(questions, graphs, settings, options)  # read into GQA's model: GQA's context


def _graph(scene: Any, path: str, where: str) -> dict[str, Any]:
    """A scene as a scene graph of `datasets/base.py`: a shape is an object named by its shape,
    with its colour; left and right come from the shapes' positions."""
    if not isinstance(scene, dict) or not _number(scene.get("width")) or not isinstance(scene.get("shapes"), list):
        raise InputError("a scene needs a 'width' and a list of 'shapes'", path=path, record=where)
    objects: dict[str, dict[str, Any]] = {}
    for n, shape in enumerate(scene["shapes"], 1):
        if not isinstance(shape, dict) or not all(isinstance(shape.get(f), str) for f in _SHAPE_FIELDS[:2]) \
                or not all(_number(shape.get(f)) for f in _SHAPE_FIELDS[2:]):
            raise InputError(f"a shape needs {', '.join(_SHAPE_FIELDS)}", path=path, record=f"{where} shape {n}")
        objects[str(n)] = {"name": shape["shape"], "attributes": [shape["color"]], "x": shape["x"], "y": shape["y"],
                           "w": shape["size"], "h": shape["size"], "relations": []}
    for oid, obj in objects.items():
        for other_id, other in objects.items():
            if obj["x"] + obj["w"] < other["x"]:
                obj["relations"].append({"name": "to the left of", "object": other_id})
                other["relations"].append({"name": "to the right of", "object": oid})
    return {"width": scene["width"], "height": scene.get("height", scene["width"]), "objects": objects}


SHAPES = register(Shapes())
