"""Each op and fact kind: the valid perturbation holds, and a tampered copy of it fails."""

from __future__ import annotations

import pytest
from verify_cases import VALID

from contrastgen.errors import InputError
from contrastgen.verify.checker import verify_perturbation


def problems(case, graph, rules, valid):
    original, pert = valid[case]
    return verify_perturbation(pert, original, graph, rules=rules)


@pytest.mark.parametrize("case", sorted(VALID))
def test_valid_perturbations_hold(case, graph, rules, valid):
    assert problems(case, graph, rules, valid) == []


def _one(found: list[str], *needles: str) -> None:
    """At least one problem mentions every needle (so the right check fired, not some other)."""
    assert found, "tampered perturbation passed"
    assert any(all(n in p for n in needles) for p in found), found


@pytest.mark.parametrize("case", ["side", "color", "exists_any_no", "exists_related_yes", "relation_no"])
def test_wrong_answer_fails(case, graph, rules, valid):
    original, pert = valid[case]
    flipped = {"left": "right", "red": "blue", "no": "yes", "yes": "no"}[pert["answer"]]
    pert["answer"] = pert["evidence"]["answer"] = flipped
    found = verify_perturbation(pert, "something else", graph, rules=rules)
    _one(found, "the query gives", "evidence.answer")


def test_evidence_answer_must_match_perturbation_answer(graph, rules, valid):
    original, pert = valid["color"]
    pert["answer"] = "white "  # normalises to the original answer too
    found = verify_perturbation(pert, original, graph, rules=rules)
    _one(found, "differs from the perturbation's answer")
    _one(found, "equals the original answer")


def test_answer_equal_to_original_fails(graph, rules, valid):
    _, pert = valid["side"]
    found = verify_perturbation(pert, "Left.", graph, rules=rules)  # normalised comparison
    _one(found, "equals the original answer")


def test_object_fact_wrong_name_fails(graph, rules, valid):
    _, pert = valid["side"]
    pert["evidence"]["facts"][0]["name"] = "mug"
    _one(problems_of(pert, graph, rules), "fact 1 does not hold", "named 'cup', not 'mug'")


def test_object_fact_missing_attribute_fails(graph, rules, valid):
    _, pert = valid["exists_any_yes_attr"]
    pert["evidence"]["facts"][0]["attributes"] = ["red", "large"]
    _one(problems_of(pert, graph, rules), "lacks attributes ['large']")


def test_object_fact_unknown_id_fails(graph, rules, valid):
    _, pert = valid["exists_related_absent"]
    pert["evidence"]["facts"][0]["id"] = "99"
    _one(problems_of(pert, graph, rules), "object 99 is not in the scene graph")


def test_relation_fact_missing_edge_fails(graph, rules, valid):
    _, pert = valid["exists_related_yes"]
    del graph["objects"]["6"]["relations"][0]
    found = problems_of(pert, graph, rules)
    _one(found, "no edge 6 -near-> 3")
    _one(found, "the query gives 'no'")


def test_extra_object_makes_reference_ambiguous(graph, rules, valid):
    _, pert = valid["color"]
    graph["objects"]["7"] = {"name": "cup", "x": 10, "y": 1, "w": 5, "h": 5, "attributes": ["red"], "relations": []}
    _one(problems_of(pert, graph, rules), "only fact", "['1', '7']")


def test_definite_reference_needs_an_only_fact(graph, rules, valid):
    for case in ("side", "color"):
        _, pert = valid[case]
        pert["evidence"]["facts"] = [f for f in pert["evidence"]["facts"] if f["fact"] != "only"]
        _one(problems_of(pert, graph, rules), "no 'only' fact shows object 1")


def test_only_fact_listing_two_ids_is_not_a_definite_reference(graph, rules, valid):
    _, pert = valid["side"]
    graph["objects"]["7"] = {"name": "cup", "x": 10, "y": 1, "w": 5, "h": 5}
    pert["evidence"]["facts"][1]["ids"] = ["1", "7"]  # a true fact, but "the cup" is ambiguous
    found = problems_of(pert, graph, rules)
    assert not any("only fact" in p for p in found)
    _one(found, "definite reference may be ambiguous")


