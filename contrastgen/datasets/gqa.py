"""Loading GQA questions and scene graphs, validated.

GQA ships questions as one JSON object keyed by question id (or, for training, a directory of
shards) and scene graphs as one object keyed by image id. We validate the fields the engine
relies on once, here, so that every later stage can index without defensive checks, and so
that a bad record is reported with its file and id instead of surfacing as a KeyError deep in
a worker process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from contrastgen.datasets.base import Questions, SceneGraphs
from contrastgen.datasets.inputs import InputPaths, json_files
from contrastgen.datasets.streaming import stream_records
from contrastgen.errors import InputError, duplicate_id
from contrastgen.gc_policy import no_gc
from contrastgen.jsonio import read_json

_QUESTION_FIELDS: dict[str, type | tuple[type, ...]] = {"question": str, "imageId": (str, int)}
_OBJECT_NUMBERS = ("x", "y", "w", "h")


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


def stream_questions(path: InputPaths, *, answered: bool = False) -> Iterator[tuple[int, Path, str, dict[str, Any]]]:
    """(file number, file, id, checked record) for each question of a GQA file or directory of
    shards, a few records at a time, in file order; ids given twice are the caller's to find.
    With `answered`, a record without an answer is refused too: what the OOD builds split on."""
    for n, file in enumerate(json_files(path)):
        for qid, q in stream_records(file, "question"):
            q = validate_question(qid, q, path=str(file))
            if answered and "answer" not in q:
                raise InputError("question has no answer", path=str(file), record=f"question {qid}")
            yield n, file, qid, q


def load_questions(path: InputPaths) -> Questions:
    """Load GQA questions from one JSON file or a directory of shards, in a stable order.

    Every record is kept whole (about 6 KB each in memory); `contrastgen.datasets.packing` is the lean,
    streaming alternative that `generate` uses.
    """
    return _load_keyed(path, "question", "questions", validate_question)


def _load_keyed(path: InputPaths, what: str, records_are: str, validate: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """Every record (`records_are`) of a file or folder of shards keyed by `what` id, each checked by `validate`;
    an id given twice, in a file (`read_json` refuses it) or in two shards, is refused."""
    records: dict[str, Any] = {}
    first_file: dict[str, Path] = {}
    with no_gc():
        for file in json_files(path):
            data = read_json(file)
            if not isinstance(data, Mapping):
                raise InputError(f"expected an object keyed by {what} id", path=str(file))
            for key, record in data.items():
                key = str(key)
                if key in records:
                    raise InputError(duplicate_id(what, key, f"in {first_file[key]}", f"in {file}"),
                                     path=str(file), record=f"{what} {key}")
                first_file[key] = file
                records[key] = validate(key, record, path=str(file))
    if not records:
        raise InputError(f"no {records_are} found", path=str(path))
    return records


def validate_scene_graph(image_id: str, g: Any, *, path: str | None = None) -> dict[str, Any]:
    """Check one scene graph: numeric boxes, string names, relations pointing at real objects.

    Written for speed (exact type tests, one pass): GQA's training graphs hold millions of
    objects and relations, and this runs on every one of them before any work starts.
    """
    rec = f"image {image_id}"
    objects = _checked_frame(g, path, rec)
    for oid, obj in objects.items():
        if not _plain_object(obj):
            _check_object_slowly(obj, path, f"{rec} object {oid}", ("objects", str(oid)))
        _check_relations(obj, oid, objects, path, rec)
    return g if isinstance(g, dict) else dict(g)


def _checked_frame(g: Any, path: str | None, rec: str) -> Mapping[str, Any]:
    """The graph's objects, once the graph is an object with objects and a width and height in
    range; InputError otherwise."""
    if not isinstance(g, Mapping):
        raise InputError("scene graph is not an object", path=path, record=rec)
    objects = g.get("objects")
    if not isinstance(objects, Mapping):
        raise InputError("missing or invalid field 'objects'", path=path, record=rec, field=("objects",))
    width = g.get("width")
    if type(width) not in _NUMBER or not 0 < width <= MAX_COORD:
        raise InputError("missing or invalid field 'width'", path=path, record=rec, field=("width",))
    height = g.get("height", 1)
    if type(height) not in _NUMBER or not 0 < height <= MAX_COORD:
        raise InputError("invalid field 'height'", path=path, record=rec, field=("height",))
    return objects


def _plain_object(obj: Any) -> bool:
    """The fast path's test of one object: a dict with a name, a box in range and a list of
    string attributes, by exact types (`_check_object_slowly` says what is wrong otherwise)."""
    return (type(obj) is dict and type(obj.get("name")) is str and bool(obj["name"].strip())
            and type(obj.get("x")) in _NUMBER and type(obj.get("y")) in _NUMBER
            and type(obj.get("w")) in _NUMBER and type(obj.get("h")) in _NUMBER
            # chained comparisons are false for NaN too
            and -MAX_COORD <= obj["x"] <= MAX_COORD and -MAX_COORD <= obj["y"] <= MAX_COORD
            and 0 <= obj["w"] <= MAX_COORD and 0 <= obj["h"] <= MAX_COORD
            and _string_list(obj.get("attributes", ())))


def _string_list(attrs: Any) -> bool:
    return type(attrs) is list and all(type(a) is str for a in attrs)


def _check_relations(obj: Mapping[str, Any], oid: Any, objects: Mapping[str, Any], path: str | None,
                     rec: str) -> None:
    """Each relation of an object has a string name and points at an object of the graph."""
    rels = obj.get("relations", [])
    if not isinstance(rels, list):
        raise InputError("field 'relations' is not a list", path=path, record=f"{rec} object {oid}",
                         field=("objects", str(oid), "relations"))
    for rel in rels:
        # exact types first: relations outnumber objects ten to one, and an ABC check is slow
        if type(rel) is not dict and not isinstance(rel, Mapping):
            raise InputError("relation without a 'name'", path=path, record=f"{rec} object {oid}",
                             field=("objects", str(oid), "relations", rels.index(rel)))
        name = rel.get("name")
        if type(name) is not str and not isinstance(name, str):
            raise InputError("relation without a 'name'", path=path, record=f"{rec} object {oid}",
                             field=("objects", str(oid), "relations", rels.index(rel)))
        target = rel.get("object")
        if type(target) not in (str, int) or (target not in objects and str(target) not in objects):
            raise InputError(f"relation {rel.get('name')!r} points at unknown object {target!r}",
                             path=path, record=f"{rec} object {oid}",
                             field=("objects", str(oid), "relations", rels.index(rel), "object"))


_NUMBER = (int, float)  # exact types: bool is an int subclass but not a coordinate
# Coordinates and sizes in pixels beyond this are no image's: a box of 1e308 or NaN is refused.
MAX_COORD = 1e6


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
        low = 0 if field in ("w", "h") else -MAX_COORD
        if not low <= v <= MAX_COORD:
            raise InputError(f"field {field!r} is {v!r}: a box needs finite pixels, sizes from 0 to "
                             f"{MAX_COORD:g}", path=path, record=record, field=(*where, field))
    attrs = obj.get("attributes", [])
    if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
        raise InputError("field 'attributes' is not a list of strings", path=path, record=record,
                         field=(*where, "attributes"))


def load_scene_graphs(path: str | os.PathLike[str]) -> SceneGraphs:
    """Load GQA scene graphs from one JSON file (or a directory of them)."""
    return _load_keyed(path, "image", "scene graphs", validate_scene_graph)


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


def _occurrences(text: str, word: str, joined: str) -> list[int]:
    """Where `word` occurs in `text` (any case) as a whole word: not inside a longer run of
    letters, digits or the characters in `joined`. Plain string search: a view is written per
    perturbation, and compiling a pattern per word costs more than the rest of it."""
    low, w = text.lower(), word.lower()
    out, i = [], low.find(w)
    while i >= 0 and w:
        before = low[i - 1] if i else " "
        after = low[i + len(w)] if i + len(w) < len(low) else " "
        if not (before.isalnum() or before in joined) and not (after.isalnum() or after in joined):
            out.append(i)
        i = low.find(w, i + 1)
    return out


def _swap_once(text: str, old: str, new: str) -> str | None:
    """`text` with the one whole-word occurrence of `old` said as `new` (a capital kept); None
    when `old` is not there exactly once."""
    found = _occurrences(text, old, "_-")
    if len(found) != 1:
        return None
    i = found[0]
    said = new[:1].upper() + new[1:] if text[i:i + 1].isupper() else new
    return text[:i] + said + text[i + len(old):]


def full_answer(original: dict[str, Any], p: dict[str, Any]) -> str:
    """GQA's `fullAnswer` for a perturbation: "Yes." / "No." for a yes/no answer; otherwise the
    original's full answer with the changed word and the answer each swapped where each occurs
    exactly once ("The jacket is purple." -> "The shirt is red."); else the answer as a sentence.

    Why not more: GQA's full answers to "no" state the true fact in words of their own, which no
    substitution recovers; a short one is right where a rewritten one could be false.
    """
    answer = str(p.get("answer", ""))
    if answer.lower() in ("yes", "no"):
        return answer.capitalize() + "."
    said, change = original.get("fullAnswer"), p.get("change") if isinstance(p.get("change"), dict) else {}
    old_word, new_word = str(change.get("from") or ""), str(change.get("to") or "")
    # the verb after the word agrees with its number: "The trousers have" must not become "The
    # clock have"; a final "s" on both or on neither stands in for the same number
    if isinstance(said, str) and said and old_word and new_word and \
            (change.get("kind") != "object" or old_word.endswith("s") == new_word.endswith("s")):
        swapped = _swap_once(said, old_word, new_word)
        if swapped is not None:
            if answer == str(original.get("answer", "")):
                return swapped
            swapped = _swap_once(swapped, str(original.get("answer", "")), answer)
            if swapped is not None:
                return swapped
    return answer[:1].upper() + answer[1:] + "."


def perturbation_groups(original: dict[str, Any], p: dict[str, Any]) -> dict[str, Any]:
    """GQA's `groups` for a perturbation: the original's global group (the same kind of answer;
    the new word where the changed one was it), and its local group with the changed word swapped
    ("10q-jacket_color" -> "10q-shirt_color"), as GQA-OOD groups questions by it; for a new object
    the key does not name, None (unknown), and for a relation or attribute the key does not name,
    the original's."""
    groups = original.get("groups") if isinstance(original.get("groups"), dict) else {}
    local, kept = groups.get("local"), groups.get("global")
    change = p.get("change") if isinstance(p.get("change"), dict) else {}
    old, new = str(change.get("from") or ""), str(change.get("to") or "")
    if kept == old and new:  # "What animal is it?" -> "What furniture is it?": its answers' class
        kept = new
    if isinstance(local, str) and old and new:
        key_old, key_new = old.replace(" ", "_"), new.replace(" ", "_")
        swapped = local
        for i in reversed(_occurrences(local, key_old, "")):  # "10q-jacket_color": "_" and "-" separate
            if not local[i - 1:i].isalpha() and not local[i + len(key_old):i + len(key_old) + 1].isalpha():
                swapped = swapped[:i] + key_new + swapped[i + len(key_old):]
        # an object the key does not name by the question's word ("trousers" in "10q-pants_color"):
        # which group the new object falls in is not known
        local = swapped if swapped != local or change.get("kind") != "object" else None
    return {"global": kept, "local": local}


def perturbation_as_gqa(record: dict[str, Any], p: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """A perturbation in GQA's question format, with its edited program when the original had one.
    `types` are the original's (one atom changes, not the kind of question); `fullAnswer` and
    `groups` are derived from the original's and the change (`full_answer`, `perturbation_groups`)."""
    semantic = p.get("semantic") or []
    return {
        "imageId": record["image_id"], "question": p["question"], "answer": p["answer"],
        "fullAnswer": full_answer(original, p), "isBalanced": bool(original.get("isBalanced", True)),
        "types": original.get("types", {}), "groups": perturbation_groups(original, p),
        "semantic": semantic, "semanticStr": semantic_str(semantic), "annotations": {}, "entailed": [], "equivalent": [],
        "contrast": {"original_question_id": record["question_id"], "template": record["template"],
                     "rank": p["rank"], "kind": p["kind"], "change": p["change"],
                     "evidence": p["evidence"]},
    }
