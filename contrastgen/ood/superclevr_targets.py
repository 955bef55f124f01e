"""The concept distribution each Super-CLEVR variant is drawn to (Li et al. 2023, section 3.3).

A target is a few *blocks*, each a distribution over the values of one object attribute (or of a
pair): the paper changes "the distribution of shapes, colors and materials while the distribution
of size is kept fixed", so every variant has a size block too, flat as in the default data.

- bal, slt, long: concept i of a list of n weighs a^-(i+1), normalised (a = 1, 1.3, 2.0); a shape
  weighs a^-(k+1) a^-(j+1) (k its category's place among the five, j its place in the category),
  normalised once over the 21, as the authors' generator computes it. The lists and their order are rule data
  (rules/ood/superclevr_variants.json, from the release's properties file).
- head, tail, oppo (test only), from long's distribution ranked by weight, ties in list order:
  head is flat over the first ceil(n/2) concepts, tail flat over the last ceil(n/2) (with n odd the
  middle concept is in both, as the authors' code makes them), oppo gives the concept of rank r
  the weight of rank n-1-r.
- co-0, co-1, co-2: shapes flat, colours drawn from the shape's row of the co-distribution matrix
  M (21 x 8): flat in co-0; in co-1 a shape's row is the colour distribution (a = co_a) rotated by
  the shape's place in its category (shapes of one category differ, categories share rows); in
  co-2 by its category's place (a category shares one row, categories differ). Their target is
  the shape x colour joint, (1/21) M[s, c]; materials flat.
Where the authors' code ranks ties by numpy's argsort (whose tie order varies with the numpy
version and the CPU), ranks here break ties by list order, so the head of the 21 shapes ends with
truck; docs/ood.md says so.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import orjson

from contrastgen.errors import InputError
from contrastgen.resources import rules_resource

DISTRIBUTION_VARIANTS = ("bal", "slt", "long", "head", "tail", "oppo")
COMPOSITION_VARIANTS = ("co-0", "co-1", "co-2")
DRAWN_VARIANTS = DISTRIBUTION_VARIANTS + COMPOSITION_VARIANTS
TEST_ONLY = ("head", "tail", "oppo")


@dataclass(frozen=True)
class Block:
    """A target distribution over the values of `attributes` (one attribute, or a pair)."""

    attributes: tuple[str, ...]
    values: tuple[tuple[str, ...], ...]  # one per cell: the attributes' values
    weights: tuple[float, ...]  # sums to 1

    @property
    def name(self) -> str:
        return " x ".join(self.attributes)

    def cell_of(self, obj: dict[str, Any]) -> tuple[str, ...]:
        return tuple(str(obj.get(a)) for a in self.attributes)

    def label(self, cell: tuple[str, ...]) -> str:
        return " ".join(cell)


@dataclass(frozen=True)
class Target:
    variant: str
    blocks: tuple[Block, ...]
    test_only: bool


@functools.cache
def _rules() -> dict[str, Any]:
    return orjson.loads(rules_resource("ood", "superclevr_variants.json").read_bytes())


def shape_categories() -> dict[str, tuple[str, ...]]:
    return {k: tuple(v) for k, v in _rules()["shapes"].items()}


def concept_lists() -> dict[str, tuple[str, ...]]:
    """Each attribute's values in the generator's order (shapes category by category)."""
    r = _rules()
    return {"shape": tuple(s for shapes in r["shapes"].values() for s in shapes), "color": tuple(r["colors"]),
            "material": tuple(r["materials"]), "size": tuple(r["sizes"])}


def long_tail(n: int, a: float) -> list[float]:
    """d_i = a^-(i+1), normalised: the paper's d_i = a^-i up to the normalisation."""
    raw = [a ** -(i + 1) for i in range(n)]
    total = sum(raw)
    return [w / total for w in raw]