def test_absent_name_actually_present_fails(graph, rules, valid):
    _, pert = valid["exists_related_absent"]
    graph["objects"]["8"] = {"name": "Wall", "x": 0, "y": 0, "w": 5, "h": 5}
    found = problems_of(pert, graph, rules)
    _one(found, "absent fact", "8 (wall)")
    assert not any("query gives" in p for p in found)  # the wall is not near the plate: only the fact is false


def test_not_related_fact_false_fails(graph, rules, valid):
    _, pert = valid["exists_related_not_related"]
    graph["objects"]["3"]["relations"].append({"name": "near", "object": "1"})  # table near cup; symmetric
    found = problems_of(pert, graph, rules)
    _one(found, "not_related fact", "1 near 3")
    _one(found, "the query gives 'yes'")


def test_not_related_respects_direction_when_not_symmetric(graph, rules, valid):
    _, pert = valid["exists_related_not_related"]
    graph["objects"]["3"]["relations"].append({"name": "on", "object": "2"})  # table on plate: wrong way round
    pert["change"]["to"] = "plate"
    pert["question"] = "Is there a plate on the table?"
    for part in (pert["evidence"]["query"], pert["evidence"]["facts"][1]):
        part.update(names=["plate", "plates"], rel="on", symmetric=False)
    assert problems_of(pert, graph, rules) == []


def test_query_symmetry_must_follow_the_relation_table(graph, rules, valid):
    _, pert = valid["exists_related_yes"]
    pert["evidence"]["query"]["symmetric"] = False  # 'near' is symmetric
    _one(problems_of(pert, graph, rules), "query says 'near' is not symmetric; rules/relations.tsv says it is symmetric")
    _, pert = valid["exists_related_yes"]
    graph["objects"]["3"]["relations"].append({"name": "on", "object": "2"})
    pert["evidence"]["query"].update(rel="on", symmetric=True, names=["plate"], object="3")
    pert["change"]["to"] = "plate"
    # the table is on the plate, so "is there a plate on the table?" is not proven by a symmetric reading
    _one(problems_of(pert, graph, rules), "query says 'on' is symmetric; rules/relations.tsv says it is not symmetric")


def test_not_related_fact_for_symmetric_relation_must_check_both_ways(graph, rules, valid):
    _, pert = valid["exists_related_not_related"]
    pert["evidence"]["facts"][1]["symmetric"] = False
    assert problems_of(pert, graph, rules) == [
        "not_related fact 2 says 'near' is not symmetric; rules/relations.tsv says it is symmetric"]


def test_no_resting_on_a_missing_attribute_fails(graph, rules, valid):
    _, pert = valid["exists_any_yes_attr"]
    pert["evidence"]["query"]["attributes"] = ["blue"]  # the cup is there but not annotated blue
    pert["change"].update({"from": "red", "to": "blue"})
    pert["answer"] = pert["evidence"]["answer"] = "no"
    pert["question"] = "Are there any blue cups?"
    pert["evidence"]["facts"] = [{"fact": "object", "id": "1", "name": "cup"}]
    assert problems_of(pert, graph, rules) == [
        "answer 'no' rests on objects ['1'] lacking attributes ['blue']: a missing attribute "
        "annotation proves nothing"]


@pytest.mark.parametrize("name", ["shirt", "Shirts", "hands"])
def test_unannotated_prone_absence_fails(name, graph, rules, valid):
    _, pert = valid["exists_any_no"]
    pert["evidence"]["query"]["names"][1] = [name]
    pert["evidence"]["facts"][1]["names"] = [name]
    found = problems_of(pert, graph, rules)
    _one(found, "absent fact rests on unannotated-prone")
    _one(found, "answer 'no' rests on unannotated-prone")


def test_unannotated_prone_no_answer_fails_without_absent_fact(graph, rules, valid):
    _, pert = valid["exists_related_not_related"]
    pert["evidence"]["query"]["names"] = ["hand", "hands"]
    pert["evidence"]["facts"][1]["names"] = ["hand", "hands"]
    _one(problems_of(pert, graph, rules), "answer 'no' rests on unannotated-prone names ['hand', 'hands']")


