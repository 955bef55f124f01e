"""Program edits beyond a selected object's name: the object a relation step names (`choose rel`),
another spatial relation, an attribute value of a `verify`, `filter` or `choose`, and which names an
invariance may use. Each kept edit is checked by `contrastgen verify`; each refusal is the one the
graph forces."""

from __future__ import annotations

import copy
import json

import pytest

from contrastgen.engine import Engine
from contrastgen.run.generate import generate
from contrastgen.verify.checker import verify_contrast_sets


@pytest.fixture(scope="module")
def engine():
    return Engine.load()


def _obj(name, x, attributes=(), relations=()):
    return {"name": name, "x": x, "y": 200, "w": 40, "h": 40, "attributes": list(attributes),
            "relations": [{"name": r, "object": o} for r, o in relations]}


def _step(op, arg, *deps):
    return {"operation": op, "argument": arg, "dependencies": list(deps)}


def _run(engine, question, graph, max_k=5):
    gen = generate({"q": question}, {"img": graph}, engine=engine, workers=1, mode="programs", max_k=max_k)
    assert verify_contrast_sets(gen.records, {"img": graph}).ok, "every kept edit must verify"
    return gen


def _perturbations(gen):
    return [p for r in gen.records for p in r["perturbations"]]


# -- the object a `choose rel` names, and the object it is asked of ------------------------------
LEFT_RIGHT = {"width": 640, "height": 480, "objects": {  # bench (x 50), giraffe (100), fence (300)
    "1": _obj("giraffe", 100, relations=[("to the left of", "2"), ("to the right of", "3")]),
    "2": _obj("fence", 300, relations=[("to the right of", "1"), ("to the right of", "3")]),
    "3": _obj("bench", 50, relations=[("to the left of", "1"), ("to the left of", "2")]),
}}
CHOOSE_REL = {"imageId": "img", "question": "Is the giraffe to the right or to the left of the fence?",
              "answer": "left", "annotations": {"question": {"2": "1", "12": "2"}},
              "semantic": [_step("select", "fence (2)"),
                           _step("choose rel", "giraffe,to the left of|to the right of,s (1)", 0)]}


def test_the_object_a_choose_rel_is_asked_about_is_replaced(engine):
    ps = _perturbations(_run(engine, CHOOSE_REL, LEFT_RIGHT))
    by_change = {(p["change"]["from"], p["change"]["to"]): p for p in ps}
    p = by_change[("fence", "bench")]
    assert (p["question"], p["answer"], p["kind"]) == (
        "Is the giraffe to the right or to the left of the bench?", "right", "contrast")
    assert p["semantic"][1]["argument"] == "giraffe,to the left of|to the right of,s (1)"  # its ids kept


def test_no_choose_rel_edit_where_the_graph_does_not_decide_the_side(engine):
    undecided = copy.deepcopy(LEFT_RIGHT)
    undecided["objects"]["1"]["relations"] = [{"name": "to the left of", "object": "2"}]  # nothing about the bench
    undecided["objects"]["3"]["relations"] = []
    ps = _perturbations(generate({"q": CHOOSE_REL}, {"img": undecided}, engine=engine, workers=1, mode="programs"))
    assert not any(p["change"]["to"] == "bench" for p in ps)


# -- attribute values ----------------------------------------------------------------------------
def _color_scene(cup_colors):
    return {"width": 640, "height": 480, "objects": {
        "1": _obj("cup", 100, cup_colors), "2": _obj("bus", 400, ["blue"]), "3": _obj("kite", 500, ["green"])}}


VERIFY_COLOR = {"imageId": "img", "question": "Is the cup red?", "answer": "yes",
                "annotations": {"question": {"2": "1"}},
                "semantic": [_step("select", "cup (1)"), _step("verify color", "red", 0)]}


def test_a_verify_value_is_replaced_and_its_no_rests_on_the_one_colour(engine):
    ps = [p for p in _perturbations(_run(engine, VERIFY_COLOR, _color_scene(["red"])))
          if p["change"]["kind"] == "attribute"]
    assert {(p["question"], p["answer"]) for p in ps} == {("Is the cup blue?", "no"), ("Is the cup green?", "no")}
    for p in ps:
        assert p["change"]["slot"] == "step1" and p["semantic"][1]["argument"] == p["change"]["to"]
        assert {"fact": "object", "id": "1", "name": "cup", "attributes": ["red"]} in p["evidence"]["facts"]


