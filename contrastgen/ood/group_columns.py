"""One VQA-VS shortcut's groups, counted and split from files of keys instead of dictionaries.

Why: a combined concept (KW+KO, QT+KW+KO) is nearly unique per question on varied data, so a
dictionary of groups, or of (group, answer) counts, grows with the input: 2.93 GiB for 5 million
questions. Here a group is a 128-bit hash of its concept (`concept_key`). The labelling pass
writes each labelled sample's key, row and answer number to one of 16 files by the key's first
byte (`PartitionedColumn`), so a group never spans two files and each is split alone: sorting its
keys gives each sample its group, and one more sort gives each group's answer counts, in numpy
arrays of a sixteenth of the samples. Only the kept (imbalanced) groups become Python objects,
and their concept strings are read back from one sample each.

Exact where the output depends on it: a numpy estimate of each group's entropy only picks the
groups worth a look (those under the threshold or within 1e-9 above it); whether a group is kept,
the entropy written for it and its tail answers come from `imbalance`'s own functions on its
exact counts, as `split_groups` computes them. Two concepts share a key with probability about
n^2 / 2^129 (about 1e-24 for 22 million distinct concepts).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

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


# One labelled sample of a shortcut, as its partition file holds it.
ENTRY = np.dtype([("key", f"V{KEY_BYTES}"), ("row", "<i8"), ("answer", "<i4")])
# Partitions of a shortcut's samples by the first byte of their key: a group never spans two, so
# each is split alone, and what is held at once is a sixteenth of the samples.
PARTITIONS = 16


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


class PartitionedColumn:
    """A shortcut's labelled samples (key, row, answer number) written to `PARTITIONS` files by the
    first byte of their key, as the labels arrive in row order; unlabelled ones only counted."""

    def __init__(self, folder: Path, name: str):
        self.paths = [folder / f"{name}-{k:02d}.bin" for k in range(PARTITIONS)]
        self._files = [path.open("wb", buffering=1 << 18) for path in self.paths]
        self.unlabelled = 0

    def add(self, keys: np.ndarray, first_row: int, answers: np.ndarray) -> None:
        """The keys (dtype V16) of rows `first_row`, `first_row + 1`, ... and their answers."""
        words = keys.view(np.uint64).reshape(len(keys), 2)
        labelled = np.flatnonzero((words[:, 0] | words[:, 1]) != 0)
        self.unlabelled += len(keys) - len(labelled)
        entries = np.empty(len(labelled), dtype=ENTRY)
        entries["key"] = kept = keys[labelled]
        entries["row"] = labelled + first_row
        entries["answer"] = answers[labelled]
        part = kept.view(np.uint8).reshape(len(labelled), KEY_BYTES)[:, 0] % PARTITIONS
        order = np.argsort(part, kind="stable")  # rows stay in order within a partition
        bounds = np.searchsorted(part[order], np.arange(PARTITIONS + 1))
        for k, fh in enumerate(self._files):
            fh.write(entries[order[bounds[k]:bounds[k + 1]]].tobytes())

    def close(self) -> None:
        for fh in self._files:
            fh.close()


def split_partitions(column: PartitionedColumn, n: int, answer_names: list[str], *, entropy_threshold: float,
                     tail_factor: float) -> ColumnSplit:
    """The shortcut's groups split as `split_groups` splits them, one partition at a time; `n`
    samples in all."""
    out = ColumnSplit(0, column.unlabelled, head=np.zeros(n, dtype=bool), tail=np.zeros(n, dtype=bool))
    for path in column.paths:
        entries = np.fromfile(path, dtype=ENTRY)
        _split_part(entries["key"], entries["row"], entries["answer"], answer_names, out,
                    entropy_threshold=entropy_threshold, tail_factor=tail_factor)
        path.unlink()
    return out


def _split_part(keys: np.ndarray, rows: np.ndarray, answers: np.ndarray, answer_names: list[str], out: ColumnSplit,
                *, entropy_threshold: float, tail_factor: float) -> None:
    """Add to `out` the groups of some labelled samples (`rows` ascending, no group elsewhere):
    their ordinals follow the groups already there."""
    if not len(keys):
        return
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    opens = np.empty(len(order), dtype=bool)
    opens[0] = True
    opens[1:] = ordered[1:] != ordered[:-1]
    del ordered
    group_sorted = np.cumsum(opens) - 1
    groups = int(group_sorted[-1]) + 1
    first_row = rows[order[opens]]  # stable sort: the group's first sample in input order
    n_answers = len(answer_names)
    pairs, counts = np.unique(group_sorted * n_answers + answers[order], return_counts=True)
    group_of = np.empty(len(keys), dtype=np.int64)
    group_of[order] = group_sorted
    del order, group_sorted, opens
    pair_group, pair_answer = np.divmod(pairs, n_answers)
    answers_in = np.bincount(pair_group, minlength=groups)
    starts = np.concatenate(([0], np.cumsum(answers_in)[:-1]))
    p = counts / np.bincount(pair_group, weights=counts, minlength=groups)[pair_group]
    estimate = -np.add.reduceat(p * np.log(p), starts) / np.log(np.maximum(answers_in, 2))
    number = {a: i for i, a in enumerate(answer_names)}
    tail_pairs: list[int] = []
    kept = np.zeros(groups, dtype=bool)
    for g in np.flatnonzero((answers_in >= 2) & (estimate < entropy_threshold + _NEAR)).tolist():
        start, stop = int(starts[g]), int(starts[g] + answers_in[g])
        hist = dict(sorted((answer_names[a], c) for a, c in zip(pair_answer[start:stop].tolist(),
                                                                 counts[start:stop].tolist(), strict=True)))
        entropy = normalized_entropy(hist.values())
        if entropy is None or not entropy < entropy_threshold:
            continue
        kept[g] = True
        tail = tail_answers(hist, tail_factor, strict=True)
        out.kept[out.groups + g] = GroupSplit("", hist, entropy, True, tail)
        out.sample_of[out.groups + g] = int(first_row[g])
        tail_pairs += [g * n_answers + number[a] for a in tail]
    in_kept = kept[group_of]
    in_tail = in_kept & np.isin(group_of * n_answers + answers, np.asarray(tail_pairs, dtype=np.int64))
    out.tail[rows[in_tail]] = True
    out.head[rows[in_kept & ~in_tail]] = True
    out.groups += groups
