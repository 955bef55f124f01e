"""One VQA-VS shortcut's groups, counted and split from columns instead of dictionaries.

Why: a combined concept (KW+KO, QT+KW+KO) is nearly unique per question on varied data, so a
dictionary of groups, or of (group, answer) counts, grows with the input: about 2.9 GiB for 5
million questions. Here a group is a 128-bit hash of its concept (`concept_key`), one column
entry per sample, spilled to disk by the labelling pass. Sorting the column gives each sample
its group's ordinal, and the answer counts per group come from one more sort: numpy arrays of a
few bytes per sample, freed shortcut by shortcut. Only the kept (imbalanced) groups become
Python objects, and their concept strings are read back from one sample each.

Exact where the output depends on it: a numpy estimate of each group's entropy only picks the
groups worth a look (those within 1e-9 of the threshold or under it); whether a group is kept,
the entropy written for it and its tail answers come from `imbalance`'s own functions on its
exact counts, as `split_groups` computes them. Two concepts share a key with probability about
n² / 2^129 (1e-24 for 22 million distinct concepts).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from contrastgen.ood.imbalance import GroupSplit, normalized_entropy, tail_answers

KEY_BYTES = 16
UNLABELLED = bytes(KEY_BYTES)  # the key of a sample without a concept for the shortcut
_NEAR = 1e-9  # how far above the threshold a numpy estimate may be and still be checked exactly


def concept_key(concept: str | None) -> bytes:
    """A concept's 16-byte key; `UNLABELLED` for none (a concept whose hash is all zeros, a
    2^-128 chance, gets its last bit set)."""
    if concept is None:
        return UNLABELLED
    key = hashlib.blake2b(concept.encode("utf-8"), digest_size=KEY_BYTES).digest()
    return key if key != UNLABELLED else key[:-1] + b"\x01"


@dataclass
class ColumnSplit:
    """A shortcut's groups: how many, the kept ones (by ordinal, with the row of a sample in
    each), and each sample's place."""

    groups: int
    unlabelled: int
    kept: dict[int, GroupSplit] = field(default_factory=dict)  # key: "" until the caller names it
    sample_of: dict[int, int] = field(default_factory=dict)  # kept group ordinal -> a row in it
    head: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    tail: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


def split_column(keys: np.ndarray, answers: np.ndarray, answer_names: list[str], *, entropy_threshold: float,
                 tail_factor: float) -> ColumnSplit:
    """Group the samples by `keys` (dtype V16, one per sample), count `answers` (numbers into
    `answer_names`) per group, and keep and split the groups as `split_groups` does (strict
    entropy, strict tail)."""
    n = len(keys)
    words = keys.view(np.uint64).reshape(n, 2)
    labelled = np.flatnonzero((words[:, 0] | words[:, 1]) != 0)
    out = ColumnSplit(0, n - len(labelled), head=np.zeros(n, dtype=bool), tail=np.zeros(n, dtype=bool))
    if not len(labelled):
        return out
    order = labelled[np.argsort(keys[labelled], kind="stable")]
    ordered = keys[order]
    opens = np.empty(len(order), dtype=bool)
    opens[0] = True
    opens[1:] = ordered[1:] != ordered[:-1]
    del ordered
    group_sorted = np.cumsum(opens) - 1
    out.groups = int(group_sorted[-1]) + 1
    first_row = order[opens]  # stable sort: the group's first sample in input order
    n_answers = len(answer_names)
    pairs, counts = np.unique(group_sorted * n_answers + answers[order], return_counts=True)
    group_of = np.full(n, -1, dtype=np.int64)
    group_of[order] = group_sorted
    del order, group_sorted, opens
    pair_group, pair_answer = np.divmod(pairs, n_answers)
    answers_in = np.bincount(pair_group, minlength=out.groups)
    starts = np.concatenate(([0], np.cumsum(answers_in)[:-1]))
    p = counts / np.bincount(pair_group, weights=counts, minlength=out.groups)[pair_group]
    estimate = -np.add.reduceat(p * np.log(p), starts) / np.log(np.maximum(answers_in, 2))
    number = {a: i for i, a in enumerate(answer_names)}
    tail_pairs: list[int] = []
    for g in np.flatnonzero((answers_in >= 2) & (estimate < entropy_threshold + _NEAR)).tolist():
        start, stop = int(starts[g]), int(starts[g] + answers_in[g])
        hist = dict(sorted((answer_names[a], c) for a, c in zip(pair_answer[start:stop].tolist(),
                                                                 counts[start:stop].tolist(), strict=True)))
        entropy = normalized_entropy(hist.values())
        if entropy is None or not entropy < entropy_threshold:
            continue
        tail = tail_answers(hist, tail_factor, strict=True)
        out.kept[g] = GroupSplit("", hist, entropy, True, tail)
        out.sample_of[g] = int(first_row[g])
        tail_pairs += [g * n_answers + number[a] for a in tail]
    kept = np.zeros(out.groups + 1, dtype=bool)  # the last slot: unlabelled (-1)
    kept[list(out.kept)] = True
    in_kept = kept[group_of]
    out.tail = in_kept & np.isin(group_of * n_answers + answers, np.asarray(tail_pairs, dtype=np.int64))
    out.head = in_kept & ~out.tail
    return out