def test_no_attribute_no_where_the_graph_lists_two_colours(engine):
    gen = generate({"q": VERIFY_COLOR}, {"img": _color_scene(["red", "white"])}, engine=engine, workers=1, mode="programs")
    assert not [p for p in _perturbations(gen) if p["change"]["kind"] == "attribute"]


def test_the_verifier_refuses_an_attribute_no_the_graph_does_not_show(engine):
    gen = _run(engine, VERIFY_COLOR, _color_scene(["red"]))
    # the same output, checked against a graph that lists a second colour: "no" to blue is then
    # what a missing annotation would also give, and the verifier must not grant it
    report = verify_contrast_sets(gen.records, {"img": _color_scene(["red", "white"])})
    assert not report.ok
    assert any("is not 'blue'" in f.problem for f in report.failures)
    assert any("is not 'green'" in f.problem for f in report.failures)


CHOOSE_COLOR = {"imageId": "img", "question": "Is the cup red or yellow?", "answer": "red",
                "annotations": {"question": {"2": "1"}},
                "semantic": [_step("select", "cup (1)"), _step("choose color", "red|yellow", 0)]}


def test_a_choice_keeps_its_answer_when_its_rejected_option_is_replaced(engine):
    ps = [p for p in _perturbations(_run(engine, CHOOSE_COLOR, _color_scene(["red"])))
          if p["change"]["kind"] == "attribute"]
    assert {(p["question"], p["answer"], p["kind"]) for p in ps} == {
        ("Is the cup red or blue?", "red", "invariance"), ("Is the cup red or green?", "red", "invariance")}


FILTER = {"imageId": "img", "question": "Which kind of furniture is white?", "answer": "chair",
          "annotations": {"question": {"3": "1"}},
          "semantic": [_step("select", "furniture (1)"), _step("filter color", "white", 0),
                       _step("query", "name", 1)]}


def test_a_filter_value_is_replaced_where_it_still_picks_out_one_object(engine):
    graph = {"width": 640, "height": 480, "objects": {
        "1": _obj("chair", 100, ["white"]), "2": _obj("table", 300, ["blue"]), "3": _obj("bench", 500, ["blue"])}}
    assert not [p for p in _perturbations(generate({"q": FILTER}, {"img": graph}, engine=engine, workers=1,
                                                   mode="programs")) if p["change"]["kind"] == "attribute"]
    graph["objects"]["3"]["attributes"] = ["black"]
    ps = [p for p in _perturbations(_run(engine, FILTER, graph)) if p["change"]["kind"] == "attribute"]
    assert {(p["question"], p["answer"]) for p in ps} == {
        ("Which kind of furniture is blue?", "table"), ("Which kind of furniture is black?", "bench")}


# -- relations -----------------------------------------------------------------------------------
def test_a_relation_may_become_another_spatial_one_that_picks_out_one_object(engine):
    graph = {"width": 640, "height": 480, "objects": {
        "1": _obj("cup", 100, relations=[("above", "2")]), "2": _obj("table", 300),
        "3": _obj("lamp", 320, relations=[("behind", "2")])}}
    question = {"imageId": "img", "question": "What is above the table?", "answer": "cup",
                "annotations": {"question": {"4": "2"}},
                "semantic": [_step("select", "table (2)"), _step("relate", "_,above,s (1)", 0),
                             _step("query", "name", 1)]}
    ps = [p for p in _perturbations(_run(engine, question, graph)) if p["change"]["kind"] == "relation"]
    assert [(p["question"], p["answer"]) for p in ps] == [("What is behind the table?", "lamp")]


def test_a_relation_that_is_not_spatial_becomes_only_its_opposite(engine):
    graph = {"width": 640, "height": 480, "objects": {
        "1": _obj("man", 100, relations=[("wearing", "2"), ("to the left of", "3")]),
        "2": _obj("shirt", 110, ["red"]), "3": _obj("lamp", 400)}}
    question = {"imageId": "img", "question": "What is the man wearing?", "answer": "shirt",
                "annotations": {"question": {"3": "1"}},
                "semantic": [_step("select", "man (1)"), _step("relate", "_,wearing,o (2)", 0),
                             _step("query", "name", 1)]}
    gen = generate({"q": question}, {"img": graph}, engine=engine, workers=1, mode="programs")
    assert not [p for p in _perturbations(gen) if p["change"]["kind"] == "relation"]  # not "to the left of?"


