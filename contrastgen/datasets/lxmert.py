"""LXMERT's input format: one item per question, `{"img_id", "label", "question_id", "sent"}`."""

from __future__ import annotations

from typing import Any


def lxmert_item(qid: str, q: dict[str, Any]) -> dict[str, Any]:
    """One GQA-format question as an LXMERT item: its answer as the only label, or no label for
    a question without one (as LXMERT's own test items have)."""
    label = {q["answer"]: 1.0} if isinstance(q.get("answer"), str) else {}
    return {"img_id": q["imageId"], "label": label, "question_id": qid, "sent": q["question"]}