def test_unannotated_prone_yes_answer_is_fine(graph, rules, valid):
    _, pert = valid["exists_any_yes_attr"]
    graph["objects"]["1"]["name"] = "shirt"
    pert["question"] = "Are there any red shirts?"
    pert["evidence"]["query"]["names"] = [["shirt"]]
    pert["evidence"]["facts"][0]["name"] = "shirt"
    assert problems_of(pert, graph, rules) == []


def test_side_near_centre_flipped_box_fails(graph, rules, valid):
    _, pert = valid["side_near_centre"]
    graph["objects"]["4"]["x"] = 316  # centre 321: now just right of the middle (320)
    found = problems_of(pert, graph, rules)
    _one(found, "side fact", "wrong x 310")
    _one(found, "the query gives 'right'")


def test_side_fact_with_wrong_side_fails(graph, rules, valid):
    _, pert = valid["side"]
    pert["evidence"]["facts"][2]["side"] = "right"
    _one(problems_of(pert, graph, rules), "so it is on the left, not the right")


def test_side_fact_with_wrong_center_fails(graph, rules, valid):
    _, pert = valid["side"]
    pert["evidence"]["facts"][2]["center"] = 400
    _one(problems_of(pert, graph, rules), "wrong center 400")


def test_side_exactly_at_centre_is_right(graph, rules, valid):
    _, pert = valid["side_near_centre"]
    graph["objects"]["4"]["x"] = 315  # centre exactly 320 == width / 2
    _one(problems_of(pert, graph, rules), "the query gives 'right'")


def test_color_fact_must_list_exactly_the_colours(graph, rules, valid):
    _, pert = valid["color"]
    pert["evidence"]["facts"][2]["colors"] = ["red", "white"]
    _one(problems_of(pert, graph, rules), "color fact", "has colours ['red'], not ['red', 'white']")


def test_color_query_on_two_coloured_object_fails(graph, rules, valid):
    _, pert = valid["color"]
    pert["evidence"]["query"]["object"] = "6"
    _one(problems_of(pert, graph, rules), "object 6 has 2 colour attributes (black, brown)")


def test_exists_any_attribute_not_held_fails(graph, rules, valid):
    _, pert = valid["exists_any_yes_attr"]
    pert["evidence"]["query"]["attributes"] = ["red", "large"]
    _one(problems_of(pert, graph, rules), "the query gives 'no'")


def test_relation_query_yes_via_symmetric_reverse_edge(graph, rules, valid):
    original, pert = valid["relation_yes"]
    pert["evidence"]["query"] = {"op": "relation", "subject": "3", "rel": "near", "object": "6"}
    pert["question"] = "Is the table near the chair?"
    pert["change"]["to"] = "near"
    pert["evidence"]["facts"] = [{"fact": "relation", "subject": "6", "name": "near", "object": "3"}]
    assert verify_perturbation(pert, original, graph, rules=rules) == []


def test_relation_query_wrong_opposite_fails(graph, rules, valid):
    _, pert = valid["relation_no"]
    pert["evidence"]["query"]["opposite"] = "below"
    found = problems_of(pert, graph, rules)
    _one(found, "query opposite 'below' is not the opposite of 'to the right of'")


def test_relation_query_unprovable_no_fails(graph, rules, valid):
    _, pert = valid["relation_no"]
    pert["evidence"]["query"] = {"op": "relation", "subject": "1", "rel": "above", "object": "2"}
    _one(problems_of(pert, graph, rules), "neither 1 -above-> 2 nor 1 -below-> 2")


def test_relation_query_contradictory_graph_fails(graph, rules, valid):
    _, pert = valid["relation_no"]
    graph["objects"]["1"]["relations"].append({"name": "to the right of", "object": "2"})
    _one(problems_of(pert, graph, rules), "the answer is ambiguous")


