"""Groups split from a column of concept keys are the groups `split_groups` makes from dictionaries:
the same kept groups, entropies, tails and places, at and around the thresholds."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from contrastgen.ood.group_columns import (
    UNLABELLED,
    PartitionedColumn,
    concept_key,
    split_partitions,
)
from contrastgen.ood.imbalance import answer_histograms, split_groups


def _split(folder, keys, answers, names, *, batch=None, entropy_threshold=0.9, tail_factor=1.2):
    """The keys written to a partitioned column `batch` rows at a time (default: all at once), then split."""
    column = PartitionedColumn(folder, f"keys-{batch}")
    batch = batch or max(len(keys), 1)
    for start in range(0, len(keys), batch):
        column.add(keys[start:start + batch], start, answers[start:start + batch])
    column.close()
    split = split_partitions(column, len(keys), names, entropy_threshold=entropy_threshold, tail_factor=tail_factor)
    assert not any(p.exists() for p in column.paths)  # each partition is removed once split
    return split


def _samples(seed: int) -> list[tuple[str | None, str]]:
    """(concept or None, answer) pairs: skewed groups, uniform ones, single-answer ones, and two
    groups whose entropy is the threshold itself (a 3:1 split of two answers: 0.811278...)."""
    rng = random.Random(seed)
    out: list[tuple[str | None, str]] = []
    for g in range(300):
        answers = [f"a{rng.randrange(6)}" for _ in range(rng.randrange(1, 4))]
        weights = [rng.choice([1, 1, 2, 9]) for _ in answers]
        out += [(f"concept {g}", a) for a in rng.choices(answers, weights, k=rng.randrange(1, 30))]
    out += [("three to one", "x")] * 3 + [("three to one", "y")] + [("six to two", "x")] * 6 + [("six to two", "y")] * 2
    out += [(None, "a1")] * 7
    rng.shuffle(out)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("threshold,factor", [(0.9, 1.2), (0.8112781244591328, 1.0),  # 3:1 is not under it
                                              (np.nextafter(0.8112781244591328, 1), 1.2), (0.5, 2.0)])
def test_the_column_split_is_the_dictionary_split(tmp_path, seed, threshold, factor):
    samples = _samples(seed)
    names = sorted({a for _, a in samples})
    number = {a: i for i, a in enumerate(names)}
    keys = np.frombuffer(b"".join(concept_key(c) for c, _ in samples), dtype="V16")
    answers = np.asarray([number[a] for _, a in samples], dtype=np.int32)
    column = _split(tmp_path, keys, answers, names, entropy_threshold=threshold, tail_factor=factor)

    labelled = [(c, a) for c, a in samples if c is not None]
    expected = split_groups(answer_histograms(labelled), entropy_threshold=threshold, tail_factor=factor,
                            strict_tail=True)
    assert column.groups == len(expected) and column.unlabelled == 7
    concept_of = {g: samples[row][0] for g, row in column.sample_of.items()}
    got = {concept_of[g]: (s.counts, s.entropy, s.tail) for g, s in column.kept.items()}
    want = {k: (s.counts, s.entropy, s.tail) for k, s in expected.items() if s.imbalanced}
    assert got == want and want  # something is kept, and exactly what the dictionaries keep
    for i, (c, a) in enumerate(samples):
        group = expected.get(c) if c is not None else None
        in_kept = bool(group and group.imbalanced)
        assert column.tail[i] == (in_kept and a in group.tail), i
        assert column.head[i] == (in_kept and a not in group.tail), i


def test_no_labelled_sample_means_no_group(tmp_path):
    keys = np.frombuffer(UNLABELLED * 4, dtype="V16")
    column = _split(tmp_path, keys, np.zeros(4, dtype=np.int32), ["a"])
    assert (column.groups, column.unlabelled, column.kept) == (0, 4, {})
    assert not column.head.any() and not column.tail.any()


def test_keys_tell_concepts_apart_and_none_from_every_concept():
    concepts = [f"what color is the + {w}" for w in ("wall", "walls", "Wall", "wall ")] + ["", None]
    keys = Counter(concept_key(c) for c in concepts)
    assert len(keys) == len(concepts) and keys[UNLABELLED] == 1 and concept_key("") != UNLABELLED


@pytest.mark.parametrize("batch", [1, 37, 10_000])
def test_partitions_written_in_batches_split_as_the_whole_column(tmp_path, batch):
    samples = _samples(4)
    names = sorted({a for _, a in samples})
    number = {a: i for i, a in enumerate(names)}
    keys = np.frombuffer(b"".join(concept_key(c) for c, _ in samples), dtype="V16")
    answers = np.asarray([number[a] for _, a in samples], dtype=np.int32)
    whole = _split(tmp_path, keys, answers, names)
    parts = _split(tmp_path, keys, answers, names, batch=batch)

    def kept(split):
        return {samples[split.sample_of[g]][0]: (s.counts, s.entropy, s.tail, split.sample_of[g])
                for g, s in split.kept.items()}

    assert (parts.groups, parts.unlabelled) == (whole.groups, whole.unlabelled)
    assert kept(parts) == kept(whole) and kept(whole)
    assert (parts.head == whole.head).all() and (parts.tail == whole.tail).all() and parts.tail.any()


def test_keys_spread_over_the_partitions(tmp_path):
    keys = np.frombuffer(b"".join(concept_key(c) for c, _ in _samples(4)), dtype="V16")
    column = PartitionedColumn(tmp_path, "kw")
    column.add(keys, 0, np.zeros(len(keys), dtype=np.int32))
    column.close()
    assert sum(1 for p in column.paths if p.stat().st_size) > 1
