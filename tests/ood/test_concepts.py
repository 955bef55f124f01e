import math
import random

import pytest

from contrastgen.datasets.samples import Sample
from contrastgen.ood.concepts import (
    MutualInformation,
    keyword_candidates,
    label_samples,
    question_type,
    tokenize,
)


def s(qid, question, answer, image="1", qt=None):
    return Sample(qid, image, question, answer, [answer] * 10, qt)


def test_tokenize_keeps_apostrophes_inside_words():
    assert tokenize("What's on the man's plate?") == ["what's", "on", "the", "man's", "plate"]


def test_question_type_prefix_is_longest_match_and_is_excluded_from_keywords():
    tokens = tokenize("What color is the banana?")
    assert question_type(s("1", "x", "y"), tokens) == "what color is the"
    assert keyword_candidates(tokens) == ["banana"]
    assert question_type(s("1", "x", "y", qt="given type"), tokens) == "given type"
    assert question_type(s("1", "x", "y"), tokenize("Banana color?")) == "none of the above"


def test_words_count_once_per_question_and_stopwords_are_optional():
    tokens = tokenize("Is the dog near the dog house?")  # type "is the"
    assert keyword_candidates(tokens) == ["dog", "near", "the", "house"]
    assert keyword_candidates(tokens, drop_stopwords=True) == ["dog", "near", "house"]


def test_mutual_information_hand_computed():
    mi = MutualInformation.fit([(["sky", "blue"], "blue"), (["sky"], "blue"), (["grass", "sky"], "green"),
                                (["grass"], "green")])
    # K = 4; f(sky) = 3, f(blue answer) = 2, f(sky, blue) = 2 -> log(2 * 4 / (3 * 2))
    assert mi.score("sky", "blue") == pytest.approx(math.log(8 / 6))
    # f(grass) = 2, f(green) = 2, f(grass, green) = 2 -> log(2 * 4 / 4) = log 2
    assert mi.score("grass", "green") == pytest.approx(math.log(2))
    assert mi.score("grass", "blue") is None  # never co-occur
    assert mi.top(["sky", "grass"], "green") == ["grass", "sky"]


def test_mi_ties_go_to_the_earlier_word():
    mi = MutualInformation.fit([(["a", "b"], "x"), (["c"], "y")])
    assert mi.top(["b", "a"], "x") == ["b", "a"]


def test_the_best_two_are_the_first_two_of_the_full_ranking():
    # few counts, so many exact ties; the best-two scan must agree with the sorted ranking
    rng = random.Random(7)
    words = [f"w{i}" for i in range(12)]
    mi = MutualInformation.fit((rng.sample(words, rng.randrange(1, 6)), rng.choice("xyz")) for _ in range(60))
    for _ in range(300):
        features = rng.sample(words + ["unseen"], rng.randrange(0, 9))
        answer = rng.choice("xyz")
        assert mi.top(features, answer) == mi.top(features, answer, n=len(features) + 1)[:2], (features, answer)


def test_label_samples_builds_composites_and_skips_object_shortcuts_without_objects():
    samples = [s("1", "What color is the sky?", "blue"), s("2", "What color is the grass?", "green"),
               s("3", "What color is the sky today?", "blue")]
    labels = label_samples(samples)
    c1 = labels[0].concepts
    assert c1["QT"] == "what color is the" and c1["KW"] == "sky"
    assert c1["QT+KW"] == "what color is the + sky"
    assert c1["KWP"] is None  # only one candidate word
    # "today" occurs once, with "blue": MI log(1 * 3 / (1 * 2)) beats "sky" log(2 * 3 / (2 * 2)) -> tie
    assert labels[2].concepts["KWP"] == "sky + today"
    assert "KO" not in c1


def test_object_concepts_come_from_image_objects():
    samples = [s("1", "Is it sunny?", "yes", image="a"), s("2", "Is it sunny?", "no", image="b"),
               s("3", "Is it sunny?", "yes", image="c")]
    objects = {"a": ["sun", "tree"], "b": ["cloud", "tree"], "c": ["sun"]}
    labels = label_samples(samples, objects=objects)
    assert labels[0].concepts["KO"] == "sun"
    assert labels[0].concepts["KOP"] == "sun + tree"
    assert labels[1].concepts["KO"] == "cloud"
    assert labels[0].concepts["QT+KW+KO"] == "is it + sunny + sun"
    assert labels[2].concepts["KOP"] is None


def test_mi_from_a_separate_training_split():
    train = [s("t1", "What color is the sky?", "blue"), s("t2", "What color is the sky?", "blue"),
             s("t3", "What color is the grass?", "green")]
    test = [s("1", "What color is the zebra sky?", "blue"), s("2", "What color is the grass?", "green"),
            s("3", "What color is the sky?", "blue")]
    own = label_samples(test)
    # On the test split alone "zebra" (seen once, with blue) ties "sky" and comes first.
    assert own[0].labels["kw"] == "zebra"
    trained = label_samples(test, mi_samples=train)
    assert trained[0].labels["kw"] == "sky"  # "zebra" never occurs in training: no MI, not a keyword
    assert trained[0].labels["kw2"] is None
