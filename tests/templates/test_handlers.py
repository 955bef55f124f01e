"""Each template: the answer flips in both directions, refusals are counted, evidence verifies."""

from __future__ import annotations

from builders import GraphBuilder, question

from contrastgen.verify.checker import verify_contrast_sets


def _run(engine, q, graph, *, graphs=None, max_k=5, templates=None):
    graphs = graphs or {"1": graph}
    res = engine.perturb("q1", q, graph, corpus=engine.build_corpus(graphs), max_k=max_k,
                         templates=templates)
    rec = res.to_record()
    if rec is not None:
        report = verify_contrast_sets([rec], {"1": graph})
        assert report.ok, report.failures
    return res


# -- on which side -------------------------------------------------------------------------------

def test_side_replaces_by_same_category_object_on_other_side(engine):
    b = GraphBuilder(width=600)
    b.add("chair", 20)  # left
    b.add("table", 500)  # right, furniture
    b.add("dog", 480)  # right, not furniture
    res = _run(engine, question("On which side is the chair?", "left"), b.graph)
    assert [(p.question, p.answer) for p in res.perturbations] == [("On which side is the table?", "right")]
    ev = res.perturbations[0].evidence
    assert ev["query"]["op"] == "side" and any(f["fact"] == "side" for f in ev["facts"])


def test_side_refuses_object_near_centre_and_duplicates(engine):
    b = GraphBuilder(width=600)
    b.add("chair", 20)
    b.add("table", 290)  # centre 310: inside the centre band
    b.add("sofa", 500)
    b.add("sofa", 450)  # two sofas: "the sofa" is ambiguous
    res = _run(engine, question("On which side is the chair?", "left"), b.graph)
    assert res.perturbations == [] and res.reason == "no_distractor"


def test_side_answer_mismatch_is_refused(engine):
    b = GraphBuilder(width=600)
    b.add("chair", 500)
    b.add("table", 20)
    res = _run(engine, question("On which side is the chair?", "left"), b.graph)
    assert res.reason == "answer_mismatch"


# -- what color ----------------------------------------------------------------------------------

def test_color_changes_to_object_with_one_other_colour(engine):
    b = GraphBuilder()
    b.add("cat", 20, attributes=["black"])
    b.add("helmet", 200, attributes=["blue", "shiny"])
    b.add("car", 300, attributes=["black"])  # same colour: no flip
    b.add("flag", 400, attributes=["red", "white"])  # two colours: ambiguous answer
    res = _run(engine, question("What color is the cat?", "black"), b.graph)
    assert [(p.question, p.answer) for p in res.perturbations] == [("What color is the helmet?", "blue")]


def test_color_has_what_color_variant_and_relative_clause(engine):
    b = GraphBuilder()
    bat = b.add("bat", 20, attributes=["brown"])
    batter = b.add("batter", 60)
    b.relate(batter, "holding", bat, both_ways=False)
    b.add("helmets", 300, attributes=["blue"])
    res = _run(engine, question("The bat the batter is holding has what color?", "brown"), b.graph)
    assert res.grounding["x"] == [bat] and res.grounding["via"] == "lexicon"
    assert [p.question for p in res.perturbations] == ["The helmets have what color?"]


def test_color_not_grounded(engine):
    b = GraphBuilder()
    b.add("dog", 20, attributes=["black"])
    b.add("helmet", 200, attributes=["blue"])
    res = _run(engine, question("What color is the cat?", "black"), b.graph)
    assert res.reason == "not_grounded" and not res.perturbations


def test_color_unannotated_prone_distractor_is_not_used(engine):
    b = GraphBuilder()
    b.add("cat", 20, attributes=["black"])
    b.add("shirt", 200, attributes=["blue"])
    res = _run(engine, question("What color is the cat?", "black"), b.graph)
    assert not res.perturbations


# -- do you see X or Y ---------------------------------------------------------------------------

def test_see_yes_to_no_replaces_the_present_option(engine):
    b = GraphBuilder()
    b.add("laptop", 20)
    b.add("desk", 200)
    other = GraphBuilder()
    other.add("laptop", 10)
    other.add("printer", 10)
    other.add("desk", 10)
    graphs = {"1": b.graph, "2": other.graph}
    res = _run(engine, question("Do you see laptops or cameras?", "yes"), b.graph, graphs=graphs)
    assert [(p.question, p.answer) for p in res.perturbations] == [("Do you see printers or cameras?", "no")]
    assert res.perturbations[0].change == {"kind": "object", "slot": "x", "from": "laptops", "to": "printer"}