# -- names an invariance may use -----------------------------------------------------------------
def test_an_invariance_calls_the_object_only_by_names_people_use(engine):
    graph = {"width": 640, "height": 480, "objects": {
        "1": _obj("man", 100, relations=[("wearing", "2")]), "2": _obj("shirt", 110, ["red"])}}
    question = {"imageId": "img", "question": "What is the man wearing?", "answer": "shirt",
                "annotations": {"question": {"3": "1"}},
                "semantic": [_step("select", "man (1)"), _step("relate", "_,wearing,o (2)", 0),
                             _step("query", "name", 1)]}
    names = {p["change"]["to"] for p in _perturbations(_run(engine, question, graph)) if p["kind"] == "invariance"}
    assert "person" in names
    assert not names & {"adult", "someone", "somebody", "individual", "human"}


def test_a_program_with_nothing_to_edit_is_counted_as_such(engine):
    question = {"imageId": "img", "question": "Which place is it?", "answer": "kitchen",
                "semantic": [_step("select", "scene"), _step("query", "place", 0)]}
    graph = {**_color_scene(["red"]), "location": "kitchen"}
    gen = generate({"q": question}, {"img": graph}, engine=engine, workers=1, mode="programs")
    assert gen.stats["templates"]["program"]["reasons"] == {"no_argument": 1}


def test_a_shade_is_never_offered_as_the_rejected_option(engine):
    question = {"imageId": "img", "question": "Is the cup light blue or yellow?", "answer": "light blue",
                "annotations": {"question": {"2": "1"}},
                "semantic": [_step("select", "cup (1)"), _step("choose color", "light blue|yellow", 0)]}
    ps = [p for p in _perturbations(_run(engine, question, _color_scene(["light blue"])))
          if p["change"]["kind"] == "attribute"]
    assert [p["question"] for p in ps] == ["Is the cup light blue or green?"]  # never "light blue or blue"


def test_no_new_noun_after_a_that_takes_no_a(engine):
    graph = {"width": 640, "height": 480, "objects": {
        "1": _obj("lamp", 100, ["white"]), "2": _obj("bottle", 300, ["green"]), "3": _obj("milk", 500, ["blue"])}}
    question = {"imageId": "img", "question": "Is there a lamp that is white?", "answer": "yes",
                "annotations": {"question": {"3": "1"}},
                "semantic": [_step("select", "lamp (1)"), _step("filter color", "white", 0), _step("exist", "?", 1)]}
    said = {p["question"] for p in _perturbations(_run(engine, question, graph)) if p["change"]["kind"] == "object"}
    assert "Is there a bottle that is white?" in said  # "no": the bottle's one colour is green
    assert not any("milk" in q for q in said)  # never "Is there a milk that is white?"


# -- redundancy (rd-) ----------------------------------------------------------------------------
RD_QUESTION = {"imageId": "img", "question": "What is the white car made of?", "answer": "metal",
               "annotations": {"question": {"4": "1"}},
               "semantic": [_step("select", "car (1)"), _step("filter color", "white", 0), _step("query", "material", 1)]}


def _rd_scene(*extra):
    objects = {"1": _obj("car", 100, ["white", "metal"]), "2": _obj("bench", 400, ["brown", "wood"])}
    for i, o in enumerate(extra, 3):
        objects[str(i)] = o
    return {"width": 640, "height": 480, "objects": objects}


def test_a_redundant_attribute_is_dropped_as_an_invariance(engine):
    ps = [p for p in _perturbations(_run(engine, RD_QUESTION, _rd_scene())) if p["change"]["to"] == ""]
    assert [(p["question"], p["answer"], p["kind"]) for p in ps] == [("What is the car made of?", "metal", "invariance")]
    [p] = ps
    assert [s["operation"] for s in p["semantic"]] == ["select", "query"]
    assert p["semantic"][1]["dependencies"] == [0]
    assert any(f["fact"] == "only" and f["ids"] == ["1"] and "car" in f["names"] for f in p["evidence"]["facts"])


