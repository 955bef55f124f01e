"""Program edits that are proven true on the graph yet are no question a benchmark means, refused
by the generator and rejected by the verifier with its own code (docs/refusals.md):
- a hair colour said of a thing, alone or under an `and`/`or` ("Is the pillow large and blond?");
- a colour "no" resting on one listed colour, of a person ("Is the skier pink? no" while the skier
  wears pink shoes) or of a composite thing whose parts carry colours;
- an object answer its question names ("What is behind the bag the man is behind? man").
Each rule is also switched off in the generator, to show the verifier rejects what it would emit."""

from __future__ import annotations

import json

import pytest
from builders import plain_graph as _graph
from builders import plain_object as _obj
from builders import program_step as _step

from contrastgen.language.noun_classes import HairColors
from contrastgen.programs.edits.question import EditedQuestion
from contrastgen.verify.checker import verify_contrast_sets


def _generate(engine, q, graph):
    q = {"imageId": "1", **q}
    results = engine.perturb_question("q1", q, graph, corpus=engine.build_corpus({"1": graph}), max_k=5,
                                      mode="programs")
    records = [json.loads(json.dumps(r.to_record())) for r in results if r.perturbations]
    return results, records, [p for r in records for p in r["perturbations"]]


def _reason(results):
    return {r.template: r.reason for r in results}["program"]


def _rejected(records, graph):
    report = verify_contrast_sets(records, {"1": graph})
    return [str(f) for f in report.failures]


# "Is the pillow large and white? yes": the colour step is asked under an `and`
PILLOW = _graph(**{"1": _obj("pillow", 50, ["large", "white"]), "2": _obj("hair", 200, ["blond"]),
                   "3": _obj("woman", 260, ["standing"]), "4": _obj("chair", 400, ["red"])})
LARGE_AND_WHITE = {"question": "Is the pillow large and white?", "answer": "yes",
                   "semantic": [_step("select", "pillow (1)"), _step("verify size", "large", 0),
                                _step("verify color", "white", 0), _step("and", "", 1, 2)]}


def test_a_hair_colour_is_not_offered_for_a_thing_under_and(engine):
    results, records, emitted = _generate(engine, LARGE_AND_WHITE, PILLOW)
    questions = {p["question"]: p["answer"] for p in emitted}
    assert not [q for q in questions if "blond" in q]
    # the colour step is edited: another colour the graph shows the pillow lacks
    assert questions.get("Is the pillow large and red?") == "no"
    assert verify_contrast_sets(records, {"1": PILLOW}).ok


def test_a_hair_colour_is_still_offered_for_hair(engine):
    graph = _graph(**{"1": _obj("hair", 50, ["brown"]), "2": _obj("pillow", 200, ["blond"])})
    q = {"question": "Is the hair brown?", "answer": "yes",
         "semantic": [_step("select", "hair (1)"), _step("verify color", "brown", 0)]}
    _, records, emitted = _generate(engine, q, graph)
    assert "Is the hair blond?" in {p["question"] for p in emitted}
    assert verify_contrast_sets(records, {"1": graph}).ok


def test_a_question_whose_only_value_is_a_hair_colour_is_attribute_kind(engine):
    graph = _graph(**{"1": _obj("fence", 50, ["white", "long"]), "2": _obj("hair", 300, ["blond"])})
    q = {"question": "Does the fence look white and long?", "answer": "yes",
         "semantic": [_step("select", "fence (1)"), _step("verify color", "white", 0),
                      _step("verify length", "long", 0), _step("and", "", 1, 2)]}
    results, _, emitted = _generate(engine, q, graph)
    assert not [p for p in emitted if "blond" in p["question"]]
    assert _reason(results) == "attribute_kind"


def test_the_verifier_rejects_a_hair_colour_said_of_a_thing(engine, monkeypatch):
    monkeypatch.setattr("contrastgen.programs.edits.attributes.hair_colors", lambda: HairColors({}))
    _, records, emitted = _generate(engine, LARGE_AND_WHITE, PILLOW)
    assert "Is the pillow large and blond?" in {p["question"] for p in emitted}
    assert any("hair colour" in f and "pillow" in f for f in _rejected(records, PILLOW))


# the skier is listed as white, and wears pink shoes and pink jeans
SKIER = _graph(**{"1": _obj("skier", 50, ["white"], [("wearing", "2"), ("wearing", "3")]),
                  "2": _obj("shoes", 60, ["pink"]), "3": _obj("jeans", 70, ["pink"]),
                  "4": _obj("woman", 400, ["blue"])})
SKIER_WHITE = {"question": "Is the skier white?", "answer": "yes",
               "semantic": [_step("select", "skier (1)"), _step("verify color", "white", 0)]}


def test_no_colour_no_is_claimed_of_a_person(engine):
    results, records, emitted = _generate(engine, SKIER_WHITE, SKIER)
    assert not [p for p in emitted if p["answer"] == "no"]
    assert verify_contrast_sets(records, {"1": SKIER}).ok
    assert _reason(results) == "several_colors"