def _shape_weights(a: float) -> list[float]:
    """Category weight a^-(k+1) times the shape's a^-(j+1) within its category, normalised once
    over all shapes (the authors' generate_shape_dist normalises neither factor on its own, so
    car's first shape weighs exactly a^4 times bicycle's first)."""
    cats = list(shape_categories().values())
    raw = [a ** -(k + 1) * a ** -(j + 1) for k, shapes in enumerate(cats) for j in range(len(shapes))]
    total = sum(raw)
    return [w / total for w in raw]


def _flat(n: int) -> list[float]:
    return [1.0 / n] * n


def _rearranged(weights: list[float], how: str) -> list[float]:
    """head, tail or oppo of a distribution: by rank (weight descending, ties in list order)."""
    n = len(weights)
    rank = sorted(range(n), key=lambda i: (-weights[i], i))
    half = math.ceil(n / 2)
    out = [0.0] * n
    if how == "oppo":
        for r, i in enumerate(rank):
            out[i] = weights[rank[n - 1 - r]]
        return out
    chosen = rank[:half] if how == "head" else rank[n - half:]
    for i in chosen:
        out[i] = 1.0 / half
    return out


def _block(attribute: str, weights: list[float]) -> Block:
    values = concept_lists()[attribute]
    return Block((attribute,), tuple((v,) for v in values), tuple(weights))


def _distribution_target(variant: str) -> Target:
    a_of = _rules()["tail_a"]
    lists = concept_lists()
    base = "long" if variant in TEST_ONLY else variant
    a = float(a_of[base])
    weights = {"shape": _shape_weights(a), "color": long_tail(len(lists["color"]), a),
               "material": long_tail(len(lists["material"]), a)}
    if variant in TEST_ONLY:
        weights = {k: _rearranged(w, variant) for k, w in weights.items()}
    blocks = [_block(k, w) for k, w in weights.items()] + [_block("size", _flat(len(lists["size"])))]
    return Target(variant, tuple(blocks), variant in TEST_ONLY)


def co_matrix(variant: str) -> dict[str, list[float]]:
    """The co-distribution matrix M: shape -> its colours' probabilities (a row sums to 1)."""
    colors = concept_lists()["color"]
    palette = long_tail(len(colors), float(_rules()["co_a"]))
    rows: dict[str, list[float]] = {}
    for k, shapes in enumerate(shape_categories().values()):
        for j, shape in enumerate(shapes):
            if variant == "co-0":
                rows[shape] = _flat(len(colors))
            else:
                turn = j if variant == "co-1" else k
                rows[shape] = [palette[(turn + c) % len(colors)] for c in range(len(colors))]
    return rows


def _composition_target(variant: str) -> Target:
    lists = concept_lists()
    m = co_matrix(variant)
    shapes = lists["shape"]
    cells = tuple((s, c) for s in shapes for c in lists["color"])
    joint = tuple(m[s][ci] / len(shapes) for s in shapes for ci in range(len(lists["color"])))
    blocks = (Block(("shape", "color"), cells, joint), _block("material", _flat(len(lists["material"]))),
              _block("size", _flat(len(lists["size"]))))
    return Target(variant, blocks, False)


def target(variant: str) -> Target:
    """The target of a drawn variant (bal, slt, long, head, tail, oppo, co-0, co-1, co-2)."""
    if variant in DISTRIBUTION_VARIANTS:
        return _distribution_target(variant)
    if variant in COMPOSITION_VARIANTS:
        return _composition_target(variant)
    raise InputError(f"no drawn Super-CLEVR variant {variant!r}; expected one of {', '.join(DRAWN_VARIANTS)}")


def kl_divergence(counts: list[float], weights: tuple[float, ...]) -> float:
    """KL(achieved || target) in nats, achieved = counts normalised; infinite when an achieved
    cell has no target weight, 0 for no counts."""
    total = sum(counts)
    if total <= 0:
        return 0.0
    kl = 0.0
    for n, q in zip(counts, weights, strict=True):
        if n <= 0:
            continue
        if q <= 0:
            return math.inf
        p = n / total
        kl += p * math.log(p / q)
    return max(kl, 0.0)
