"""GQA-OOD: head and tail splits of GQA's imbalanced local question groups (Kervadec et al. 2021).

Questions are grouped by `groups.local` (e.g. "objects on walls"); the groups whose answers are
far from uniform are kept; within each, the answers rare for that group are the tail (the OOD
samples) and the rest the head. Two rules are offered because the authors' released code differs
from their paper:

- `paper` (default): keep a group when its normalised entropy is below `entropy_threshold` (0.9);
  an answer is tail when its count is at most alpha x the group's mean answer count.
- `released` (github.com/gqa-ood/GQA-OOD, code/build_gqa_ood.py): keep a group when its normalised
  entropy is at most the mean minus one standard deviation of all groups' entropies; an answer is
  tail when its count is strictly below alpha x the mean (the code's `(1 + 0.2)`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from contrastgen.datasets.base import Questions
from contrastgen.errors import InputError
from contrastgen.files.atomic import atomic_dir
from contrastgen.files.manifest import OOD_GQA, write_manifest
from contrastgen.jsonio import write_json
from contrastgen.ood.imbalance import (
    GroupSplit,
    answer_histograms,
    released_threshold,
    split_groups,
)

Rule = Literal["paper", "released"]
RULES: tuple[str, ...] = ("paper", "released")
STATS_FILE = "stats.json"
GROUPS_FILE = "groups.json"


@dataclass
class GqaOodConfig:
    alpha: float = 1.2
    entropy_threshold: float = 0.9
    rule: Rule = "paper"

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise InputError(f"unknown rule {self.rule!r}; expected one of {', '.join(RULES)}")
        if not self.alpha > 0:
            raise InputError(f"alpha must be positive, got {self.alpha}")
        if not 0 < self.entropy_threshold <= 1:
            raise InputError(f"entropy threshold must be in (0, 1], got {self.entropy_threshold}")


@dataclass
class GqaOodSplit:
    """The outcome of the construction: which groups were kept and which questions went where."""

    config: GqaOodConfig
    entropy_threshold_used: float
    groups: dict[str, GroupSplit]
    all_ids: list[str] = field(default_factory=list)
    head_ids: list[str] = field(default_factory=list)
    tail_ids: list[str] = field(default_factory=list)
    ungrouped: int = 0
    total: int = 0
    # (all, head, tail) where the ids are not held (`gqa_ood_stream`): the counts alone
    question_counts: tuple[int, int, int] | None = None

    def tails(self) -> dict[str, set[str]]:
        """Kept group -> its tail answers: what places a question in head or tail."""
        return {k: set(g.tail) for k, g in self.groups.items() if g.imbalanced}

    def stats(self) -> dict[str, Any]:
        kept = [g for g in self.groups.values() if g.imbalanced]
        n_all, n_head, n_tail = self.question_counts or (len(self.all_ids), len(self.head_ids), len(self.tail_ids))
        return {
            "benchmark": "gqa-ood",
            "format_version": 1,
            "rule": self.config.rule,
            "alpha": self.config.alpha,
            "entropy_threshold": self.entropy_threshold_used,
            "input": {
                "questions": self.total,
                "questions_without_local_group": self.ungrouped,
                "groups": len(self.groups),
                "single_answer_groups": sum(1 for g in self.groups.values() if len(g.counts) < 2),
            },
            "groups_kept": len(kept),
            "questions": {"all": n_all, "head": n_head, "tail": n_tail},
            "answers": {
                "head": sum(len(g.head) for g in kept),
                "tail": sum(len(g.tail) for g in kept),
            },
        }


def local_group(q: dict[str, Any]) -> str | None:
    groups = q.get("groups")
    if not isinstance(groups, dict):
        return None
    value = groups.get("local")
    return value if isinstance(value, str) and value else None


def select_groups(histograms: dict[str, Any], config: GqaOodConfig, *, total: int, ungrouped: int) -> GqaOodSplit:
    """The kept groups and their tail answers, from each local group's answer counts (by the
    config's rule); no question assigned yet."""
    if config.rule == "paper":
        threshold = config.entropy_threshold
        groups = split_groups(histograms, entropy_threshold=threshold, tail_factor=config.alpha,
                              strict_tail=False, strict_entropy=True)
    else:
        threshold = released_threshold(histograms)
        groups = split_groups(histograms, entropy_threshold=threshold, tail_factor=config.alpha,
                              strict_tail=True, strict_entropy=False)
    return GqaOodSplit(config, threshold, groups, ungrouped=ungrouped, total=total)


NOTHING_KEPT = ("no imbalanced question group found: nothing to write "
                "(too few questions per group, or a threshold that keeps nothing)")


def build_gqa_ood(questions: Questions, config: GqaOodConfig | None = None, *,
                  path: str | None = None) -> GqaOodSplit:
    """Select imbalanced local groups and split their questions into head and tail."""
    config = config or GqaOodConfig()
    pairs: list[tuple[str, str, str]] = []
    ungrouped = 0
    for qid, q in questions.items():
        answer = q.get("answer")
        if not isinstance(answer, str):
            raise InputError("question has no answer", path=path, record=f"question {qid}")
        group = local_group(q)
        if group is None:
            ungrouped += 1
            continue
        pairs.append((qid, group, answer))
    split = select_groups(answer_histograms((g, a) for _, g, a in pairs), config,
                          total=len(questions), ungrouped=ungrouped)
    tails = split.tails()
    for qid, group, answer in pairs:
        if group not in tails:
            continue
        split.all_ids.append(qid)
        (split.tail_ids if answer in tails[group] else split.head_ids).append(qid)
    return split


def write_gqa_ood(split: GqaOodSplit, questions: Questions, out_dir: str | os.PathLike[str]) -> Path:
    """Write all/head/tail in GQA's question format, the kept groups and the stats, atomically."""
    if not split.all_ids:
        raise InputError(NOTHING_KEPT)
    with atomic_dir(out_dir) as tmp:
        for name, ids in (("all", split.all_ids), ("head", split.head_ids), ("tail", split.tail_ids)):
            write_json(tmp / f"{name}.json", {qid: questions[qid] for qid in ids})
        write_json(tmp / GROUPS_FILE,
                   {k: g.to_json() for k, g in split.groups.items() if g.imbalanced}, indent=True)
        write_json(tmp / STATS_FILE, split.stats(), indent=True)
        write_manifest(tmp, OOD_GQA, "contrastgen ood gqa")
    return Path(out_dir)
