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
from dataclasses import replace
from typing import Any, Protocol

from contrastgen.answers import normalize_answer
from contrastgen.groups.search import DIFFERS, SWAP, GroupFinder, ProvenCell
from contrastgen.perturb import PerturbResult
from contrastgen.records import Group, GroupCell, Perturbation
from contrastgen.scene.index import SceneIndex

GROUP_SUFFIX, ORIGINAL_CELL, PERTURBED_CELL = "_g", "_gq", "_gp"
PAIRS, FOUND = "pairs", "found"  # counter keys beside the kinds and the reasons


class HasScene(Protocol):
    """Where an image's scene index is (`families.gqa_image_work.ImageWork`): made when first asked."""

    @property
    def scene(self) -> SceneIndex | None: ...


def add_groups(results: Iterable[PerturbResult], work: HasScene, finder: GroupFinder, seed: int,
               counts: Counter) -> None:
    """Look for a group for every contrast pair of `results` (one image's) whose two questions
    have programs, and give each one found to its perturbation (`group`). `counts` gets the pairs,
    the groups by kind and the reasons a candidate or a pair was turned down. The image's scene is
    asked only for a result with such a pair: an image whose questions the engine answered
    without it is not indexed for nothing."""
    for res in results:
        semantic = res.program
        pairs = [i for i, p in enumerate(res.perturbations)
                 if not p.invariance and isinstance(p.program.get("semantic"), list)]
        if not isinstance(semantic, list) or not semantic or not pairs:
            continue
        scene = work.scene
        if scene is None:
            continue
        counts[PAIRS] += len(pairs)
        original = finder.original(semantic, _normalized(res.answer), scene, counts)
        if original is None:
            continue
        for i in pairs:
            p = res.perturbations[i]
            found = finder.find(original, p.program["semantic"], _normalized(p.answer), seed, counts)
            if found is not None:
                kind, image, on_q, on_p = found
                counts[kind] += 1
                counts[FOUND] += 1
                res.perturbations[i] = replace(p, group=group_entry(res, p, kind, image, on_q, on_p))


def _normalized(answer: Any) -> str:
    """`normalize_answer`, remembered for words: a run's answers are a few thousand words, asked
    for every pair (two regular expressions each)."""
    return _normalized_word(answer) if type(answer) is str else normalize_answer(answer)


@functools.lru_cache(maxsize=1 << 12)
def _normalized_word(answer: str) -> str:
    return normalize_answer(answer)


def pair_cells(res: PerturbResult, p: Perturbation) -> tuple[GroupCell, GroupCell]:
    """A group's first two cells: the pair itself, on the record's image (the record proves them)."""
    return (GroupCell(res.question_id, res.image_id, res.question, res.answer),
            GroupCell(p.question_id, res.image_id, p.question, p.answer))


def group_entry(res: PerturbResult, p: Perturbation, kind: str, image: str, on_q: ProvenCell,
                on_p: ProvenCell) -> Group:
    pid = p.question_id
    return Group(id=pid + GROUP_SUFFIX, kind=kind, images=(res.image_id, image),
                 cells=(*pair_cells(res, p), _cell(pid + ORIGINAL_CELL, image, res.question, on_q),
                        _cell(pid + PERTURBED_CELL, image, p.question, on_p)))


def _cell(qid: str, image: str, question: str, cell: ProvenCell) -> GroupCell:
    return GroupCell(qid, image, question, cell.answer, {"semantic": cell.semantic}, cell.evidence)


def group_stats(counts: Counter, reasons: Iterable[str]) -> dict[str, Any]:
    """The stats' `groups` entry: pairs, groups by kind, and the reasons counted."""
    return {"pairs": counts[PAIRS], "grouped": counts[FOUND], "swap": counts[SWAP], "differs": counts[DIFFERS],
            "reasons": {r: counts[r] for r in reasons if counts[r]}}
