import pytest

from contrastgen.ood.vqa_accuracy import normalize_vqa_answer, vqa_accuracy


@pytest.mark.parametrize(("raw", "norm"), [
    ("Two", "2"), ("the dog.", "dog"), ("dont", "don't"), ("yes!", "yes"),
    ("1,000", "1000"), ("3.5", "3.5"), ("black and white", "black and white"), ("a red-car", "red car"),
])
def test_official_normalisation(raw, norm):
    assert normalize_vqa_answer(raw) == norm


def test_unanimous_answers_score_one():
    assert vqa_accuracy("yes", ["yes"] * 10) == 1.0
    assert vqa_accuracy("Yes.", ["yes"] * 10) == 1.0  # always normalised (official code would give 0)


@pytest.mark.parametrize(("matches", "expected"), [
    # leave one out of ten: a left-out match leaves m-1 matches, another leaves m
    (0, 0.0),
    (1, (1 * 0 + 9 * (1 / 3)) / 10),  # 0.3
    (2, (2 * (1 / 3) + 8 * (2 / 3)) / 10),  # 0.6
    (3, (3 * (2 / 3) + 7 * 1.0) / 10),  # 0.9
    (4, 1.0),
])
def test_leave_one_out_accuracy(matches, expected):
    answers = ["two"] * matches + ["three"] * (10 - matches)
    assert vqa_accuracy("2", answers) == pytest.approx(expected)


def test_single_gold_answer_is_exact_match():
    assert vqa_accuracy("The Table", ["table"]) == 1.0
    assert vqa_accuracy("chair", ["table"]) == 0.0


def test_closed_form_equals_the_explicit_leave_one_out_loop():
    import random

    from contrastgen.ood.vqa_accuracy import normalize_vqa_answer as norm

    rng = random.Random(0)
    vocab = ["yes", "no", "2", "two", "red", "the red", "Red."]
    for _ in range(500):
        answers = [rng.choice(vocab) for _ in range(10)]
        pred = rng.choice(vocab)
        gold = [norm(a) for a in answers]
        loop = sum(min(1.0, sum(1 for g in gold[:i] + gold[i + 1:] if g == norm(pred)) / 3)
                   for i in range(10)) / 10
        assert vqa_accuracy(pred, answers) == pytest.approx(loop)
