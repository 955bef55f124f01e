"""What the engine refuses, case by case (docs/refusals.md): each is a question the engine once
perturbed into something its own verifier rejects, or into a contrast set that compares a model
against noise."""

from __future__ import annotations

import json

import pytest
from builders import plain_graph as _graph
from builders import plain_object as _obj
from builders import program_step as _step

from contrastgen.language.noun_classes import attribute_kinds
from contrastgen.verify.checker import verify_contrast_sets


def _run(engine, q, graph, mode="both"):
    q = {"imageId": "1", **q}
    results = engine.perturb_question("q1", q, graph, corpus=engine.build_corpus({"1": graph}), max_k=5, mode=mode)
    records = [json.loads(json.dumps(r.to_record())) for r in results if r.perturbations]
    assert verify_contrast_sets(records, {"1": graph}).ok
    return results, [p for r in records for p in r["perturbations"]]


def test_a_program_selecting_a_desk_the_graph_calls_furniture_is_program_mismatch(engine):
    graph = _graph(**{"1": _obj("furniture", 50, ["brown"]), "2": _obj("lamp", 400, ["white"])})
    q = {"question": "What color is the desk?", "answer": "brown",
         "semantic": [_step("select", "desk (1)"), _step("query", "color", 0)]}
    results, emitted = _run(engine, q, graph)
    assert not emitted
    assert {r.template: r.reason for r in results}["program"] == "program_mismatch"
    assert {r.template: r.reason for r in results}["what_color_is_the_x"] == "program_mismatch"


def test_a_name_answer_that_is_the_questions_own_category_word_is_refused(engine):
    """"What furniture is brown? chair" must not become "What furniture is black? furniture" (nor
    "What animal is black? animal")."""
    graph = _graph(**{"1": _obj("chair", 50, ["brown"]), "2": _obj("furniture", 400, ["black"]),
                      "3": _obj("cup", 250, ["gray"])})
    q = {"question": "What furniture is brown?", "answer": "chair",
         "semantic": [_step("select", "furniture (1)"), _step("filter color", "brown", 0), _step("query", "name", 1)]}
    results, emitted = _run(engine, q, graph)
    assert not [p for p in emitted if p["answer"] == "furniture"]
    assert {r.template: r.reason for r in results}["program"] == "uninformative_answer"


def test_an_attribute_is_offered_only_within_what_its_kind_of_noun_takes(engine):
    """"Are the sneakers black? yes" must not become "Are the sneakers brunette? no"."""
    graph = _graph(**{"1": _obj("sneakers", 50, ["black"]), "2": _obj("woman", 400, ["brunette"])})
    q = {"question": "Are the sneakers black?", "answer": "yes",
         "semantic": [_step("select", "sneakers (1)"), _step("verify color", "black", 0)]}
    results, emitted = _run(engine, q, graph)
    assert not [p for p in emitted if "brunette" in p["question"]]
    assert {r.template: r.reason for r in results}["program"] == "attribute_kind"
    # the hair of the woman may be brunette: a value GQA says of people and body parts
    graph["objects"]["3"] = _obj("hair", 300, ["blond"])
    q = {"question": "Is the hair blond?", "answer": "yes",
         "semantic": [_step("select", "hair (3)"), _step("verify color", "blond", 0)]}
    _, emitted = _run(engine, q, graph)
    assert [p for p in emitted if "brunette" in p["question"]]


@pytest.mark.parametrize("category,kind,value,allowed", [
    ("clothing", "color", "brunette", False), ("person", "color", "brunette", True),
    ("body part", "color", "brunette", True), ("clothing", "color", "black", True),
    ("furniture", "pose", "standing", False), ("animal", "pose", "standing", True),
    ("clothing", "material", "leather", True), ("food", "material", "wood", False),
    (None, "color", "brunette", True),  # a noun the lexicon files under no category: nothing to say
])
def test_the_attribute_kinds_table(category, kind, value, allowed):
    assert attribute_kinds().allows(category, kind, value) is allowed


def test_no_absence_is_claimed_of_catchers_while_a_man_is_there(engine):
    """"Are there cows near the toilet? yes" must not become "... catchers near the toilet? no":
    the man near the toilet may be a catcher."""
    graph = _graph(**{"1": _obj("toilet", 50), "2": _obj("cow", 120, rels=[("near", "1")]),
                      "3": _obj("man", 200, rels=[("near", "1")]), "4": _obj("sink", 400)})
    graph["objects"]["1"]["relations"] += [{"name": "near", "object": "2"}, {"name": "near", "object": "3"}]
    other = _graph(**{"1": _obj("toilet", 50), "2": _obj("catcher", 120, rels=[("near", "1")]),
                      "3": _obj("cow", 300)})
    q = {"imageId": "1", "question": "Are there cows near the toilet?", "answer": "yes",
         "semantic": [_step("select", "toilet (1)"), _step("relate", "cow,near,s (2)", 0), _step("exist", "?", 1)]}
    corpus = engine.build_corpus({"1": graph, "2": other})
    results = engine.perturb_question("q1", q, graph, corpus=corpus, max_k=5, mode="both")
    emitted = [p for r in results for p in r.perturbations]
    assert not [p for p in emitted if "catcher" in p.question and p.answer == "no"]
    assert engine.lex.may_be_same_person("catcher", "man") and not engine.lex.may_be_same_person("woman", "man")


