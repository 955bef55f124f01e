"""Contrast sets for CLEVR-family questions: read, execute, edit, prove, and hand the result to
the same writers, statistics and verifier as a GQA run.

A record looks like a GQA program-path record (so `evaluate`, `verify`, `mturk export`, the viewer
and the HTTP service read it unchanged) and adds what CLEVR's tools need: `dataset: "clevr"`, the
`family` it was read with, and `program`, the original's recovered program in CLEVR's own format
(every perturbation carries its edited one). The evidence of a perturbation is its execution
trace (every node's output) and the facts of the scene it rests on: the objects and parts the
trace names, the relations it follows, and for an absence the closed world (the scene's object
count), since a CLEVR scene lists every object in it.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from contrastgen.clevr.edits import Edit, Editor
from contrastgen.clevr.executor import Execution, Invalid, Value, execute
from contrastgen.clevr.groups import add_clevr_groups, scene_reader
from contrastgen.clevr.scene import ClevrScene, clevr_scene
from contrastgen.datasets.clevr_reading import (
    Reading,
    Refusal,
    read_question,
    words_and_program_agree,
)
from contrastgen.datasets.clevr_vocab import RELATION_NAMES, load_vocabulary, part_display
from contrastgen.groups.index import GroupIndex
from contrastgen.groups.record import group_stats
from contrastgen.groups.search import REASONS as GROUP_REASONS
from contrastgen.jsonio import dumps
from contrastgen.records import contrast_set_record
from contrastgen.run.entries import ViewEntry
from contrastgen.run.generate import Generation
from contrastgen.run.stats import Outcome, compute_stats, has_contrast

EVIDENCE_VERSION = 1
QUERY_OP = "clevr_program"


def trace_json(value: Value) -> Any:
    """A node output as JSON: objects as indices, a part as [object, part name], sets as lists."""
    if isinstance(value, tuple):
        if len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], str):
            return [value[0], value[1]]
        return [trace_json(v) for v in value]
    return value


def _objects_and_parts(value: Value) -> tuple[set[int], set[tuple[int, str]]]:
    objects: set[int] = set()
    parts: set[tuple[int, str]] = set()
    items = value if isinstance(value, tuple) and not (len(value) == 2 and isinstance(value[1], str)) else (value,)
    for v in items:
        if isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], str):
            parts.add(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            objects.add(v)
    return objects, parts


def evidence(program: list[dict[str, Any]], execution: Execution, scene: ClevrScene, answer: str) -> dict[str, Any]:
    """The proof of an answer: the trace and the scene facts it rests on."""
    objects: set[int] = set()
    parts: set[tuple[int, str]] = set()
    relations: list[dict[str, Any]] = []
    for node, out in zip(program, execution.outputs, strict=True):
        if node["type"] in ("scene", "count", "exist") or not isinstance(out, (tuple, int)) or isinstance(out, bool):
            continue
        if node["type"].startswith(("query", "partquery", "equal", "less", "greater")):
            continue
        o, p = _objects_and_parts(out)
        objects |= o
        parts |= p
        if node["type"] == "relate":
            target = execution.outputs[node["inputs"][0]]
            relations += [{"fact": "relation", "subject": str(j), "object": str(target),
                           "name": RELATION_NAMES[node["value_inputs"][0]]} for j in out]
    facts: list[dict[str, Any]] = [{"fact": "object_count", "count": len(scene.objects)}]
    for i in sorted(objects | {p[0] for p in parts}):
        obj = scene.objects[i]
        facts.append({"fact": "object", "id": str(i), "name": obj.shape,
                      "attributes": [obj.size, obj.color, obj.material]})
    for i, name in sorted(parts):
        attrs = scene.objects[i].parts[name]
        facts.append({"fact": "part", "object": str(i), "name": name,
                      "attributes": [attrs[k] for k in ("size", "color", "material") if k in attrs]})
    facts += relations
    return {"version": EVIDENCE_VERSION, "query": {"op": QUERY_OP},
            "trace": [trace_json(o) for o in execution.outputs], "facts": facts, "answer": answer}


def engine_program(program: list[dict[str, Any]], execution: Execution) -> list[dict[str, Any]]:
    """The program with each part name as the scene's own raw name, so Super-CLEVR's engine, which
    matches raw names exactly, runs it as it is: "front left door" is `front_left_door` on a car
    and `door_front_left` on a bus. A name no part in scope is written with exactly (a kind such
    as "wheel") stays, as the engine matches it by substring; one written two ways in scope stays
    as read (that engine could not say it)."""
    out = []
    for node in program:
        if node["type"] == "partfilter_partname":
            value = node["value_inputs"][0]
            scope = execution.outputs[node["inputs"][0]]
            words = sorted(part_display(value).split())
            raw = {name for _, name in scope if sorted(part_display(name).split()) == words} \
                if isinstance(scope, tuple) else set()
            if len(raw) == 1:
                node = {**node, "value_inputs": [raw.pop()]}
        out.append(node)
    return out


def _types(reading: Reading) -> dict[str, str]:
    return {"structural": reading.family.nodes[-1]["type"], "semantic": reading.family.file.removesuffix(".json"),
            "detailed": reading.family.key}


def perturb_question(qid: str, q: Mapping[str, Any], scene: ClevrScene, *, max_k: int, seed: int,
                     taken: set[str]) -> tuple[dict[str, Any] | None, str | None, Reading | None]:
    """(record, None, reading) with perturbations, or (None, reason, reading-or-None) refused."""
    reading = read_question(q)
    if isinstance(reading, Refusal):
        return None, reading.reason, None
    if q.get("program") is not None and not words_and_program_agree(reading, q["program"]):
        return None, "program_mismatch", reading
    program = reading.program()
    original = execute(program, scene)
    if isinstance(original, Invalid):
        return None, "original_invalid", reading
    vocab = load_vocabulary()
    gold = vocab.answer_words(original.answer)
    if "answer" in q and str(q["answer"]) != gold:
        return None, "answer_mismatch", reading
    editor = Editor(reading, scene, original, taken)
    contrasts = editor.contrasts()
    random.Random(f"{seed}:{qid}").shuffle(contrasts)
    chosen: list[Edit] = contrasts[:max_k]
    chosen += editor.redundancy()[: max(0, max_k - len(chosen))]
    if not chosen:
        return None, "no_edit", reading
    perturbations = []
    for rank, edit in enumerate(chosen, 1):
        p: dict[str, Any] = {
            "question_id": f"{qid}_p{rank}", "question": edit.question, "answer": edit.answer, "rank": rank,
            "change": edit.change, "evidence": evidence(edit.program, edit.execution, scene, edit.answer),
            "program": engine_program(edit.program, edit.execution),
            "kind": "invariance" if edit.invariance else "contrast"}
        perturbations.append(p)
    record = contrast_set_record(
        question_id=qid, image_id=str(q["imageId"]), template=reading.family.file.removesuffix(".json"),
        question=str(q["question"]), answer=gold, slots={k: v for k, v in reading.values.items()},
        grounding={}, perturbations=perturbations, types=_types(reading))
    record["dataset"] = "clevr"
    record["family"] = {"template_filename": reading.family.file, "question_family_index": reading.family.index}
    record["program"] = engine_program(program, original)
    return record, None, reading


def _clevr_view(record: Mapping[str, Any], p: Mapping[str, Any], original: Mapping[str, Any]) -> dict[str, Any]:
    """A perturbation as a CLEVR question record (what CLEVR's loaders read), with its proof."""
    out = {k: original[k] for k in ("split", "image_filename", "image_index", "image") if k in original}
    out.update({"imageId": record["image_id"], "question": p["question"], "answer": p["answer"],
                "program": p["program"], **record["family"],
                "contrast": {"original_question_id": record["question_id"], "rank": p["rank"],
                             "change": p["change"], "kind": p["kind"]}})
    return out


def _views(qid: str, q: Mapping[str, Any], record: dict[str, Any] | None, program: list | None) -> list[ViewEntry]:
    from contrastgen.datasets.lxmert import lxmert_item

    original = dict(q)
    if program is not None:
        original["program"] = program
    entries = [ViewEntry(qid, 0, dumps(original).rstrip(b"\n"), dumps(lxmert_item(qid, original)).rstrip(b"\n"))]
    for p in (record or {}).get("perturbations", []):
        view = _clevr_view(record, p, q)  # type: ignore[arg-type]
        entries.append(ViewEntry(p["question_id"], p["rank"], dumps(view).rstrip(b"\n"),
                                 dumps(lxmert_item(p["question_id"], view)).rstrip(b"\n")))
    return entries


class _Grouping:
    """`--groups` over a CLEVR run: the index of the scenes, built once, and the counts."""

    def __init__(self, scenes: Mapping[str, dict[str, Any]], cache: dict[str, ClevrScene], seed: int):
        from contrastgen.language.lexicon import Lexicon

        self.index = GroupIndex.build(scenes, Lexicon.load())
        self.scene_of = scene_reader(scenes, cache)
        self.seed = seed
        self.counts: Counter = Counter()

    def add(self, record: dict[str, Any], reading: Reading) -> None:
        add_clevr_groups(record, reading, self.index, self.scene_of, self.seed, self.counts)


def generate_clevr(questions: Mapping[str, Mapping[str, Any]], scenes: Mapping[str, dict[str, Any]], *,
                   max_k: int = 5, seed: int = 0, groups: bool = False) -> Generation:
    """Contrast sets for every question whose scene is given, in input order; with `groups`,
    each contrast pair's two-image group where one is found (`clevr.groups`)."""
    by_image: dict[str, set[str]] = defaultdict(set)
    for q in questions.values():
        by_image[str(q["imageId"])].add(str(q["question"]))
    cache: dict[str, ClevrScene] = {}
    lines: list[bytes] = []
    views: list[ViewEntry] = []
    outcomes: list[Outcome] = []
    perturbed: list[str] = []
    families: set[str] = set()
    grouping = _Grouping(scenes, cache, seed) if groups else None
    for qid, q in questions.items():
        image_id = str(q["imageId"])
        record = None
        reading = None
        if image_id not in scenes:
            reason = "no_scene_graph"
        else:
            scene = cache.get(image_id) or cache.setdefault(image_id, clevr_scene(image_id, scenes[image_id]))
            record, reason, reading = perturb_question(qid, q, scene, max_k=max_k, seed=seed,
                                                       taken=by_image[image_id])
        template = reading.family.file.removesuffix(".json") if reading else "unread"
        families.add(template)
        types = _types(reading) if reading else {}
        ranks = tuple(p["rank"] for p in record["perturbations"]) if record else ()
        outcomes.append(Outcome(qid, image_id, template, reason, ranks, types.get("structural", "unknown"),
                                types.get("detailed", "unknown"),
                                bool(record) and has_contrast(record["perturbations"])))
        if record is not None and grouping is not None and reading is not None:
            grouping.add(record, reading)
        if record is not None:
            lines.append(dumps(record))
            perturbed.append(qid)
        views += _views(qid, q, record, reading.program() if reading else None)
    views.sort(key=lambda v: (v.key, v.rank))
    stats = compute_stats(outcomes, len(questions), {str(q["imageId"]) for q in questions.values()},
                          dict(scenes), max_k, seed, sorted(families))
    stats["dataset"] = "clevr"
    if grouping is not None:
        stats["groups"] = group_stats(grouping.counts, (*GROUP_REASONS, "unreadable"))
    return Generation(lines=lines, views=views, stats=stats, max_k=max_k, seed=seed, perturbed=perturbed)
