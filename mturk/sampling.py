"""Stratified sampling of images for crowd verification.

Why stratify by template: templates differ a lot in size (the paper's "which side" template has
ten times the pairs of the relation templates), so a simple random sample would verify the
big templates and leave the small ones with a handful of items, too few for a per-template
accuracy with a useful confidence interval. We allocate the sample to templates in proportion
to their number of images (largest-remainder rounding) after giving every template at least
one image when the sample is large enough, and then take one (original, perturbation) pair
per sampled image, as the paper did (553 images, one pair each).
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from contrastgen.errors import InputError


@dataclass(frozen=True)
class SampledPair:
    """One sampled image with the original question and one of its perturbations."""

    template: str
    image_id: str
    record: dict[str, Any]
    perturbation: dict[str, Any]


def allocate(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Split `total` across strata in proportion to `sizes` (Hamilton's largest remainder).

    Every stratum gets at least one unit when `total` allows it, so that small templates are
    represented; no stratum is given more than it has. Ties in remainders break by name so the
    allocation does not depend on dict order.
    """
    names = sorted(n for n, s in sizes.items() if s > 0)
    quota = dict.fromkeys(names, 0)
    if total <= 0 or not names:
        return quota
    if total >= len(names):
        for n in names:
            quota[n] = 1
    remaining = total - sum(quota.values())
    while remaining > 0:
        room = {n: sizes[n] - quota[n] for n in names if sizes[n] > quota[n]}
        if not room:
            break
        weight = sum(sizes[n] for n in room)
        exact = {n: remaining * sizes[n] / weight for n in room}
        give = {n: min(int(exact[n]), room[n]) for n in room}
        left = remaining - sum(give.values())
        by_remainder = sorted(room, key=lambda n: (-(exact[n] - int(exact[n])), n))
        for n in by_remainder:
            if left <= 0:
                break
            if give[n] < room[n]:
                give[n] += 1
                left -= 1
        for n, g in give.items():
            quota[n] += g
        given = sum(give.values())
        if given == 0:
            break
        remaining -= given
    return quota


def sample_pairs(records: list[dict[str, Any]], n_images: int, rng: random.Random) -> list[SampledPair]:
    """Sample `n_images` distinct images stratified by template; one pair per image.

    An image with questions of several templates is a candidate in each of them but is sampled
    at most once. A template that runs out of unused images passes its shortfall on to the
    others. Asking for more images than have perturbations is an error, not a silent shortfall,
    because the requester is about to pay for a sample of a particular size.
    """
    if n_images <= 0:
        raise InputError(f"--sample must be positive, got {n_images}")
    by_template: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for rec in records:
        by_template[rec["template"]][rec["image_id"]].append(rec)
    all_images = {img for imgs in by_template.values() for img in imgs}
    if n_images > len(all_images):
        raise InputError(f"--sample asks for {n_images} images but only {len(all_images)} images have perturbations")

    candidates: dict[str, list[str]] = {}
    for template in sorted(by_template):
        images = sorted(by_template[template])
        rng.shuffle(images)
        candidates[template] = images
    quota = allocate({t: len(c) for t, c in candidates.items()}, n_images)

    used: set[str] = set()
    chosen: list[tuple[str, str]] = []
    cursor = dict.fromkeys(candidates, 0)

    def take(template: str) -> bool:
        images = candidates[template]
        while cursor[template] < len(images):
            img = images[cursor[template]]
            cursor[template] += 1
            if img not in used:
                used.add(img)
                chosen.append((template, img))
                return True
        return False

    shortfall = 0
    for template in sorted(candidates):
        for _ in range(quota[template]):
            if not take(template):
                shortfall += 1
    while shortfall > 0:  # hand the shortfall round-robin to templates that still have images
        progressed = False
        for template in sorted(candidates):
            if shortfall > 0 and take(template):
                shortfall -= 1
                progressed = True
        if not progressed:  # pragma: no cover - excluded by the size check above
            break

    pairs = []
    for template, img in chosen:
        recs = sorted(by_template[template][img], key=lambda r: r["question_id"])
        rec = recs[rng.randrange(len(recs))]
        perts = sorted(rec["perturbations"], key=lambda p: p["question_id"])
        pert = perts[rng.randrange(len(perts))]
        pairs.append(SampledPair(template=template, image_id=img, record=rec, perturbation=pert))
    return pairs
