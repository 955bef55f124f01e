"""NegCLIP's hard negative images drawn without listing every row that shares a noun: the same rows
as drawing from the sorted list of them, on rows where common nouns are shared by most of the file,
rare ones by a few (so both of `random.sample`'s ways, a small population copied and a large one
indexed, are taken), and a row says one noun, two, or one twice."""

from __future__ import annotations

import random

from contrastgen.export.negclip import hard_negative_images


def listed(rows: list[tuple[str, list[str]]], *, seed: int = 0, k: int = 3) -> list[list[int]]:
    """The rule with the sharing rows listed for each row (quadratic, but plainly the rule)."""
    by_noun: dict[str, list[int]] = {}
    for i, (_, nouns) in enumerate(rows):
        for noun in dict.fromkeys(nouns):
            by_noun.setdefault(noun, []).append(i)
    out = []
    for i, (image, nouns) in enumerate(rows):
        rng = random.Random(f"{seed}:{i}")
        sharing = sorted({j for n in nouns for j in by_noun[n] if rows[j][0] != image})
        picked = rng.sample(sharing, min(k, len(sharing)))
        start = rng.randrange(len(rows))
        for step in range(len(rows)):
            if len(picked) >= k:
                break
            j = (start + step) % len(rows)
            if rows[j][0] != image and j not in picked:
                picked.append(j)
        out.append(picked)
    return out


def _rows(n: int, seed: int) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    common, rare = ["man", "tree", "car"], [f"noun{i}" for i in range(200)]
    rows, image = [], 0
    for _ in range(n):
        image += rng.random() < 0.4  # an image's captions are neighbours, several to an image
        nouns = [rng.choice(common) if rng.random() < 0.5 else rng.choice(rare) for _ in range(rng.choice((1, 2, 2)))]
        rows.append((f"img{image}", nouns))
    return rows


def test_the_drawn_rows_are_those_of_the_listed_rule():
    for seed in range(3):
        rows = _rows(600, seed)
        drawn = hard_negative_images(rows, seed=seed)
        assert drawn == listed(rows, seed=seed)
        assert all(len(p) == 3 for p in drawn)
    shared_by_few = [r for r in _rows(600, 0) if all(n.startswith("noun") for n in r[1])]
    assert shared_by_few  # rows whose population is small enough to be copied whole


def test_a_row_whose_nouns_only_its_own_image_says_is_filled_from_other_images():
    rows = [("a", ["cat"]), ("a", ["cat", "dog"]), ("b", ["man"]), ("c", ["man", "tree"]), ("d", ["tree"])]
    drawn = hard_negative_images(rows, seed=4)
    assert drawn == listed(rows, seed=4)
    assert all(rows[j][0] != "a" for j in drawn[0] + drawn[1])