def test_no_absence_is_claimed_of_women_while_an_umpire_is_there(engine):
    """"Do you see hats or women? yes" must not become "... bicycles or women? no": the umpire,
    of no annotated gender, may be a woman."""
    graph = _graph(**{"1": _obj("hat", 50), "2": _obj("umpire", 200), "3": _obj("fence", 400)})
    others = {"2": _graph(**{"1": _obj("bicycle", 50), "2": _obj("hat", 200), "3": _obj("woman", 400)}),
              "3": _graph(**{"1": _obj("bicycle", 50), "2": _obj("fence", 200), "3": _obj("umbrella", 400)})}
    q = {"imageId": "1", "question": "Do you see hats or women?", "answer": "yes",
         "semantic": [_step("select", "hat (1)"), _step("exist", "?", 0), _step("select", "woman (-)"),
                      _step("exist", "?", 2), _step("or", "", 1, 3)]}
    results = engine.perturb_question("q1", q, graph, corpus=engine.build_corpus({"1": graph, **others}),
                                      max_k=5, mode="both")
    emitted = [p for r in results for p in r.perturbations]
    assert not [p for p in emitted if p.answer == "no"]
    # without the umpire, "no women" is shown, and the hat is renamed into an absent kind
    graph["objects"]["2"] = _obj("fence", 250)
    results = engine.perturb_question("q1", q, graph, corpus=engine.build_corpus({"1": graph, **others}),
                                      max_k=5, mode="both")
    assert [p for r in results for p in r.perturbations if p.answer == "no"]
    # and the verifier, reading the same rule with its own code, rejects such a claim
    from contrastgen.verify.nouns import load_nouns
    assert "umpire" in load_nouns().names("women", loose=True)
    assert "man" not in load_nouns().names("women", loose=True)


def test_an_original_whose_presuppositions_fail_heads_no_contrast_set(engine):
    """"On which side is the horse? left" of a horse inside the centre band, and "What color is the
    player?" with a catcher (a player too) in the picture: the original cannot be answered."""
    graph = _graph(**{"1": _obj("horse", 213 - 20, ["brown"]), "2": _obj("cow", 60), "3": _obj("dog", 420)})
    results, emitted = _run(engine, {"question": "On which side is the horse?", "answer": "left"}, graph,
                            mode="templates")
    assert not emitted and results[0].reason == "original_presupposition"
    graph = _graph(**{"1": _obj("player", 60, ["white"]), "2": _obj("catcher", 300, ["blue"]),
                      "3": _obj("umpire", 420, ["black"])})
    q = {"question": "What color is the player?", "answer": "white",
         "semantic": [_step("select", "player (1)"), _step("query", "color", 0)]}
    results, emitted = _run(engine, q, graph)
    assert not emitted
    assert {r.reason for r in results} == {"original_presupposition"}


def test_the_person_of_a_program_whose_second_object_is_a_person_is_not_read_as_the_mirror(engine):
    """"Is the person to the left of the small mirror?" with `select: person (2) -> verify rel:
    person,to the left of,s (2)`: the words' second object is a mirror, the program's a person."""
    graph = _graph(**{"2": _obj("person", 10, rels=[("to the left of", "3")]),
                      "3": _obj("mirror", 300, ["small"], rels=[("to the right of", "2")]), "4": _obj("lamp", 420)})
    q = {"question": "Is the person to the left of the small mirror?", "answer": "yes",
         "semantic": [_step("select", "person (2)"), _step("verify rel", "person,to the left of,s (2)", 0)]}
    results, emitted = _run(engine, q, graph)
    assert not emitted and all(r.reason in ("program_mismatch", "answer_mismatch") for r in results)