def test_no_drop_where_the_attribute_tells_the_objects_apart_or_is_the_predicate(engine):
    two_cars = _rd_scene(_obj("car", 300, ["red", "metal"]))
    gen = generate({"q": RD_QUESTION}, {"img": two_cars}, engine=engine, workers=1, mode="programs")
    assert not [p for p in _perturbations(gen) if p["change"]["to"] == ""]
    predicate = {**RD_QUESTION, "question": "Which material is the car that is white?"}
    gen = generate({"q": predicate}, {"img": _rd_scene()}, engine=engine, workers=1, mode="programs")
    assert not [p for p in _perturbations(gen) if p["change"]["to"] == ""]
    # the verifier refuses the drop once the graph has a second car: "the car" is no longer one
    ok = _run(engine, RD_QUESTION, _rd_scene())
    report = verify_contrast_sets(ok.records, {"img": two_cars})
    assert not report.ok and any(f.check == "fact" or "reference" in f.check for f in report.failures)


def test_no_drop_that_leaves_a_kind_graphs_leave_out_said_as_the_only_one(engine):
    """"the white shirt" -> "the shirt" would say no other shirt is there, which a graph does not
    show of clothing; the verifier fails the drop the engine made of the car, once it is a shirt."""
    shirt = {**RD_QUESTION, "question": RD_QUESTION["question"].replace("car", "shirt"),
             "semantic": [{**RD_QUESTION["semantic"][0], "argument": "shirt (1)"}, *RD_QUESTION["semantic"][1:]]}
    scene = _rd_scene()
    scene["objects"]["1"] = {**scene["objects"]["1"], "name": "shirt"}
    gen = generate({"q": shirt}, {"img": scene}, engine=engine, workers=1, mode="programs")
    assert not [p for p in _perturbations(gen) if p["change"]["to"] == ""]
    made = _run(engine, RD_QUESTION, _rd_scene())
    record = json.loads(json.dumps(made.records[0]).replace('"car', '"shirt'))
    record["question"] = shirt["question"]
    for p in record["perturbations"]:
        p["question"] = p["question"].replace("car", "shirt")
    report = verify_contrast_sets([record], {"img": scene})
    assert any("of a kind scene graphs leave out" in f.problem for f in report.failures), report.failures


# -- redundancy (rd+) ----------------------------------------------------------------------------
def test_every_attribute_is_said_before_the_noun_but_never_the_one_asked(engine):
    graph = {"width": 640, "height": 480, "objects": {
        "1": _obj("car", 100, ["large", "white", "metal"]), "2": _obj("bench", 400, ["brown"])}}
    made_of = {"imageId": "img", "question": "What is the car made of?", "answer": "metal",
               "annotations": {"question": {"3": "1"}},
               "semantic": [_step("select", "car (1)"), _step("query", "material", 0)]}
    ps = [p for p in _perturbations(_run(engine, made_of, graph)) if p["change"]["from"] == ""]
    assert [(p["question"], p["answer"], p["kind"]) for p in ps] == [
        ("What is the large white car made of?", "metal", "invariance")]
    assert [s["operation"] for s in ps[0]["semantic"]] == ["select", "filter size", "filter color", "query"]
    assert ps[0]["semantic"][3]["dependencies"] == [2]
    color = {**made_of, "question": "What color is the car?", "answer": "white",
             "annotations": {"question": {"4": "1"}},
             "semantic": [_step("select", "car (1)"), _step("query", "color", 0)]}
    ps = [p for p in _perturbations(_run(engine, color, graph)) if p["change"]["from"] == ""]
    assert [p["question"] for p in ps] == ["What color is the large metal car?"]  # not "white": the answer


def test_the_verifier_refuses_added_words_the_program_does_not_say(engine):
    graph = {"width": 640, "height": 480, "objects": {"1": _obj("car", 100, ["large", "white", "metal"])}}
    made_of = {"imageId": "img", "question": "What is the car made of?", "answer": "metal",
               "annotations": {"question": {"3": "1"}},
               "semantic": [_step("select", "car (1)"), _step("query", "material", 0)]}
    gen = _run(engine, made_of, graph)
    records = [dict(r) for r in gen.records]
    for r in records:
        r["perturbations"] = [{**p, "question": p["question"].replace("large white", "small white")}
                              for p in r["perturbations"] if p["change"]["from"] == ""]
    report = verify_contrast_sets(records, {"img": graph})
    assert not report.ok and any("text_mismatch" in f.check or "differ" in f.problem for f in report.failures)
