import math

import pytest

from contrastgen.ood.imbalance import (
    answer_histograms,
    normalized_entropy,
    released_normalized_entropy,
    released_threshold,
    split_groups,
    tail_answers,
)


def test_uniform_distribution_has_normalised_entropy_one():
    assert normalized_entropy([5, 5, 5]) == pytest.approx(1.0)


def test_normalised_entropy_hand_computed():
    # p = (0.75, 0.25): H = -(0.75 ln 0.75 + 0.25 ln 0.25) = 0.5623; / ln 2 = 0.8113
    assert normalized_entropy([3, 1]) == pytest.approx(0.811278, abs=1e-6)
    # p = (0.8, 0.1, 0.1): H = 0.639032; / ln 3 = 0.581672
    assert normalized_entropy([8, 1, 1]) == pytest.approx(0.581672, abs=1e-6)


def test_single_answer_group_has_no_entropy():
    assert normalized_entropy([7]) is None
    assert normalized_entropy([7, 0]) is None


def test_released_entropy_matches_authors_code():
    # Their n_entropy: -(p * log(p + 1e-9)).sum() / log(d); a single answer scores 1.0.
    assert released_normalized_entropy([7]) == 1.0
    p = [0.75, 0.25]
    expected = -sum(x * math.log(x + 1e-9) for x in p) / math.log(2)
    assert released_normalized_entropy([3, 1]) == pytest.approx(expected, rel=1e-12)


def test_tail_is_at_most_alpha_times_mean_in_the_paper_rule():
    counts = {"a": 6, "b": 3, "c": 3}  # mean 4
    assert tail_answers(counts, 0.75, strict=False) == ["b", "c"]  # 3 <= 0.75 * 4
    assert tail_answers(counts, 0.75, strict=True) == []  # 3 < 3 is false
    assert tail_answers(counts, 1.2, strict=True) == ["b", "c"]  # 3 < 4.8, 6 is not
    assert tail_answers(counts, 1.5, strict=False) == ["a", "b", "c"]  # 6 <= 6


def test_split_groups_keeps_only_imbalanced_multi_answer_groups():
    hist = answer_histograms([("g1", "red")] * 8 + [("g1", "blue"), ("g1", "green")]
                             + [("g2", "yes")] * 5 + [("g2", "no")] * 5 + [("g3", "cat")] * 4)
    groups = split_groups(hist, entropy_threshold=0.9, tail_factor=1.2, strict_tail=False)
    assert groups["g1"].imbalanced and groups["g1"].tail == ["blue", "green"]
    assert groups["g1"].head == ["red"]
    assert not groups["g2"].imbalanced  # uniform
    assert not groups["g3"].imbalanced and groups["g3"].entropy is None  # single answer


def test_released_threshold_is_mean_minus_std_including_single_answer_groups():
    hist = {"a": {"x": 3, "y": 1}, "b": {"x": 1}}
    values = [released_normalized_entropy([3, 1]), 1.0]
    mean = sum(values) / 2
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / 2)
    assert released_threshold(hist) == pytest.approx(mean - std)
