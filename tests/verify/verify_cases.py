"""A hand-built scene and one valid perturbation per query op, for the verifier's tests.

Every test starts from a perturbation that holds and tampers with one thing, so a test that
passes for the valid case and fails for the tampered one shows the check is really there.
"""

from __future__ import annotations

import copy
from typing import Any

from contrastgen.verify.rules import VerifyRules

WIDTH = 640


def _obj(name: str, x: float, w: float, attributes: list[str], relations: list[tuple[str, str]]) -> dict:
    return {"name": name, "x": x, "y": 10, "w": w, "h": 40, "attributes": attributes,
            "relations": [{"name": r, "object": o} for r, o in relations]}


def make_graph() -> dict[str, Any]:
    """cup (left, red) left of / near plate (right, white); fence just left of the middle."""
    return {
        "width": WIDTH,
        "height": 480,
        "objects": {
            "1": _obj("cup", 100, 50, ["red", "small"], [("to the left of", "2"), ("near", "2"), ("on", "3")]),
            "2": _obj("plate", 400, 100, ["white"], [("to the right of", "1")]),
            "3": _obj("table", 0, 640, ["wooden", "brown"], []),
            "4": _obj("fence", 310, 10, ["black", "metal"], []),
            "6": _obj("Chair ", 500, 60, ["brown", "black"], [("near", "3")]),
        },
    }


def _pert(question: str, answer: str, change: dict, query: dict, facts: list[dict]) -> dict:
    return {"question_id": "q1_c1", "question": question, "answer": answer, "rank": 1, "change": change,
            "evidence": {"version": 1, "query": query, "facts": facts, "answer": answer}}


def _obj_change(a: str, b: str, slot: str = "x") -> dict:
    return {"kind": "object", "slot": slot, "from": a, "to": b}


# name -> (original answer, perturbation); each holds on make_graph().
VALID: dict[str, tuple[str, dict]] = {
    "side": ("right", _pert(
        "On which side is the cup?",
        "left", _obj_change("plate", "cup"), {"op": "side", "object": "1"},
        [{"fact": "object", "id": "1", "name": "cup"},
         {"fact": "only", "names": ["cup", "cups"], "ids": ["1"]},
         {"fact": "side", "id": "1", "x": 100, "w": 50, "image_width": WIDTH, "center": 125.0, "side": "left"}])),
    "side_near_centre": ("right", _pert(
        "On which side is the fence?",
        "left", _obj_change("plate", "fence"), {"op": "side", "object": "4"},
        [{"fact": "only", "names": ["fence", "fences"], "ids": ["4"]},
         {"fact": "side", "id": "4", "x": 310, "w": 10, "image_width": WIDTH, "center": 315.0, "side": "left"}])),
    "color": ("white", _pert(
        "What color is the cup?",
        "red", _obj_change("plate", "cup"), {"op": "color", "object": "1"},
        [{"fact": "object", "id": "1", "name": "cup", "attributes": ["red"]},
         {"fact": "only", "names": ["cup", "cups"], "ids": ["1"]},
         {"fact": "color", "id": "1", "colors": ["red"]}])),
    "exists_any_no": ("yes", _pert(
        "Do you see any bowls or spoons?",
        "no", _obj_change("cup", "bowl"),
        {"op": "exists_any", "names": [["bowl", "bowls"], ["spoon", "spoons"]], "attributes": []},
        [{"fact": "absent", "names": ["bowl", "bowls"]}, {"fact": "absent", "names": ["spoon", "spoons"]}])),
    "exists_any_yes_attr": ("no", _pert(
        "Are there any red cups?",
        "yes", {"kind": "attribute", "slot": "x", "from": "blue", "to": "red"},
        {"op": "exists_any", "names": [["cup", "cups"]], "attributes": ["red"]},
        [{"fact": "object", "id": "1", "name": "cup", "attributes": ["red"]}])),
    "exists_related_absent": ("yes", _pert(
        "Is there a wall near the plate?",
        "no", _obj_change("cup", "wall"),
        {"op": "exists_related", "names": ["wall", "walls"], "rel": "near", "object": "2", "symmetric": True},
        [{"fact": "object", "id": "2", "name": "plate"}, {"fact": "absent", "names": ["wall", "walls"]}])),
    "exists_related_yes": ("no", _pert(
        "Are there any chairs near the table?",
        "yes", _obj_change("cup", "chair"),
        {"op": "exists_related", "names": ["chair", "chairs"], "rel": "near", "object": "3", "symmetric": True},
        [{"fact": "object", "id": "3", "name": "table"}, {"fact": "object", "id": "6", "name": "chair"},
         {"fact": "relation", "subject": "6", "name": "near", "object": "3"}])),
    "exists_related_not_related": ("yes", _pert(
        "Is there a cup near the table?",
        "no", _obj_change("chair", "cup"),
        {"op": "exists_related", "names": ["cup", "cups"], "rel": "near", "object": "3", "symmetric": True},
        [{"fact": "object", "id": "3", "name": "table"},
         {"fact": "not_related", "names": ["cup", "cups"], "rel": "near", "object": "3", "symmetric": True}])),
    "relation_no": ("yes", _pert(
        "Is the cup to the right of the plate?",
        "no", {"kind": "relation", "slot": "rel", "from": "to the left of", "to": "to the right of"},
        {"op": "relation", "subject": "1", "rel": "to the right of", "object": "2", "opposite": "to the left of"},
        [{"fact": "relation", "subject": "1", "name": "to the left of", "object": "2"}])),
    "relation_yes": ("no", _pert(
        "Is the plate to the right of the cup?",
        "yes", {"kind": "relation", "slot": "rel", "from": "to the left of", "to": "to the right of"},
        {"op": "relation", "subject": "2", "rel": "to the right of", "object": "1"},
        [{"fact": "relation", "subject": "2", "name": "to the right of", "object": "1"}])),
}


TEMPLATE, SUFFIX = "what_color_is_the_x", "c"  # as in rules/templates.json


def as_record(original_answer: str, perturbations: list[dict], *, qid: str = "q1", image_id: str = "img1",
              template: str = TEMPLATE, suffix: str = SUFFIX) -> dict:
    """Wrap perturbations in a contrast_sets.jsonl record, renumbering ids and ranks."""
    perts = copy.deepcopy(perturbations)
    for rank, p in enumerate(perts, 1):
        p["rank"], p["question_id"] = rank, f"{qid}_{suffix}{rank}"
    return {"question_id": qid, "image_id": image_id, "template": template, "question": "?",
            "answer": original_answer, "perturbations": perts}


def fixed_rules() -> VerifyRules:
    """Rules fixed here, so the tests do not depend on files other engineers are editing."""
    return VerifyRules(
        opposites={"to the left of": "to the right of", "to the right of": "to the left of",
                   "above": "below", "below": "above"},
        symmetric=frozenset({"near", "next to"}),
        colors=frozenset({"red", "white", "brown", "black", "blue"}),
        unannotated_prone=frozenset({"sky", "shirt", "hand"}),
        unannotated_prone_source="test",
        template_suffixes={TEMPLATE: SUFFIX, "is_the_x_rel_the_y__object": "o"},
    )