@pytest.mark.parametrize("said,added", [("the steel car", "large red"), ("the car", "large red steel")])
def test_rd_plus_writes_adjectives_in_english_order(engine, said, added):
    graph = _graph(**{"1": _obj("car", 50, ["red", "steel", "large"], [("to the left of", "2")]),
                      "2": _obj("tree", 300, ["green"], [("to the right of", "1")])})
    q = {"question": f"Is {said} to the left of the tree?", "answer": "yes",
         "semantic": [_step("select", "car (1)"), _step("verify rel", "tree,to the left of,o (2)", 0)]}
    _, emitted = _run(engine, q, graph, mode="programs")
    rd_plus = [p for p in emitted if p["change"]["kind"] == "attribute" and p["change"]["from"] == ""]
    assert [(p["question"], p["change"]["to"]) for p in rd_plus] == [
        ("Is the large red steel car to the left of the tree?", added)]


def test_rd_plus_is_refused_where_english_order_would_split_the_added_words(engine):
    """"the red car" + large + steel would need "large" before red and "steel" after it."""
    graph = _graph(**{"1": _obj("car", 50, ["red", "steel", "large"], [("to the left of", "2")]),
                      "2": _obj("tree", 300, ["green"], [("to the right of", "1")])})
    q = {"question": "Is the red car to the left of the tree?", "answer": "yes",
         "semantic": [_step("select", "car (1)"), _step("verify rel", "tree,to the left of,o (2)", 0)]}
    _, emitted = _run(engine, q, graph, mode="programs")
    assert not [p for p in emitted if p["change"]["kind"] == "attribute" and p["change"]["from"] == ""]


def test_a_possessive_before_and_says_whose_the_next_thing_is_too(engine):
    """"Are there both person's heads and table cloths in the image? no": the possessive may say
    whose the table cloths are, so they are not renamed (the verifier reads it so)."""
    graph = _graph(**{"1": _obj("person's head", 50), "2": _obj("baby", 200), "3": _obj("computer", 400)})
    q = {"question": "Are there both person's heads and table cloths in the image?", "answer": "no",
         "semantic": [_step("select", "person's head (1)"), _step("exist", "?", 0), _step("select", "table cloth (-)"),
                      _step("exist", "?", 2), _step("and", "", 1, 3)]}
    _, emitted = _run(engine, q, graph, mode="programs")
    assert not [p for p in emitted if p["change"]["from"] == "table cloth" and p["kind"] == "contrast"]


def test_the_verifiers_noun_table_puts_an_alias_under_its_nouns_kinds():
    """"pajama" is listed as another form of "pajamas", a kind of pants: the verifier reads a
    program's `select: trousers (1)` of a pajama as the generator's lexicon does."""
    from contrastgen.verify.nouns import load_nouns

    nouns = load_nouns()
    assert "pajama" in nouns.names("trousers") and "slack" in nouns.names("pants")


def test_a_colour_asked_of_two_objects_is_refused_even_where_they_agree(engine):
    lex = engine.lex
    from contrastgen.programs.executor import GqaExecutor, ProgramRefusal
    from contrastgen.scene.index import SceneIndex

    graph = _graph(**{"1": _obj("label", 50, rels=[("to the left of", "2"), ("to the left of", "3")]),
                      "2": _obj("man", 200, ["blue"]), "3": _obj("man", 400, ["blue"])})
    program = [_step("select", "label (1)"), _step("relate", "person,to the left of,o", 0), _step("query", "color", 1)]
    with pytest.raises(ProgramRefusal, match="ambiguous"):
        GqaExecutor(SceneIndex.build("1", graph, lex), lex, graph).run(program)


def test_a_name_is_not_renamed_into_one_that_opens_with_the_same_word(engine):
    """"Is the sign post to the left or to the right of the bucket?" -> "... the sign ...": word by
    word, "sign" is kept before a new noun, an adjective no step checks."""
    graph = _graph(**{"1": _obj("bucket", 250), "2": _obj("sign post", 400, rels=[("to the right of", "1")]),
                      "3": _obj("sign", 60, rels=[("to the left of", "1")])})
    graph["objects"]["1"]["relations"] += [{"name": "to the left of", "object": "2"},
                                           {"name": "to the right of", "object": "3"}]
    q = {"question": "Is the sign post to the left or to the right of the bucket?", "answer": "right",
         "semantic": [_step("select", "bucket (1)"),
                      _step("choose rel", "sign post,to the right of|to the left of,s (2)", 0)]}
    _, emitted = _run(engine, q, graph, mode="programs")
    assert not [p for p in emitted if p["change"]["to"] == "sign"]


def test_a_slot_followed_by_a_word_that_names_an_object_is_not_read(engine):
    """A graph with an object named "there": "Do you see any sculptures or sky there?" could read
    "sky there" as one noun phrase."""
    graph = _graph(**{"1": _obj("sky", 50), "2": _obj("there", 200), "3": _obj("tree", 400)})
    q = {"question": "Do you see any shutters or sky there?", "answer": "yes"}
    results, emitted = _run(engine, q, graph, mode="templates")
    assert not emitted and {r.reason for r in results} == {"unsupported_phrase"}
