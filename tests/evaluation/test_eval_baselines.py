"""The prior baseline: most frequent training answer per template, with back-off."""

from __future__ import annotations

from contrastgen.evaluation.baselines import (
    PriorModel,
    first_words,
    prior_predictions,
    to_submission,
)
from contrastgen.evaluation.run_baselines import is_perturbation, template_resolver


def q(text, answer="", template=None, detailed=None, contrast=None):
    out = {"question": text, "answer": answer, "imageId": "1"}
    if template:
        out["template"] = template
    if detailed:
        out["types"] = {"detailed": detailed}
    if contrast:
        out["contrast"] = contrast
    return out


def by_field(qid, question):
    return question.get("template")


TRAIN = {
    "1": q("Is there a cat near the dog?", "yes", template="near"),
    "2": q("Is there a cup near the plate?", "yes", template="near"),
    "3": q("Is there a hat near the man?", "no", template="near"),
    "4": q("What color is the car?", "white", detailed="directWhich"),
    "5": q("What color is the bus?", "red", detailed="directWhich"),
    "6": q("Who is wearing the hat?", "man"),
}


def test_most_frequent_answer_per_template_and_back_off():
    model = PriorModel().fit(TRAIN, by_field)
    assert model.answer(q("Is there a bed near the lamp?", template="near"), "near") == ("yes", "template")
    # tie between red and white: alphabetical, for determinism
    assert model.answer(q("Which color is it?", detailed="directWhich"), None) == ("red", "detailed")
    assert model.answer(q("Who is wearing the coat?"), None) == ("man", "words")
    # nothing specific matches: the most frequent answer overall
    assert model.answer(q("How big is the house?"), "unknown_template") == ("yes", "all")
    assert PriorModel().answer(q("Anything?"), None) == (None, "none")


def test_prior_predictions_answer_perturbations_like_their_originals():
    questions = {
        "9": q("Is there a cat near the bed?", "yes", template="near"),
        "9_c1": q("Is there a dog near the bed?", "no",
                  contrast={"original_question_id": "9", "template": "near"}),
    }
    preds, sources = prior_predictions(TRAIN, questions, template_resolver(questions))
    assert preds == {"9": "yes", "9_c1": "yes"}  # the shortcut: same answer after perturbation
    assert sources == {"template": 2}
    assert to_submission(preds) == [{"questionId": "9", "prediction": "yes"},
                                    {"questionId": "9_c1", "prediction": "yes"}]


def test_template_resolver_order():
    pool = {"7": q("Is the cup on the table?", "yes", template="rel"),
            "7_r1": q("Is the cup under the table?", "no", contrast={"original_question_id": "7"})}
    resolve = template_resolver(pool)
    assert resolve("7_r1", pool["7_r1"]) == "rel"  # from its original
    assert resolve("x", q("Nonsense words here?")) is None
    assert is_perturbation("7_r1", pool["7_r1"]) and not is_perturbation("7", pool["7"])


def test_first_words_are_normalised():
    assert first_words(q("What Color is the car?")) == "what color is"