def test_a_colour_no_of_clothing_still_holds(engine):
    q = {"question": "Are the shoes pink?", "answer": "yes",
         "semantic": [_step("select", "shoes (2)"), _step("verify color", "pink", 0)]}
    _, records, emitted = _generate(engine, q, SKIER)
    assert ("Are the shoes blue?", "no") in {(p["question"], p["answer"]) for p in emitted}
    assert verify_contrast_sets(records, {"1": SKIER}).ok


def test_no_colour_no_is_claimed_of_a_composite_thing(engine):
    graph = _graph(**{"1": _obj("bus", 50, ["white"]), "2": _obj("bench", 400, ["red"])})
    q = {"question": "Is the bus white?", "answer": "yes",
         "semantic": [_step("select", "bus (1)"), _step("verify color", "white", 0)]}
    _, _, emitted = _generate(engine, q, graph)
    assert ("Is the bus red?", "no") not in {(p["question"], p["answer"]) for p in emitted}


def test_the_verifier_rejects_a_colour_no_of_a_person(engine, monkeypatch):
    monkeypatch.setattr("contrastgen.programs.proofs.several_colored_categories", lambda: frozenset())
    _, records, emitted = _generate(engine, SKIER_WHITE, SKIER)
    assert ("Is the skier pink?", "no") in {(p["question"], p["answer"]) for p in emitted}
    assert any("is not 'pink'" in f for f in _rejected(records, SKIER))


# the man is in front of one bag (a wall behind it) and behind another
BAGS = _graph(**{"1": _obj("man", 100, ["standing"], [("in front of", "2"), ("behind", "3")]),
                 "2": _obj("bag", 100, ["black"], [("behind", "1")]),
                 "3": _obj("bag", 300, ["brown"], [("in front of", "1")]),
                 "4": _obj("wall", 100, ["white"], [("behind", "2")])})
BEHIND_THE_BAG = {"question": "What is behind the bag the man is in front of?", "answer": "wall",
                  "annotations": {"question": {"4": "2", "6": "1"}},
                  "semantic": [_step("select", "man (1)"), _step("relate", "bag,in front of,o (2)", 0),
                               _step("relate", "_,behind,s (4)", 1), _step("query", "name", 2)]}


def test_an_answer_the_question_names_is_refused(engine):
    _, records, emitted = _generate(engine, BEHIND_THE_BAG, BAGS)
    assert emitted  # the question is edited ("the person"), just not into its own answer
    assert not [p for p in emitted if p["answer"] == "man"]
    assert verify_contrast_sets(records, {"1": BAGS}).ok


def test_a_question_left_only_with_answers_it_names_is_answer_in_question(engine):
    graph = json.loads(json.dumps(BAGS))
    graph["objects"]["5"] = _obj("woman", 450, ["sitting"])  # "the person" no longer says the man alone
    results, _, emitted = _generate(engine, BEHIND_THE_BAG, graph)
    assert not emitted
    assert _reason(results) == "answer_in_question"


def test_the_verifier_rejects_an_answer_the_question_names(engine, monkeypatch):
    monkeypatch.setattr(EditedQuestion, "repeats_question", lambda self, p: False)
    _, records, emitted = _generate(engine, BEHIND_THE_BAG, BAGS)
    assert ("What is behind the bag the man is behind?", "man") in {(p["question"], p["answer"]) for p in emitted}
    assert any("said in the question" in f for f in _rejected(records, BAGS))


@pytest.mark.parametrize(("question", "answer", "said"), [
    ("What is behind the bag the man is behind?", "man", True),
    ("What is the woman holding?", "umbrellas", False),
    ("What is on the t-shirts?", "t-shirt", True),
    ("What is the man's dog chasing?", "men", True),
])
def test_the_verifier_reads_an_answer_in_its_question_with_its_own_code(question, answer, said):
    from contrastgen.verify.program_edits import answer_said_problems
    semantic = [_step("select", "man (1)"), _step("query", "name", 0)]
    assert bool(answer_said_problems(question, answer, semantic)) == said


# a graph that calls a railing blond: rd+ says every attribute of the one railing, but not that one
RAILING = _graph(**{"1": _obj("railing", 50, ["large", "blond", "metal"]), "2": _obj("cup", 300, ["red"])})
RAILING_MADE_OF = {"question": "What is the railing made of?", "answer": "metal",
                   "semantic": [_step("select", "railing (1)"), _step("query", "material", 0)]}


def test_rd_plus_says_no_hair_colour_of_a_thing(engine):
    _, records, emitted = _generate(engine, RAILING_MADE_OF, RAILING)
    assert "What is the large railing made of?" in {p["question"] for p in emitted}
    assert not [p for p in emitted if "blond" in p["question"]]
    assert verify_contrast_sets(records, {"1": RAILING}).ok


def test_the_verifier_rejects_a_hair_colour_rd_plus_added_to_a_thing(engine, monkeypatch):
    monkeypatch.setattr("contrastgen.programs.edits.redundancy.hair_colors", lambda: HairColors({}))
    _, records, emitted = _generate(engine, RAILING_MADE_OF, RAILING)
    assert "What is the large blond railing made of?" in {p["question"] for p in emitted}
    assert any("hair colour" in f and "railing" in f for f in _rejected(records, RAILING))
