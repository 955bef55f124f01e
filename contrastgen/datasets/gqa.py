"""Loading GQA questions and scene graphs, validated.

GQA ships questions as one JSON object keyed by question id (or, for training, a directory of
shards) and scene graphs as one object keyed by image id. We validate the fields the engine
relies on once, here, so that every later stage can index without defensive checks, and so
that a bad record is reported with its file and id instead of surfacing as a KeyError deep in
a worker process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from contrastgen.datasets.base import Questions, SceneGraphs
from contrastgen.errors import InputError
from contrastgen.jsonio import no_gc, read_json

_QUESTION_FIELDS: dict[str, type | tuple[type, ...]] = {"question": str, "imageId": (str, int)}
_OBJECT_NUMBERS = ("x", "y", "w", "h")


def json_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix == ".json" and not p.name.startswith("."))
        if not files:
            raise InputError("directory holds no .json files", path=str(path))
        return files
    return [path]


def validate_question(qid: str, q: Any, *, path: str | None = None) -> dict[str, Any]:
    """Check one question record; return it with `imageId` as a string."""
    if not isinstance(q, Mapping):
        raise InputError("question record is not an object", path=path, record=f"question {qid}")
    for field, kind in _QUESTION_FIELDS.items():
        if field not in q:
            raise InputError(f"missing field {field!r}", path=path, record=f"question {qid}")
        if not isinstance(q[field], kind):
            raise InputError(f"field {field!r} has the wrong type", path=path, record=f"question {qid}")
    if "answer" in q and not isinstance(q["answer"], str):
        raise InputError("field 'answer' is not a string", path=path, record=f"question {qid}")
    if "semantic" in q and q["semantic"] is not None and not isinstance(q["semantic"], list):
        raise InputError("field 'semantic' is not a list", path=path, record=f"question {qid}")
    # in place: copying a million records would double the peak memory of a training-set run
    out = q if isinstance(q, dict) else dict(q)
    if not isinstance(out["imageId"], str):
        out["imageId"] = str(out["imageId"])
    return out


def load_questions(path: str | os.PathLike[str]) -> Questions:
    """Load GQA questions from one JSON file or a directory of shards, in a stable order.

    Every record is kept whole (about 6 KB each in memory); `contrastgen.datasets.packing` is the lean,
    streaming alternative that `generate` uses.
    """
    questions: Questions = {}
    with no_gc():
        for file in json_files(Path(path)):
            _load_file_into(questions, file)
    if not questions:
        raise InputError("no questions found", path=str(path))
    return questions


def _load_file_into(questions: Questions, file: Path) -> None:
    data = read_json(file)
    if not isinstance(data, Mapping):
        raise InputError("expected an object keyed by question id", path=str(file))
    for qid, q in data.items():
        qid = str(qid)
        if qid in questions:
            raise InputError("question id appears twice", path=str(file), record=f"question {qid}")
        questions[qid] = validate_question(qid, q, path=str(file))


def validate_scene_graph(image_id: str, g: Any, *, path: str | None = None) -> dict[str, Any]:
    """Check one scene graph: numeric boxes, string names, relations pointing at real objects.

    Written for speed (exact type tests, one pass): GQA's training graphs hold millions of
    objects and relations, and this runs on every one of them before any work starts.
    """
    rec = f"image {image_id}"
    if not isinstance(g, Mapping):
        raise InputError("scene graph is not an object", path=path, record=rec)
    objects = g.get("objects")
    if not isinstance(objects, Mapping):
        raise InputError("missing or invalid field 'objects'", path=path, record=rec, field=("objects",))
    width = g.get("width")
    if type(width) not in _NUMBER or width <= 0:
        raise InputError("missing or invalid field 'width'", path=path, record=rec, field=("width",))
    for oid, obj in objects.items():
        if (type(obj) is not dict or type(obj.get("name")) is not str or not obj["name"].strip()
                or type(obj.get("x")) not in _NUMBER or type(obj.get("y")) not in _NUMBER
                or type(obj.get("w")) not in _NUMBER or type(obj.get("h")) not in _NUMBER):
            _check_object_slowly(obj, path, f"{rec} object {oid}", ("objects", str(oid)))
        attrs = obj.get("attributes", ())
        if type(attrs) is not list or not all(type(a) is str for a in attrs):
            _check_object_slowly(obj, path, f"{rec} object {oid}", ("objects", str(oid)))
        rels = obj.get("relations", [])
        if not isinstance(rels, list):
            raise InputError("field 'relations' is not a list", path=path, record=f"{rec} object {oid}",
                             field=("objects", str(oid), "relations"))
        for rel in rels:
            if not isinstance(rel, Mapping) or not isinstance(rel.get("name"), str):
                raise InputError("relation without a 'name'", path=path, record=f"{rec} object {oid}",
                                 field=("objects", str(oid), "relations", rels.index(rel)))
            target = rel.get("object")
            if target not in objects and str(target) not in objects:
                raise InputError(f"relation {rel.get('name')!r} points at unknown object {target!r}",
                                 path=path, record=f"{rec} object {oid}",
                                 field=("objects", str(oid), "relations", rels.index(rel), "object"))
    return g if isinstance(g, dict) else dict(g)


_NUMBER = (int, float)  # exact types: bool is an int subclass but not a coordinate


def _check_object_slowly(obj: Any, path: str | None, record: str, where: tuple[str, ...]) -> None:
    """The checks of the fast path, one by one, saying exactly what is wrong (an object may also
    fail the exact-type tests harmlessly, e.g. a Mapping that is not a dict)."""
    if not isinstance(obj, Mapping):
        raise InputError("object is not an object", path=path, record=record, field=where)
    if not isinstance(obj.get("name"), str) or not obj["name"].strip():
        raise InputError("missing or invalid field 'name'", path=path, record=record, field=(*where, "name"))
    for field in _OBJECT_NUMBERS:
        v = obj.get(field)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise InputError(f"missing or invalid field {field!r}", path=path, record=record,
                             field=(*where, field))
    attrs = obj.get("attributes", [])
    if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
        raise InputError("field 'attributes' is not a list of strings", path=path, record=record,
                         field=(*where, "attributes"))


def load_scene_graphs(path: str | os.PathLike[str]) -> SceneGraphs:
    """Load GQA scene graphs from one JSON file (or a directory of them)."""
    graphs: SceneGraphs = {}
    with no_gc():
        for file in json_files(Path(path)):
            data = read_json(file)
            if not isinstance(data, Mapping):
                raise InputError("expected an object keyed by image id", path=str(file))
            for image_id, g in data.items():
                graphs[str(image_id)] = validate_scene_graph(str(image_id), g, path=str(file))
    if not graphs:
        raise InputError("no scene graphs found", path=str(path))
    return graphs


_SORTED = orjson.OPT_SORT_KEYS


def semantic_str(semantic: list[dict[str, Any]]) -> str:
    """GQA's `semanticStr`, derived from the steps as GQA derives it."""
    parts = []
    for s in semantic:
        deps = s["dependencies"]
        parts.append(f"{s['operation']}: {s['argument']}" + (f" [{', '.join(map(str, deps))}]" if deps else ""))
    return "->".join(parts)


def gqa_json(q: dict[str, Any]) -> bytes:
    """A GQA-format record as the outputs hold it (sorted keys, no newline).

    The one serialiser of GQA records: the packing loader, the workers and the writers all use it,
    so an original's bytes are computed once and are the same wherever they land.
    """
    return orjson.dumps(q, option=_SORTED)


def perturbation_as_gqa(record: dict[str, Any], p: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """A perturbation in GQA's question format, with its edited program when the original had one."""
    semantic = p.get("semantic") or []
    return {
        "imageId": record["image_id"], "question": p["question"], "answer": p["answer"],
        "fullAnswer": p["answer"], "isBalanced": bool(original.get("isBalanced", True)),
        "types": original.get("types", {}), "groups": {"global": None, "local": None},
        "semantic": semantic, "semanticStr": semantic_str(semantic), "annotations": {}, "entailed": [], "equivalent": [],
        "contrast": {"original_question_id": record["question_id"], "template": record["template"],
                     "rank": p["rank"], "change": p["change"], "evidence": p["evidence"]},
    }