def test_see_no_to_yes_uses_a_present_object(engine):
    b = GraphBuilder()
    b.add("dog", 20)
    res = _run(engine, question("Do you see any cats or horses there?", "no"), b.graph, max_k=5)
    qs = {p.question for p in res.perturbations}
    assert qs == {"Do you see any dogs or horses there?", "Do you see any cats or dogs there?"}
    assert all(p.answer == "yes" for p in res.perturbations)


def test_see_refuses_absence_of_unannotated_prone_option(engine):
    b = GraphBuilder()
    b.add("laptop", 20)
    res = _run(engine, question("Do you see laptops or shirts?", "yes"), b.graph)
    assert res.reason == "unannotated_prone"


def test_see_hypernym_in_question_hyponym_in_graph(engine):
    b = GraphBuilder()
    b.add("dog", 20)
    res = _run(engine, question("Do you see animals or cars?", "yes"), b.graph)
    assert res.reason != "answer_mismatch"  # "animals" is grounded to the dog


# -- are there X near the Y ----------------------------------------------------------------------

def _puddle_scene():
    b = GraphBuilder()
    puddle = b.add("puddle", 300)
    fence = b.add("fence", 320)
    b.add("zebra", 40)
    b.relate(fence, "near", puddle)
    other = GraphBuilder()
    for n in ("puddle", "wall", "bench", "car", "fence"):
        other.add(n, 10)
    return b, {"1": b.graph, "2": other.graph}


def test_near_yes_to_no_with_absent_cooccurring_object(engine):
    b, graphs = _puddle_scene()
    res = _run(engine, question("Is there a fence near the puddle?", "yes"), b.graph, graphs=graphs)
    got = {(p.question, p.answer) for p in res.perturbations}
    # the wall co-occurs too, but walls are habitually unannotated: their absence proves nothing
    assert got == {("Is there a car near the puddle?", "no"), ("Is there a bench near the puddle?", "no")}


def test_near_no_to_yes_with_a_neighbour(engine):
    b, graphs = _puddle_scene()
    res = _run(engine, question("Are there any cats near the puddle?", "no"), b.graph, graphs=graphs)
    assert [(p.question, p.answer) for p in res.perturbations] == [("Are there any fences near the puddle?", "yes")]


def test_near_ambiguous_y_is_refused(engine):
    b, graphs = _puddle_scene()
    b.add("puddle", 500)
    res = _run(engine, question("Is there a fence near the puddle?", "yes"), b.graph, graphs=graphs)
    assert res.reason == "ambiguous"


def _near_program(puddle: str, fence: str) -> list[dict]:
    return [{"operation": "select", "argument": f"puddle ({puddle})", "dependencies": []},
            {"operation": "relate", "argument": f"fence,near,s ({fence})", "dependencies": [0]},
            {"operation": "exist", "argument": "?", "dependencies": [1]}]


def test_near_grounds_through_the_program(engine):
    b, graphs = _puddle_scene()
    puddle = next(i for i, o in b.graph["objects"].items() if o["name"] == "puddle")
    fence = next(i for i, o in b.graph["objects"].items() if o["name"] == "fence")
    q = question("Is there a fence near the puddle?", "yes", semantic=_near_program(puddle, fence))
    res = _run(engine, q, b.graph, graphs=graphs)
    assert res.grounding["via"] == "program" and res.grounding["y"] == [puddle]
    assert res.perturbations and all(p.evidence["query"]["object"] == puddle for p in res.perturbations)
    assert all(p.program["semantic"][0] == _near_program(puddle, fence)[0] for p in res.perturbations)


def test_program_ids_do_not_make_an_ambiguous_reference_unique(engine):
    """Two puddles: the program picks one, but a reader of "the puddle" cannot."""
    b, graphs = _puddle_scene()
    b.add("puddle", 500)
    puddle = next(i for i, o in b.graph["objects"].items() if o["name"] == "puddle")
    fence = next(i for i, o in b.graph["objects"].items() if o["name"] == "fence")
    q = question("Is there a fence near the puddle?", "yes", semantic=_near_program(puddle, fence))
    res = _run(engine, q, b.graph, graphs=graphs)
    assert not res.perturbations and res.reason == "original_presupposition"


