"""Group imbalance and head/tail selection, shared by GQA-OOD and VQA-VS.

Both benchmarks follow the same three steps (Kervadec et al. 2021, Sec. 3; Si et al. 2022, Sec. 3.4):
group questions, keep the groups whose answer distribution is far from uniform (normalised Shannon
entropy below a threshold), and call an answer *tail* when it is rare relative to the group's mean
answer count. They differ in the comparison (GQA-OOD's paper: count <= alpha x mean; VQA-VS and the
GQA-OOD authors' released code: count < 1.2 x mean), so the comparison is a parameter here rather
than two copies of the algorithm.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np


def normalized_entropy(counts: Iterable[int]) -> float | None:
    """Shannon entropy of the answer distribution divided by log(number of answers).

    1.0 is a uniform distribution, 0.0 a single dominant answer. A group with one answer has no
    imbalance to measure (0 / log 1), so the result is None rather than an arbitrary number.
    """
    c = [x for x in counts if x > 0]
    if len(c) < 2:
        return None
    total = float(sum(c))
    # Plain floats: groups are small and numerous (tens of thousands), numpy's overhead dominates.
    return -math.fsum((x / total) * math.log(x / total) for x in c) / math.log(len(c))


def released_normalized_entropy(counts: Iterable[int]) -> float:
    """The GQA-OOD release's `n_entropy`, reproduced exactly: -sum p log(p + 1e-9) / log(d), and
    1.0 for a single-answer group (its code divides that group's entropy by itself), so such groups
    still weigh in the mean and standard deviation that set the released threshold."""
    c = np.asarray([x for x in counts if x > 0], dtype=float)
    if c.size == 0:
        return 1.0
    p = c / c.sum()
    e = float(-(p * np.log(p + 1e-9)).sum())
    return e / math.log(c.size) if c.size > 1 else 1.0


def tail_answers(counts: Mapping[str, int], factor: float, *, strict: bool) -> list[str]:
    """Answers whose count is at most (`strict`: below) `factor` times the group's mean count."""
    if not counts:
        return []
    threshold = factor * (sum(counts.values()) / len(counts))
    if strict:
        return sorted(a for a, n in counts.items() if n < threshold)
    # A tolerance keeps "count == alpha x mean" in the tail despite floating-point rounding.
    return sorted(a for a, n in counts.items() if n <= threshold * (1 + 1e-12))


@dataclass
class GroupSplit:
    """One group's answer histogram and what the selection made of it."""

    key: str
    counts: dict[str, int]
    entropy: float | None
    imbalanced: bool
    tail: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(self.counts.values())

    @property
    def head(self) -> list[str]:
        tail = set(self.tail)
        return sorted(a for a in self.counts if a not in tail)

    def to_json(self) -> dict:
        return {"key": self.key, "counts": self.counts, "entropy": self.entropy,
                "imbalanced": self.imbalanced, "tail": self.tail}


def answer_histograms(pairs: Iterable[tuple[str, str]]) -> dict[str, Counter]:
    """Group key -> Counter of answers, from (group key, answer) pairs."""
    groups: dict[str, Counter] = {}
    for key, answer in pairs:
        groups.setdefault(key, Counter())[answer] += 1
    return groups


def split_groups(histograms: Mapping[str, Mapping[str, int]], *, entropy_threshold: float,
                 tail_factor: float, strict_tail: bool,
                 strict_entropy: bool = True) -> dict[str, GroupSplit]:
    """Select imbalanced groups and their tail answers (the paper rule used by both benchmarks).

    A group is imbalanced when its normalised entropy is below `entropy_threshold` (at most, when
    not `strict_entropy`); single-answer groups are never kept.
    """
    out: dict[str, GroupSplit] = {}
    for key in sorted(histograms):
        counts = dict(sorted(histograms[key].items()))
        ent = normalized_entropy(counts.values())
        kept = ent is not None and (ent < entropy_threshold if strict_entropy else ent <= entropy_threshold)
        tail = tail_answers(counts, tail_factor, strict=strict_tail) if kept else []
        out[key] = GroupSplit(key, counts, ent, kept, tail)
    return out


def released_threshold(histograms: Mapping[str, Mapping[str, int]]) -> float:
    """Mean minus one (population) standard deviation of all groups' released entropies."""
    values = np.asarray([released_normalized_entropy(h.values()) for h in histograms.values()])
    if values.size == 0:
        return 0.0
    return float(values.mean() - values.std())
