"""The GQA- and LXMERT-format views of contrast sets, serialised entry by entry.

Why entry by entry: at GQA scale the views hold hundreds of thousands of questions, in four views
(original, augmented, k = 1, k = 3) and two formats. Serialising each question once, in the worker
process that produced it, and joining bytes in the parent replaced a serial phase that serialised
every original eight times (a fifth of a 1M-question run). The joined bytes are exactly what
orjson writes for the whole dict or list with sorted keys; a test holds the two equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import orjson

from contrastgen.program import semantic_str

_OPTS = orjson.OPT_SORT_KEYS


class ViewEntry(NamedTuple):
    """One question of the views: an original (rank 0) or a perturbation (its rank)."""

    key: str  # question id
    rank: int
    gqa: bytes  # the GQA-format record, sorted keys, no newline
    lxmert: bytes  # the LXMERT-format item, sorted keys, no newline


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


def lxmert_item(qid: str, q: dict[str, Any]) -> dict[str, Any]:
    """One question in LXMERT's input format."""
    return {"img_id": q["imageId"], "label": {q["answer"]: 1.0}, "question_id": qid, "sent": q["question"]}


def gqa_json(q: dict[str, Any]) -> bytes:
    """A GQA-format record as the views hold it (sorted keys, no newline)."""
    return orjson.dumps(q, option=_OPTS)


def _entry(qid: str, rank: int, q: dict[str, Any]) -> ViewEntry:
    return ViewEntry(qid, rank, gqa_json(q), orjson.dumps(lxmert_item(qid, q), option=_OPTS))


def view_entries(qid: str, original: dict[str, Any], records: Iterable[dict[str, Any]], *,
                 original_json: bytes | None = None) -> list[ViewEntry]:
    """The original question and every perturbation in `records` (its contrast_sets.jsonl records).

    `original_json`, if given, is `gqa_json(original)`, computed earlier (by the packing loader).
    """
    gqa = original_json if original_json is not None else gqa_json(original)
    out = [ViewEntry(qid, 0, gqa, orjson.dumps(lxmert_item(qid, original), option=_OPTS))]
    for rec in records:
        for p in rec["perturbations"]:
            out.append(_entry(p["question_id"], p["rank"], perturbation_as_gqa(rec, p, original)))
    return out


def view_names(max_k: int) -> dict[str, int | None]:
    """View name -> the largest rank it holds (0: originals only; None: every perturbation)."""
    names: dict[str, int | None] = {"original": 0, "augmented": None}
    for k in (1, 3):
        if k < max_k:
            names[f"augmented_k{k}"] = k
    return names


def select(entries: list[ViewEntry], max_rank: int | None) -> list[ViewEntry]:
    return entries if max_rank is None else [e for e in entries if e.rank <= max_rank]


def json_object(entries: list[ViewEntry]) -> Iterator[bytes]:
    """`{"id": record, ...}` plus a newline, from entries sorted by key."""
    yield b"{"
    for i, e in enumerate(entries):
        if i:
            yield b","
        yield orjson.dumps(e.key)
        yield b":"
        yield e.gqa
    yield b"}\n"


def json_list(entries: list[ViewEntry]) -> Iterator[bytes]:
    """`[item, ...]` plus a newline: the LXMERT file, in the order of the entries."""
    yield b"["
    for i, e in enumerate(entries):
        if i:
            yield b","
        yield e.lxmert
    yield b"]\n"
