"""Drawing scenes from a pool so that their objects' concepts follow a target distribution.

A scene cannot be re-rendered with other objects, so a variant is a *subset* of the pool's scenes
whose objects, taken together, have the target's distribution in every block (shape, colour,
material, size; or the shape x colour joint). Finding the subset is a linear programme over one
variable x_s in [0, 1] per scene and the drawn object count y = sum_s n_s x_s:

    for every cell c of every block:  |sum_s count_s(c) x_s - t_c y| <= band t_c y + 1/2

(`band` a relative tolerance per cell; the half object is the rounding no integer count escapes),
either maximising the number of scenes (what the pool can reach at all) or, for a chosen number
of scenes, maximising a seeded random weight of the scenes (so the draw is one of many, and the
same for the same seed). A basic solution has at most as many fractional x_s as constraints; those
scenes are taken in decreasing x_s until the size is met. The draw is then measured, not trusted:
KL(achieved || target) of every block must be within `tolerance`, which a band of
sqrt(tolerance) guarantees before rounding (KL <= chi^2 <= band^2); when rounding breaks it the
band is halved and the programme solved again, and after that the draw is refused, with the
figures. Scenes with an object the target gives no weight (a concept outside its lists, or the
other half of a head/tail variant) are never drawn. HiGHS (through scipy) solves the programmes.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from contrastgen.errors import InputError
from contrastgen.ood.superclevr_targets import Target, kl_divergence

ROUNDING_SLACK = 0.5  # objects: the distance to the nearest integer count
TIGHTENINGS = 3  # times the band is halved before a draw is refused
REPAIR_STEPS = 200  # swaps tried after rounding
REPAIR_CHUNK = 20_000  # scenes scored at once while repairing
BISECTIONS = 6  # steps of the search for the largest reachable size
TIE_BREAK = 1e-3  # weight of a scene's seeded priority against an object of deviation


class Unreachable(InputError):
    """The pool holds no subset of the asked size within the tolerance of the target."""


@dataclass(frozen=True)
class Draw:
    """Chosen scenes and how close their objects come to the target."""

    scenes: tuple[str, ...]
    objects: int
    counts: dict[str, dict[str, int]]  # block -> cell label -> objects
    kl: dict[str, float]  # block -> KL(achieved || target), nats

    @property
    def max_kl(self) -> float:
        return max(self.kl.values(), default=0.0)


@dataclass(frozen=True)
class _Matrix:
    names: list[str]  # eligible scenes, in pool order
    counts: sparse.csr_matrix  # scene x cell
    objects: np.ndarray  # per scene
    weights: np.ndarray  # per cell, the target weight within its block
    blocks: list[tuple[int, int]]  # each block's cells, [start, end)


def _matrix(target: Target, names: Sequence[str], objects: Mapping[str, list[dict[str, Any]]]) -> _Matrix:
    cell_index = []
    offset = 0
    spans: list[tuple[int, int]] = []
    weights: list[float] = []
    for block in target.blocks:
        cell_index.append({cell: offset + i for i, cell in enumerate(block.values)})
        spans.append((offset, offset + len(block.values)))
        offset += len(block.values)
        weights += block.weights
    rows, cols, kept = [], [], []
    for name in names:
        cells = [cell_index[b].get(block.cell_of(obj)) for obj in objects[name] for b, block in enumerate(target.blocks)]
        if not cells or any(k is None or weights[k] <= 0 for k in cells):
            continue  # an object the target gives no weight: never drawn
        rows += [len(kept)] * len(cells)
        cols += cells
        kept.append(name)
    counts = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(kept), offset))
    n = np.array([len(objects[s]) for s in kept], dtype=float)
    return _Matrix(kept, counts, n, np.array(weights), spans)


def _solve(m: _Matrix, band: float, size: int | None, priority: np.ndarray | None) -> np.ndarray | None:
    """x (one value per eligible scene) of the programme, or None when it has no solution.

    Without a size: as many scenes as the band allows. With one: `size` scenes whose cell counts
    are closest to the target's (least total absolute deviation, d_c >= |n_c - t_c y|), ties
    going to the scenes of highest `priority`. Columns: x_1..x_s, y, d_1..d_k."""
    s, k = m.counts.shape
    t = m.weights
    counts_t = m.counts.T.tocsr()
    ident = sparse.identity(k, format="csr")
    no_d = sparse.csr_matrix((k, k))
    rows = [sparse.hstack([counts_t, sparse.csr_matrix(-(1 + band) * t[:, None]), no_d]),
            sparse.hstack([-counts_t, sparse.csr_matrix((1 - band) * t[:, None]), no_d])]
    b_ub = [np.full(2 * k, ROUNDING_SLACK)]
    if size is not None:
        rows += [sparse.hstack([counts_t, sparse.csr_matrix(-t[:, None]), -ident]),
                 sparse.hstack([-counts_t, sparse.csr_matrix(t[:, None]), -ident])]
        b_ub.append(np.zeros(2 * k))
    a_ub = sparse.vstack(rows).tocsr()
    eq_rows = [sparse.hstack([sparse.csr_matrix(m.objects[None, :]), sparse.csr_matrix(np.array([[-1.0]])),
                              sparse.csr_matrix((1, k))])]
    b_eq = [0.0]
    if size is None:
        c = np.concatenate([-np.ones(s), [0.0], np.zeros(k)])
    else:
        eq_rows.append(sparse.hstack([sparse.csr_matrix(np.ones((1, s))), sparse.csr_matrix((1, 1 + k))]))
        b_eq.append(float(size))
        gain = priority if priority is not None else np.ones(s)
        c = np.concatenate([-TIE_BREAK * gain, [0.0], np.ones(k)])
    bounds = [(0.0, 1.0)] * s + [(0.0, None)] * (1 + k)
    res = linprog(c, A_ub=a_ub, b_ub=np.concatenate(b_ub), A_eq=sparse.vstack(eq_rows).tocsr(),
                  b_eq=np.array(b_eq), bounds=bounds, method="highs")
    if res.status != 0:
        return None
    return np.asarray(res.x[:s])


def _block_kl(totals: np.ndarray, m: _Matrix) -> np.ndarray:
    """KL(achieved || target) of every block (columns) for each row of object counts (rows)."""
    out = np.zeros((totals.shape[0], len(m.blocks)))
    for b, (lo, hi) in enumerate(m.blocks):
        n = totals[:, lo:hi]
        total = n.sum(axis=1, keepdims=True)
        p = np.divide(n, total, out=np.zeros_like(n), where=total > 0)
        q = m.weights[lo:hi][None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(p > 0, p * np.log(p / q), 0.0)
        out[:, b] = np.maximum(terms.sum(axis=1), 0.0)
    return out


def _worst(totals: np.ndarray, m: _Matrix) -> np.ndarray:
    return _block_kl(totals, m).max(axis=1)


def _best_row(totals: np.ndarray, m: _Matrix, idx: np.ndarray, sign: float) -> tuple[int, float]:
    """Of the scenes `idx`, the one whose addition (sign 1) or removal (sign -1) leaves the lowest
    worst-block KL, and that KL; rows are scored in chunks to bound memory."""
    best, best_kl = -1, math.inf
    for lo in range(0, len(idx), REPAIR_CHUNK):
        chunk = idx[lo: lo + REPAIR_CHUNK]
        worst = _worst(totals[None, :] + sign * m.counts[chunk].toarray(), m)
        i = int(np.argmin(worst))
        if worst[i] < best_kl:
            best, best_kl = int(chunk[i]), float(worst[i])
    return best, best_kl


def _repair(m: _Matrix, x: np.ndarray, size: int, tolerance: float) -> np.ndarray:
    """`size` scenes from the programme's solution `x`: those fully in, then fractional ones by
    decreasing x; then, while the worst block's KL is above `tolerance`, the chosen scene whose
    removal helps most is swapped for the other scene whose addition helps most, for as long as a
    swap helps."""
    order = np.lexsort((np.arange(len(x)), -x))
    inside = np.zeros(len(x), dtype=bool)
    inside[order[:size]] = True
    totals = np.asarray(m.counts[np.flatnonzero(inside)].sum(axis=0)).ravel()
    for _ in range(REPAIR_STEPS):
        now = _worst(totals[None, :], m)[0]
        if now <= tolerance or inside.all():
            break
        r, _ = _best_row(totals, m, np.flatnonzero(inside), -1.0)
        base = totals - m.counts[r].toarray().ravel()
        a, after = _best_row(base, m, np.flatnonzero(~inside), 1.0)
        if after >= now:
            break
        inside[r], inside[a] = False, True
        totals = base + m.counts[a].toarray().ravel()
    return np.flatnonzero(inside)


def _measure(target: Target, m: _Matrix, chosen: np.ndarray) -> Draw:
    totals = np.asarray(m.counts[chosen].sum(axis=0)).ravel() if len(chosen) else np.zeros(m.counts.shape[1])
    counts: dict[str, dict[str, int]] = {}
    kl: dict[str, float] = {}
    offset = 0
    for block in target.blocks:
        cells = totals[offset: offset + len(block.values)]
        offset += len(block.values)
        counts[block.name] = {block.label(v): int(n) for v, n in zip(block.values, cells, strict=True)}
        kl[block.name] = kl_divergence([float(n) for n in cells], block.weights)
    names = tuple(m.names[i] for i in chosen)
    return Draw(names, int(m.objects[chosen].sum()) if len(chosen) else 0, counts, kl)


def _select(target: Target, m: _Matrix, size: int, tolerance: float, priority: np.ndarray | None) -> Draw | None:
    """The closest draw of `size` scenes the programme and the repair find, trying a tighter band
    when rounding leaves it outside `tolerance`; None when the programme has no solution."""
    band = math.sqrt(tolerance)
    best: Draw | None = None
    for _ in range(TIGHTENINGS + 1):
        x = _solve(m, band, size, priority)
        if x is None:
            break
        got = _measure(target, m, _repair(m, x, size, tolerance))
        if best is None or got.max_kl < best.max_kl:
            best = got
        if got.max_kl <= tolerance:
            break
        band /= 2
    return best


@dataclass(frozen=True)
class Reach:
    """What a pool reaches of a target: the largest draw found within the tolerance (empty when
    none), the closest draw tried (to say how far the pool falls short), and how many scenes have
    only concepts the target weighs."""

    best: Draw
    closest: Draw | None
    eligible: int

    def shortfall(self) -> str:
        if not self.eligible:
            return "no scene has only the variant's concepts"
        if self.closest is None:
            return f"its {self.eligible} eligible scenes admit no draw within the band"
        return f"closest KL {self.closest.max_kl:.4f} with {len(self.closest.scenes)} scenes"


def reachable(target: Target, names: Sequence[str], objects: Mapping[str, list[dict[str, Any]]],
              tolerance: float) -> Reach:
    """What the pool reaches of `target` within `tolerance`. The programme's largest fractional size, rounded
    down, is tried first, then 10% less at a time, then halves (a small draw of a many-celled block
    is further from its target, so smaller is not always closer); from the first size within the
    tolerance, a bisection up towards the smallest failed size above it."""
    m = _matrix(target, names, objects)
    empty = _measure(target, m, np.zeros(0, dtype=int))
    x = _solve(m, math.sqrt(tolerance), None, None) if m.names else None
    top = int(math.floor(x.sum() + 1e-6)) if x is not None else 0
    sizes = sorted({s for s in [int(top * (1 - 0.1 * k)) for k in range(6)] + [top >> j for j in range(1, 20)]
                    if s >= 1}, reverse=True)
    closest: Draw | None = None
    best, failed = None, top + 1
    for size in sizes:
        got = _select(target, m, size, tolerance, None)
        if got is not None and (closest is None or got.max_kl < closest.max_kl):
            closest = got
        if got is not None and got.max_kl <= tolerance:
            best = got
            break
        failed = size
    if best is None:
        return Reach(empty, closest, len(m.names))
    for _ in range(BISECTIONS):
        if failed - len(best.scenes) <= max(1, failed // 50):
            break
        middle = (len(best.scenes) + failed) // 2
        got = _select(target, m, middle, tolerance, None)
        if got is not None and got.max_kl <= tolerance:
            best = got
        else:
            failed = middle
    return Reach(best, closest, len(m.names))


def draw(target: Target, names: Sequence[str], objects: Mapping[str, list[dict[str, Any]]], size: int,
         tolerance: float, seed: str) -> Draw:
    """`size` scenes within `tolerance` of `target`, chosen by a programme seeded with `seed`;
    `Unreachable` (saying how close the pool comes) when there are none."""
    m = _matrix(target, names, objects)
    if len(m.names) < size:
        raise Unreachable(f"variant {target.variant}: {size} scenes asked for, but only {len(m.names)} of the "
                          f"{len(names)} in the pool have no object outside the variant's concepts")
    rng = random.Random(seed)
    priority = np.array([0.5 + 0.5 * rng.random() for _ in m.names])
    got = _select(target, m, size, tolerance, priority)
    if got is not None and got.max_kl <= tolerance and len(got.scenes) == size:
        return got
    closest = "no draw of that size satisfies the programme" if got is None else \
        f"the closest draw found has KL {got.max_kl:.4f}"
    raise Unreachable(f"variant {target.variant}: the pool ({len(names)} scenes) holds no {size} scenes whose "
                      f"objects are within KL {tolerance} of the target ({closest}); ask for fewer scenes, a larger "
                      "tolerance, or give a larger or more varied pool")
