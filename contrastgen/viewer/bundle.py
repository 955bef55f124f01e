"""The viewer's data: contrast sets cut into pages the browser loads on demand, plus one small row
per set for filtering and search.

Why pages and rows: the page must paint the first set at once whatever the size of the output
(100k sets are hundreds of megabytes of evidence), so the first page holds what the first screen
shows and the compact index (a few numbers and the lower-cased words per set) arrives after it.
The files are JavaScript (`cgData(...)` calls), not JSON, because a page opened from disk may
load scripts but not fetch files: one static folder then works from disk, any web server and
`contrastgen view` alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from contrastgen.answers import is_right, normalize_answer
from contrastgen.terminal.progress import Advance, counted, noop
from contrastgen.viewer.words import (
    changed_span,
    changed_steps,
    evidence_objects,
    fact_in_words,
    original_objects,
    program_lines,
)

PAGE_SIZE = 200  # sets per page file
CHANGE_KINDS = ("object", "attribute", "relation")
FORMAT_VERSION = 1


@dataclass
class ViewerInputs:
    """Everything a viewer bundle is made of; only the records are required."""

    records: list[dict[str, Any]]
    scene_graphs: dict[str, dict[str, Any]] = field(default_factory=dict)
    predictions: dict[str, dict[str, str]] = field(default_factory=dict)  # model -> {qid: answer}
    review_ids: set[str] = field(default_factory=set)  # question ids the crowd disagreed on
    images: str | None = None  # base URL of `{image_id}.jpg|png`
    # image id -> its file name under `images`, where the folder was looked at (None: no file);
    # without it the page tries .jpg, then .png
    image_files: dict[str, str | None] | None = None
    title: str = "contrast sets"


def direction(original: str, answer: str, kind: str) -> str:
    """How a perturbation moves the answer: "yes→no", "no→yes", "kept" (invariance) or "other"."""
    if kind == "invariance":
        return "kept"
    pair = (normalize_answer(original), normalize_answer(answer))
    return {("yes", "no"): "yes→no", ("no", "yes"): "no→yes"}.get(pair, "other")


def _scene(graph: dict[str, Any]) -> dict[str, Any]:
    objects = {}
    for oid, o in (graph.get("objects") or {}).items():
        try:
            objects[str(oid)] = [str(o.get("name", "")), float(o["x"]), float(o["y"]), float(o["w"]), float(o["h"])]
        except (KeyError, TypeError, ValueError):
            continue  # an object without a box is not drawn
    return {"w": graph.get("width"), "h": graph.get("height"), "objects": objects}


def _answers(qid: str, gold: str, predictions: dict[str, dict[str, str]]) -> dict[str, list[Any]]:
    out = {}
    for model, answers in predictions.items():
        if qid in answers:
            out[model] = [answers[qid], is_right(answers[qid], gold)]  # as `evaluate --contrast` scores it
    return out


def view_set(rec: dict[str, Any], inputs: ViewerInputs) -> dict[str, Any]:
    """One contrast set as the page shows it."""
    graph = inputs.scene_graphs.get(str(rec.get("image_id")), {})
    names = {str(k): str(v.get("name", "")) for k, v in (graph.get("objects") or {}).items()}
    types = rec.get("types") if isinstance(rec.get("types"), dict) else {}
    perturbations = []
    marked: dict[str, None] = {}
    for p in rec.get("perturbations") or []:
        evidence = p.get("evidence") if isinstance(p.get("evidence"), dict) else {}
        for oid in evidence_objects(evidence):
            marked.setdefault(oid, None)
        kind = str(p.get("kind", "contrast"))
        perturbations.append({
            "id": p.get("question_id"), "question": p.get("question"), "answer": p.get("answer"),
            "kind": kind, "change": p.get("change"),
            "span": changed_span(str(rec.get("question", "")), str(p.get("question", ""))),
            "direction": direction(str(rec.get("answer", "")), str(p.get("answer", "")), kind),
            "facts": [fact_in_words(f, names, said=str((p.get("change") or {}).get("to", "")))
                      for f in evidence.get("facts") or [] if isinstance(f, dict)],
            "objects": evidence_objects(evidence),
            "models": _answers(str(p.get("question_id")), str(p.get("answer", "")), inputs.predictions),
            "program": program_lines(p.get("semantic")),
            "program_changed": changed_steps(rec.get("semantic"), p.get("semantic")) if rec.get("semantic") else [],
        })
    qid = str(rec.get("question_id"))
    image_id = str(rec.get("image_id"))
    image = inputs.image_files.get(image_id) if inputs.image_files is not None else ...
    return {"id": qid, "image_id": image_id, **({} if image is ... else {"image": image}),
            "question": rec.get("question"),
            "answer": rec.get("answer"), "template": rec.get("template"),
            "type": types.get("detailed") or types.get("structural") or "",
            "models": _answers(qid, str(rec.get("answer", "")), inputs.predictions),
            "marked": list(marked), "original_objects": original_objects(rec),
            "program": program_lines(rec.get("semantic")), "perturbations": perturbations,
            "disagreed": qid in inputs.review_ids or any(str(p["id"]) in inputs.review_ids for p in perturbations)}


def index_row(view: dict[str, Any], models: list[str], templates: list[str], types: list[str],
              directions: list[str]) -> list[Any]:
    """The set's filter keys, compactly: [template, type, k, change kinds (bits), directions (bits),
    models that fail somewhere in it (bits), crowd disagreed (0/1), its words lower-cased, the
    original question as written (the list's label)]."""
    changes = dirs = fails = 0
    for p in view["perturbations"]:
        kind = (p.get("change") or {}).get("kind")
        if kind in CHANGE_KINDS:
            changes |= 1 << CHANGE_KINDS.index(kind)
        dirs |= 1 << directions.index(p["direction"])
    for i, m in enumerate(models):
        answers = [view["models"].get(m)] + [p["models"].get(m) for p in view["perturbations"]]
        if any(a is not None and not a[1] for a in answers):
            fails |= 1 << i
    words = " ".join([str(view["question"])] + [str(p["question"]) for p in view["perturbations"]]).lower()
    return [templates.index(view["template"]), types.index(view["type"]), len(view["perturbations"]),
            changes, dirs, fails, int(view["disagreed"]), words, str(view["question"])]


def bundle(inputs: ViewerInputs, advance: Advance = noop
           ) -> tuple[dict[str, Any], list[list[Any]], Iterable[dict[str, Any]]]:
    """(manifest, index rows, pages): what `site.write_site` writes. `advance(1)` per set viewed."""
    views = [view_set(rec, inputs) for rec in counted(inputs.records, advance)]
    models = sorted(inputs.predictions)
    templates = sorted({str(v["template"]) for v in views})
    types = sorted({str(v["type"]) for v in views})
    directions = ["yes→no", "no→yes", "other", "kept"]
    rows = [index_row(v, models, templates, types, directions) for v in views]
    pages = []
    for start in range(0, len(views), PAGE_SIZE):
        chunk = views[start:start + PAGE_SIZE]
        scenes = {v["image_id"]: _scene(inputs.scene_graphs[v["image_id"]])
                  for v in chunk if v["image_id"] in inputs.scene_graphs}
        pages.append({"page": start // PAGE_SIZE, "sets": chunk, "scenes": scenes})
    manifest = {"version": FORMAT_VERSION, "title": inputs.title, "sets": len(views), "page_size": PAGE_SIZE,
                "pages": len(pages), "images": inputs.images, "models": models,
                "filters": {"template": templates, "type": types, "k": sorted({r[2] for r in rows}),
                            "change": list(CHANGE_KINDS), "direction": directions},
                "has_review": bool(inputs.review_ids)}
    return manifest, rows, pages
