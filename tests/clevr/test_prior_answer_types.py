"""The CLEVR demo's prior answers within each question's answer type (count, yes/no, attribute):
a prior keyed by the template file alone answered "yes" to "How many ...?"."""

from __future__ import annotations

from contrastgen.datasets.clevr import load_questions
from contrastgen.datasets.clevr_templates import load_families
from contrastgen.datasets.clevr_vocab import load_vocabulary
from contrastgen.evaluation.baselines import prior_predictions
from contrastgen.evaluation.clevr_demo import _family, with_answer_types
from contrastgen.resources import clevr_sample_dir


def _within(answer: str, answer_type: str) -> bool:
    if answer_type == "count":
        return answer.isdigit()
    if answer_type == "yes/no":
        return answer in ("yes", "no")
    vocab = load_vocabulary()
    kind = {"color": "Color", "size": "Size", "material": "Material", "shape": "Shape",
            "partname": "Partname"}[answer_type]
    return answer in vocab.words[kind] or answer in {vocab.answer_words(v) for v in vocab.values[kind]}


def test_every_family_has_an_answer_type():
    types = {f.answer_type for f in load_families().values()}
    assert types == {"count", "yes/no", "color", "size", "material", "shape", "partname"}


def test_the_prior_answers_every_question_within_its_familys_answer_type():
    qs = load_questions(clevr_sample_dir() / "questions")
    families = load_families()
    prior, _ = prior_predictions(with_answer_types(qs), with_answer_types(qs), _family)
    counted = 0
    for qid, q in qs.items():
        answer_type = families[(q["template_filename"], q["question_family_index"])].answer_type
        assert _within(prior[qid], answer_type), (qid, q["question"], prior[qid], answer_type)
        counted += answer_type == "count"
    assert counted >= 40  # the sample's "How many ...?" questions, all answered with a number
