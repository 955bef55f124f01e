"""NaturalBench's metrics over the two-image groups of a contrast set (`generate --groups`).

A group is a contrast pair's two questions, each asked of two images: cells 0 and 1 on the
record's image (the original and the perturbation), 2 and 3 on the second image, and the first
question's answer differs between the two. Following NaturalBench (Li et al., 2024):
- question accuracy: a question is right when it is right on both images (two per group);
- image accuracy: an image is right when both its questions are right (two per group);
- group accuracy: all four cells right.
A model that ignores the image answers a question the same on both images, so it scores no group;
where each answer is yes or no, always-"yes" scores 0% group accuracy. A group with a cell
without a prediction (a partial run) is left out, as `evaluate` leaves out a contrast set not
asked in full and as the lmms-eval task scores only complete groups; its missing cells are
counted. An empty answer is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from contrastgen.answers import is_right, normalize_answer
from contrastgen.records import ContrastSet

QUESTIONS_OF_GROUP = ((0, 2), (1, 3))  # (cell on the record's image, cell on the second)
IMAGES_OF_GROUP = ((0, 1), (2, 3))


def has_groups(sets: Iterable[ContrastSet]) -> bool:
    return any(p.group is not None for cs in sets for p in cs.perturbations)


def group_cells(sets: Iterable[ContrastSet]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(group id, kind, [(question id, normalised gold answer)] x 4) of every group, in file order
    (the reader checked each group's shape)."""
    return [(g.id, g.kind, [(c.question_id, normalize_answer(c.answer)) for c in g.cells])
            for cs in sets for p in cs.perturbations if (g := p.group) is not None]


def group_metrics(sets: Sequence[ContrastSet], preds: Mapping[str, str]) -> dict[str, Any]:
    """The three accuracies over every group, and per kind (a full `swap`, or `differs`)."""
    counts: dict[str, list[int]] = {}
    missing = 0
    for _, kind, cells in group_cells(sets):
        unasked = sum(qid not in preds for qid, _ in cells)
        if unasked:
            missing += unasked
            continue
        right = [is_right(preds[qid], gold) for qid, gold in cells]
        for c in (counts.setdefault("overall", [0, 0, 0, 0]), counts.setdefault(kind, [0, 0, 0, 0])):
            c[0] += 1
            c[1] += sum(right[a] and right[b] for a, b in QUESTIONS_OF_GROUP)
            c[2] += sum(right[a] and right[b] for a, b in IMAGES_OF_GROUP)
            c[3] += all(right)

    def shares(c: list[int]) -> dict[str, Any]:
        n = c[0]
        return {"groups": n, "question_accuracy": c[1] / (2 * n) if n else None,
                "image_accuracy": c[2] / (2 * n) if n else None, "group_accuracy": c[3] / n if n else None}

    overall = counts.pop("overall", [0, 0, 0, 0])
    return {"overall": shares(overall), "by_kind": {k: shares(c) for k, c in sorted(counts.items())},
            "missing_cells": missing}
