"""A found group, written into its perturbation's entry of contrast_sets.jsonl (`group`).

Why on the perturbation: a group is the pair (original, perturbation) seen on a second image, so
it belongs to the pair; readers that do not know the field skip it, and a run without `--groups`
writes no such field, so its bytes are those of a run that never heard of groups.

The four cells, in NaturalBench's order (question 0 and 1 on image 0 and 1):
    (Q, I)   the original           (Q', I)  the perturbation       -- already in the record
    (Q, J)   `<pair id>_gq`         (Q', J)  `<pair id>_gp`         -- proven here: program, evidence
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable
from typing import Any, Protocol

from contrastgen.answers import normalize_answer
from contrastgen.groups.search import DIFFERS, SWAP, GroupFinder, ProvenCell
from contrastgen.scene.index import SceneIndex

GROUP_SUFFIX, ORIGINAL_CELL, PERTURBED_CELL = "_g", "_gq", "_gp"
PAIRS, FOUND = "pairs", "found"  # counter keys beside the kinds and the reasons


class HasScene(Protocol):
    """Where an image's scene index is (`families.gqa_image_work.ImageWork`): made when first asked."""

    @property
    def scene(self) -> SceneIndex | None: ...


def add_groups(records: Iterable[dict[str, Any]], work: HasScene, finder: GroupFinder, seed: int,
               counts: Counter) -> None:
    """Look for a group for every contrast pair of `records` (one image's) whose two questions
    have programs, and add each one found to its perturbation (`group`). `counts` gets the pairs,
    the groups by kind and the reasons a candidate or a pair was turned down. The image's scene is
    asked only for a record with such a pair: an image whose questions the engine answered
    without it is not indexed for nothing."""
    for rec in records:
        semantic = rec.get("semantic")
        pairs = [p for p in rec["perturbations"] if p.get("kind") == "contrast" and isinstance(p.get("semantic"), list)]
        if not isinstance(semantic, list) or not semantic or not pairs:
            continue
        scene = work.scene
        if scene is None:
            continue
        counts[PAIRS] += len(pairs)
        original = finder.original(semantic, _normalized(rec.get("answer")), scene, counts)
        if original is None:
            continue
        for p in pairs:
            found = finder.find(original, p["semantic"], _normalized(p["answer"]), seed, counts)
            if found is not None:
                kind, image, on_q, on_p = found
                counts[kind] += 1
                counts[FOUND] += 1
                p["group"] = group_entry(rec, p, kind, image, on_q, on_p)


def _normalized(answer: Any) -> str:
    """`normalize_answer`, remembered for words: a run's answers are a few thousand words, asked
    for every pair (two regular expressions each)."""
    return _normalized_word(answer) if type(answer) is str else normalize_answer(answer)


@functools.lru_cache(maxsize=1 << 12)
def _normalized_word(answer: str) -> str:
    return normalize_answer(answer)


def group_entry(rec: dict[str, Any], p: dict[str, Any], kind: str, image: str, on_q: ProvenCell,
                on_p: ProvenCell) -> dict[str, Any]:
    pid = p["question_id"]
    return {"id": pid + GROUP_SUFFIX, "kind": kind, "images": [rec["image_id"], image],
            "cells": [
                {"question_id": rec["question_id"], "image_id": rec["image_id"], "question": rec["question"],
                 "answer": rec["answer"]},
                {"question_id": pid, "image_id": rec["image_id"], "question": p["question"], "answer": p["answer"]},
                _cell(pid + ORIGINAL_CELL, image, rec["question"], on_q),
                _cell(pid + PERTURBED_CELL, image, p["question"], on_p)]}


def _cell(qid: str, image: str, question: str, cell: ProvenCell) -> dict[str, Any]:
    return {"question_id": qid, "image_id": image, "question": question, "answer": cell.answer,
            "semantic": cell.semantic, "evidence": cell.evidence}


def group_stats(counts: Counter, reasons: Iterable[str]) -> dict[str, Any]:
    """The stats' `groups` entry: pairs, groups by kind, and the reasons counted."""
    return {"pairs": counts[PAIRS], "grouped": counts[FOUND], "swap": counts[SWAP], "differs": counts[DIFFERS],
            "reasons": {r: counts[r] for r in reasons if counts[r]}}
