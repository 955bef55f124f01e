"""Hand-built contrast sets whose metrics are computed by hand in the tests."""

from __future__ import annotations

from typing import Any


def pert(qid: str, rank: int, answer: str, kind: str = "object") -> dict[str, Any]:
    return {"question_id": qid, "question": f"perturbed {qid}?", "answer": answer, "rank": rank,
            "change": {"kind": kind, "slot": "x", "from": "a", "to": "b"},
            "evidence": {"query": {"op": "exists_any"}, "facts": [], "answer": answer}}


def contrast_set(qid: str, template: str, answer: str,
                 perts: list[tuple[int, str, str]]) -> dict[str, Any]:
    """perts: (rank, answer, kind)."""
    return {"question_id": qid, "image_id": f"img{qid}", "template": template,
            "question": f"original {qid}?", "answer": answer, "slots": {},
            "perturbations": [pert(f"{qid}_c{r}", r, a, k) for r, a, k in perts]}


def records() -> list[dict[str, Any]]:
    """Three sets: A (yes/no, ranks 1-3), B (colour, ranks 1-2), C (yes/no, rank 1)."""
    return [
        contrast_set("A", "near", "yes", [(1, "no", "object"), (2, "no", "object"),
                                          (3, "no", "relation")]),
        contrast_set("B", "color", "red", [(1, "blue", "attribute"), (2, "green", "attribute")]),
        contrast_set("C", "near", "no", [(1, "yes", "object")]),
    ]


# A model that gets A's original and c1, c3 right but c2 wrong; B all right; C's original wrong.
MODEL = {"A": "Yes.", "A_c1": "no", "A_c2": "yes", "A_c3": "NO",
         "B": "the red", "B_c1": "Blue", "B_c2": " green ",
         "C": "yes", "C_c1": "yes"}