# -- is the X Rel the Y --------------------------------------------------------------------------

def _rel_scene():
    b = GraphBuilder()
    boy = b.add("boy", 400)
    man = b.add("man", 200)
    zebra = b.add("zebra", 50)
    b.relate(boy, "to the right of", man)
    b.relate(zebra, "to the left of", man)
    return b, boy, man, zebra


def test_relation_yes_to_no(engine):
    b, *_ = _rel_scene()
    res = _run(engine, question("Is the boy to the right of the man?", "yes"), b.graph,
               templates=["is_the_x_rel_the_y__relation"])
    assert [(p.question, p.answer) for p in res.perturbations] == [("Is the boy to the left of the man?", "no")]
    assert res.perturbations[0].change["kind"] == "relation"


def test_relation_no_to_yes(engine):
    b, *_ = _rel_scene()
    res = _run(engine, question("Is the boy to the left of the man?", "no"), b.graph,
               templates=["is_the_x_rel_the_y__relation"])
    assert [(p.question, p.answer) for p in res.perturbations] == [("Is the boy to the right of the man?", "yes")]


def test_relation_without_annotated_relation_is_refused(engine):
    b, *_ = _rel_scene()
    b.add("cat", 500)
    res = _run(engine, question("Is the cat to the left of the man?", "no"), b.graph,
               templates=["is_the_x_rel_the_y__relation"])
    assert res.reason == "no_relation"


def test_relation_object_yes_to_no(engine):
    b, *_ = _rel_scene()
    res = _run(engine, question("Is the boy to the right of the man?", "yes"), b.graph,
               templates=["is_the_x_rel_the_y__object"])
    assert [(p.question, p.answer) for p in res.perturbations] == [("Is the zebra to the right of the man?", "no")]


def test_relation_object_no_to_yes(engine):
    b, *_ = _rel_scene()
    res = _run(engine, question("Is the zebra to the right of the man?", "no"), b.graph,
               templates=["is_the_x_rel_the_y__object"])
    assert [(p.question, p.answer) for p in res.perturbations] == [("Is the boy to the right of the man?", "yes")]


def test_relation_ambiguous_x_is_refused(engine):
    b, *_ = _rel_scene()
    b.add("boy", 500)
    res = _run(engine, question("Is the boy to the right of the man?", "yes"), b.graph,
               templates=["is_the_x_rel_the_y__relation"])
    assert res.reason == "ambiguous"


def test_both_relation_templates_apply_to_one_question(engine):
    b, *_ = _rel_scene()
    results = engine.perturb_question("q1", question("Is the boy to the right of the man?", "yes"), b.graph)
    assert [r.template for r in results] == ["is_the_x_rel_the_y__relation", "is_the_x_rel_the_y__object"]
    ids = [p.question_id for r in results for p in r.perturbations]
    assert ids == ["q1_r1", "q1_o1"]


def test_existing_question_of_the_image_is_not_emitted(engine):
    b, *_ = _rel_scene()
    existing = {"is the boy to the left of the man"}
    results = engine.perturb_question("q1", question("Is the boy to the right of the man?", "yes"), b.graph,
                                      templates=["is_the_x_rel_the_y__relation"], existing=existing)
    assert results[0].reason == "duplicate"


# -- found by the independent verifier on synthetic data -----------------------------------------

def test_definite_reference_names_exclude_forms_of_another_kind(engine):
    b = GraphBuilder()
    b.add("cup", 20, attributes=["white"])
    b.add("glass", 200, attributes=["red"])
    b.add("glasses", 400, attributes=["black"])  # spectacles, not two glasses
    res = _run(engine, question("What color is the cup?", "white"), b.graph)
    only = [f for p in res.perturbations for f in p.evidence["facts"] if f["fact"] == "only"]
    glass = [f for f in only if "glass" in f["names"]]
    assert glass and all("glasses" not in f["names"] for f in glass)


def test_absence_of_a_kind_of_clothing_is_not_claimed(engine):
    b = GraphBuilder()
    b.add("dog", 20)
    res = _run(engine, question("Do you see dogs or belts?", "yes"), b.graph)
    assert res.reason == "unannotated_prone"
