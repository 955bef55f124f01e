"""Super-CLEVR's question-redundancy splits (rd- / rd / rd+), made from existing questions.

The paper generates three datasets: rd (CLEVR's default: some redundant attributes, from random
sampling), rd- (every redundant attribute removed) and rd+ (every attribute said). From existing
questions the same three sets are made by rewriting each question: its program is read back from
its words (`datasets.clevr_reading`), and every reference is stripped to the attributes it needs
(rd-) or given all its object's attributes (rd+), with the same checks as a contrast set's
redundancy edits (`clevr.edits`): every reference still denotes the same object, the answer is
unchanged, the family's constraints hold, and the words read back to the program. A question that
is already at a level stands for itself there; one whose rewrite fails those checks is left out of
that split and counted, never approximated.

What the paper varies and this cannot: relationships. rd+ adds redundant relations and rd- drops
them in the paper; a template family fixes its relations, so only attributes move here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from contrastgen.clevr.edits import Editor
from contrastgen.clevr.executor import Invalid, execute
from contrastgen.clevr.scene_view import ClevrScene, clevr_scene
from contrastgen.datasets.clevr_reading import Reading, read_question

LEVELS = ("rd-", "rd", "rd+")
_ATTRIBUTE_FILTERS = ("filter_size", "filter_color", "filter_material", "partfilter_size", "partfilter_color",
                      "partfilter_material")


def attribute_filters(program: list[dict[str, Any]]) -> int:
    """How many attributes a question says: its size/colour/material filters (a shape is a noun)."""
    return sum(1 for n in program if n["type"] in _ATTRIBUTE_FILTERS)


def _as_question(q: Mapping[str, Any], question: str, program: list[dict[str, Any]], level: str) -> dict[str, Any]:
    out = {k: v for k, v in q.items() if k not in ("imageId", "program")}
    out.update({"question": question, "program": program, "redundancy": level})
    return out


def redundancy_splits(questions: list[dict[str, Any]], graphs: Mapping[str, dict[str, Any]]
                      ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """The three splits (CLEVR question records with their programs) and their statistics."""
    splits: dict[str, list[dict[str, Any]]] = {level: [] for level in LEVELS}
    said: dict[str, list[int]] = {level: [] for level in LEVELS}
    original_level: Counter[str] = Counter()
    left_out: dict[str, Counter[str]] = {"rd-": Counter(), "rd+": Counter()}
    scenes: dict[str, ClevrScene] = {}
    for q in questions:
        image = str(q.get("image") or q.get("imageId"))
        reading = read_question(q)
        if not isinstance(reading, Reading):
            original_level[f"unread ({reading.reason})"] += 1
            continue
        scene = scenes.get(image) or scenes.setdefault(image, clevr_scene(image, graphs[image]))
        program = reading.program()
        original = execute(program, scene)
        if isinstance(original, Invalid):
            original_level["unread (program does not run)"] += 1
            continue
        splits["rd"].append(_as_question(q, str(q["question"]), program, "rd"))
        said["rd"].append(attribute_filters(program))
        editor = Editor(reading, scene, original)
        at_level = {}
        for level in ("rd-", "rd+"):
            edit = editor.whole_question(level)
            nothing_to_do = edit is None and editor.at_level(level)
            at_level[level] = nothing_to_do
            if edit is not None:
                splits[level].append(_as_question(q, edit.question, edit.program, level))
                said[level].append(attribute_filters(edit.program))
            elif nothing_to_do:
                splits[level].append(_as_question(q, str(q["question"]), program, level))
                said[level].append(attribute_filters(program))
            else:
                left_out[level]["the rewrite fails a check"] += 1
        original_level["minimal (already rd-)" if at_level["rd-"] else
                       "full (already rd+)" if at_level["rd+"] else "some redundancy (rd)"] += 1
    stats = {
        "questions": {level: len(splits[level]) for level in LEVELS},
        "mean_attributes_said": {level: round(sum(v) / len(v), 3) if v else None for level, v in said.items()},
        "originals": dict(sorted(original_level.items())),
        "left_out": {level: dict(c) for level, c in left_out.items()},
    }
    return splits, stats