@pytest.mark.parametrize("case, change, needle", [
    ("exists_related_absent", {"kind": "object", "slot": "x", "from": "cup", "to": "fence"},
     "change.to 'fence' is not among the names the evidence looks for ['wall', 'walls']"),
    ("color", {"kind": "object", "slot": "x", "from": "plate", "to": "bowl"},
     "change.to 'bowl' is not among the names the evidence looks for ['cup', 'cups']"),
    ("relation_no", {"kind": "relation", "slot": "rel", "from": "to the left of", "to": "above"},
     "change.to 'above' is not the query's relation 'to the right of'"),
    ("exists_any_yes_attr", {"kind": "attribute", "slot": "x", "from": "blue", "to": "white"},
     "change.to 'white' is not among the query's attributes ['red']"),
])
def test_evidence_must_be_about_the_changed_atom(case, change, needle, graph, rules, valid):
    _, pert = valid[case]
    pert["change"] = change
    assert problems_of(pert, graph, rules) == [needle]


def test_unknown_op_fails(graph, rules, valid):
    _, pert = valid["side"]
    pert["evidence"]["query"] = {"op": "count", "names": ["cup"]}
    _one(problems_of(pert, graph, rules), "unknown query op 'count'")


def test_unknown_fact_kind_fails(graph, rules, valid):
    _, pert = valid["side"]
    pert["evidence"]["facts"].append({"fact": "believed", "id": "1"})
    _one(problems_of(pert, graph, rules), "fact 4 does not hold", "unknown fact kind 'believed'")


def test_missing_query_field_fails(graph, rules, valid):
    _, pert = valid["exists_related_absent"]
    del pert["evidence"]["query"]["symmetric"]
    _one(problems_of(pert, graph, rules), "query has no field 'symmetric'")


def test_empty_facts_fail(graph, rules, valid):
    _, pert = valid["relation_yes"]
    pert["evidence"]["facts"] = []
    _one(problems_of(pert, graph, rules), "evidence.facts must be a non-empty list")


def test_missing_evidence_fails(graph, rules, valid):
    _, pert = valid["relation_yes"]
    del pert["evidence"]
    _one(problems_of(pert, graph, rules), "no 'evidence' object")


@pytest.mark.parametrize("change, needle", [
    ({"kind": "number", "slot": "x", "from": "a", "to": "b"}, "change.kind 'number'"),
    ({"kind": "object", "slot": "x", "from": "Cup", "to": "cup "}, "nothing was perturbed"),
    ({"kind": "object", "slot": "x", "from": "cup"}, "change needs string 'from' and 'to'"),
    (None, "no 'change' object"),
])
def test_bad_change_fails(change, needle, graph, rules, valid):
    _, pert = valid["side"]
    pert["change"] = change
    _one(problems_of(pert, graph, rules), needle)


def test_malformed_scene_graph_is_input_error(rules, valid):
    original, pert = valid["side"]
    with pytest.raises(InputError, match="width"):
        verify_perturbation(pert, original, {"objects": {}}, rules=rules)


def problems_of(pert, graph, rules):
    """Problems against an original answer no valid perturbation has, so only the tamper shows."""
    return verify_perturbation(pert, "original-answer", graph, rules=rules)


def test_a_template_perturbation_labelled_an_invariance_fails(graph, rules, valid):
    """A template's edit is proven to change the answer; a file that calls it an invariance (which
    evaluate scores as "the answer must stay") misstates what was proven."""
    _, pert = valid["side"]
    pert["kind"] = "invariance"
    _one(problems_of(pert, graph, rules), "a template's perturbation is a contrast")


@pytest.mark.parametrize("kind", ["contrastive", "", None, 1])
def test_an_unknown_kind_fails(graph, rules, valid, kind):
    _, pert = valid["color"]
    pert["kind"] = kind
    _one(problems_of(pert, graph, rules), "kind", "is not one of")


def test_a_perturbation_without_kind_is_read_as_a_contrast(graph, rules, valid):
    """Files written before every perturbation said its kind still verify."""
    _, pert = valid["color"]
    pert.pop("kind", None)
    assert problems_of(pert, graph, rules) == []
    pert["kind"] = "contrast"
    assert problems_of(pert, graph, rules) == []
