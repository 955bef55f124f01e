"""What an edited program's answer rests on must be shown by the graph, in the engine's proofs and
in the verifier's own executor, for the operations the real sample and the synthetic data lack or
hardly have: GQA's comparisons (`same TYPE`, `different TYPE`, `common`: two objects differ in a
type only where each one's value is excluded from the other), untyped choices ("Is the car shiny or
rusty?"), negated filters ("the car that is not red"), whose `not(VALUE)` is a value, not a
name with ids, and new objects of a kind annotators leave out said as the only ones ("What is the
boy wearing? socks")."""

from __future__ import annotations

import copy

import pytest

from contrastgen.engine import Engine
from contrastgen.run.generate import generate
from contrastgen.verify.checker import PROGRAM, verify_contrast_sets
from contrastgen.verify.graph import EvidenceProblem, GraphIndex
from contrastgen.verify.program import execute_program
from contrastgen.verify.rules import load_rules


def _box(x: int, y: int) -> dict:
    return {"x": x, "y": y, "w": 40, "h": 40, "relations": []}


GRAPH = {"width": 640, "height": 480, "objects": {
    "1": {**_box(20, 20), "name": "shirt", "attributes": ["white", "cotton"]},
    "2": {**_box(300, 40), "name": "pants", "attributes": ["white", "denim"]},
    "3": {**_box(500, 300), "name": "jacket", "attributes": ["black", "leather"]},
    "4": {**_box(100, 300), "name": "table", "attributes": ["brown", "wood"]},
    "5": {**_box(400, 380), "name": "chair", "attributes": ["brown", "metal"]},
    "6": {**_box(200, 200), "name": "cup", "attributes": ["red", "plastic"]}}}


def _question(text: str, answer: str, first: str, second: str, op: str, tokens: tuple[int, int],
              detailed: str) -> dict:
    (a, ida), (b, idb) = (x.split() for x in (first, second))
    return {"question": text, "answer": answer, "imageId": "img",
            "types": {"structural": "compare", "semantic": "attr", "detailed": detailed},
            "annotations": {"question": {str(tokens[0]): ida, str(tokens[1]): idb}},
            "semantic": [{"operation": "select", "argument": f"{a} ({ida})", "dependencies": []},
                         {"operation": "select", "argument": f"{b} ({idb})", "dependencies": []},
                         {"operation": op, "argument": "", "dependencies": [0, 1]}]}


QUESTIONS = {
    "c1": _question("Do the shirt and the pants have the same color?", "yes", "shirt 1", "pants 2",
                    "same color", (2, 5), "sameColor"),
    "c2": _question("Are the table and the chair made of different materials?", "yes", "table 4", "chair 5",
                    "different material", (2, 5), "diffMaterial"),
    "c3": _question("Do the cup and the jacket have different colors?", "yes", "cup 6", "jacket 3",
                    "different color", (2, 5), "diffColor"),
}


@pytest.fixture(scope="module")
def generated():
    return generate(QUESTIONS, {"img": GRAPH}, engine=Engine.load(), max_k=5, seed=0, workers=1, mode="programs")


def test_a_colour_comparison_is_perturbed_and_verified(generated):
    by_question = {r["question_id"]: r["perturbations"] for r in generated.records}
    same = {p["question"]: p for p in by_question["c1"] if p["kind"] == "contrast"}
    assert "Do the cup and the pants have the same color?" in same
    p = same["Do the cup and the pants have the same color?"]
    assert p["answer"] == "no" and p["semantic"][2] == {"operation": "same color", "argument": "",
                                                         "dependencies": [0, 1]}
    # the evidence names the colours the "no" rests on
    facts = {f["id"]: f.get("attributes") for f in p["evidence"]["facts"] if f["fact"] == "object"}
    assert facts["6"] == ["red"] and facts["2"] == ["white"]
    # nothing else is red or black: "different colors?" keeps its answer under a kind or rd+ only
    assert {(p["question"], p["answer"], p["kind"]) for p in by_question["c3"]} >= {
        ("Do the container and the jacket have different colors?", "yes", "invariance")}
    assert all(p["answer"] == "yes" for p in by_question["c3"])
    assert verify_contrast_sets(generated.records, {"img": GRAPH}).ok


def test_materials_are_not_shown_to_differ_where_nothing_excludes_them(generated):
    """A table listed as wood and a chair listed as metal: the chair may be wood too, so no
    perturbation of "different materials?" may answer on that difference."""
    for record in generated.records:
        if record["question_id"] == "c2":
            assert not record["perturbations"], record["perturbations"]


def _run(program: list[tuple[str, str, list[int]]]) -> str:
    steps = [{"operation": o, "argument": a, "dependencies": d} for o, a, d in program]
    return execute_program(steps, GraphIndex(GRAPH), load_rules())[0]


@pytest.mark.parametrize("op, first, second, answer", [
    ("same color", "shirt (1)", "pants (2)", "yes"),
    ("same color", "cup (6)", "pants (2)", "no"),
    ("different color", "cup (6)", "jacket (3)", "yes"),
    ("same color", "table (4)", "chair (5)", "yes"),
])
def test_the_verifier_compares_with_its_own_code(op, first, second, answer):
    assert _run([("select", first, []), ("select", second, []), (op, "", [0, 1])]) == answer


@pytest.mark.parametrize("op, first, second, says", [
    ("different material", "table (4)", "chair (5)", "nothing in the graph shows that object"),
    ("common", "table (4)", "chair (5)", "nothing in the graph shows that object"),  # wood vs metal
    ("common", "shirt (1)", "pants (2)", "one is needed"),  # no material or shape the rules type
])
def test_the_verifier_fails_a_difference_the_graph_does_not_show(op, first, second, says):
    with pytest.raises(EvidenceProblem, match=says):
        _run([("select", first, []), ("select", second, []), (op, "", [0, 1])])


def test_an_unshown_difference_in_a_record_fails_the_program_check(generated):
    """The perturbation the engine made before the comparison proofs: "Are the brown wood table
    and the chair made of different materials? yes"."""
    record = {"question_id": "c2", "image_id": "img", "template": "program", "question": QUESTIONS["c2"]["question"],
              "answer": "yes", "semantic": QUESTIONS["c2"]["semantic"], "grounding": {}, "slots": {},
              "types": QUESTIONS["c2"]["types"], "perturbations": [{
                  "question_id": "c2_p1", "rank": 1, "kind": "invariance", "answer": "yes",
                  "question": "Are the brown wood table and the chair made of different materials?",
                  "change": {"kind": "attributes", "slot": "step0", "from": "", "to": "brown wood"},
                  "semantic": [{"operation": "select", "argument": "table (4)", "dependencies": []},
                               {"operation": "filter", "argument": "brown", "dependencies": [0]},
                               {"operation": "filter", "argument": "wood", "dependencies": [1]},
                               {"operation": "select", "argument": "chair (5)", "dependencies": []},
                               {"operation": "different material", "argument": "", "dependencies": [2, 3]}],
                  "evidence": {"version": 1, "query": {"op": "program", "step": 0}, "answer": "yes",
                               "facts": [{"fact": "object", "id": "4", "name": "table"},
                                         {"fact": "object", "id": "5", "name": "chair"}]}}]}
    report = verify_contrast_sets([record], {"img": GRAPH})
    assert PROGRAM in {f.check for f in report.failures}
    assert "nothing in the graph shows that object 4 is not 'metal'" in " ".join(f.problem for f in report.failures)


def _untyped_choice(a: str, b: str, first: tuple[str, str], second: tuple[str, str]) -> tuple[dict, list]:
    """A graph of two objects (name, attribute) and the program path's perturbations of "Is the
    <first> <a> or <b>?" (GQA's untyped `choose`)."""
    graph = {"width": 640, "height": 480, "objects": {
        "1": {**_box(20, 100), "name": first[0], "attributes": [first[1]]},
        "2": {**_box(400, 100), "name": second[0], "attributes": [second[1]]}}}
    question = {"question": f"Is the {first[0]} {a} or {b}?", "answer": first[1], "imageId": "img",
                "types": {"structural": "choose", "semantic": "attr", "detailed": "chooseAttr"},
                "annotations": {"question": {"2": "1"}},
                "semantic": [{"operation": "select", "argument": f"{first[0]} (1)", "dependencies": []},
                             {"operation": "choose", "argument": f"{a}|{b}", "dependencies": [0]}]}
    gen = generate({"q": question}, {"img": graph}, engine=Engine.load(), max_k=5, seed=0, workers=1, mode="programs")
    assert verify_contrast_sets(gen.records, {"img": graph}).ok
    return graph, [(p["question"], p["answer"]) for r in gen.records for p in r["perturbations"]]


def test_an_untyped_choice_rejects_only_what_the_graph_excludes():
    """Renamed to the truck listed as rusty, "Is the car shiny or rusty?" would answer "rusty"
    on nothing showing the truck is not shiny: no perturbation is made, and a program claiming
    it fails the verifier. A laptop listed as closed is shown not open (an opposite): made."""
    graph, made = _untyped_choice("shiny", "rusty", ("car", "shiny"), ("truck", "rusty"))
    assert made == []
    steps = [{"operation": "select", "argument": "truck (2)", "dependencies": []},
             {"operation": "choose", "argument": "shiny|rusty", "dependencies": [0]}]
    with pytest.raises(EvidenceProblem, match="nothing in the graph shows that object 2 is not 'shiny'"):
        execute_program(steps, GraphIndex(graph), load_rules())
    _, made = _untyped_choice("open", "closed", ("box", "open"), ("laptop", "closed"))
    assert ("Is the laptop open or closed?", "closed") in made


NEGATED = {"width": 640, "height": 480, "objects": {
    "1": {**_box(20, 100), "name": "car", "attributes": ["red"]},
    "2": {**_box(400, 100), "name": "truck", "attributes": []},
    "3": {**_box(200, 100), "name": "cup", "attributes": ["blue"]},
    "4": {**_box(300, 100), "name": "bench", "attributes": ["wooden"]}}}
def _filtered(text: str, answer: str, reference: str, color: str, detailed: str) -> dict:
    """GQA's "<select> -> filter color -> exist" ("Is there a car that is not red?") or "... ->
    query name" ("Which kind of furniture is black?"), the reference's word the fourth."""
    exist = detailed.startswith("exist")
    ids = reference.rpartition("(")[2].rstrip(")")
    return {"question": text, "answer": answer, "imageId": "img",
            "types": {"structural": "verify" if exist else "query", "semantic": "attr" if exist else "cat",
                      "detailed": detailed},
            "annotations": {"question": {} if ids == "-" else {"3": ids}},
            "semantic": [{"operation": "select", "argument": reference, "dependencies": []},
                         {"operation": "filter color", "argument": color, "dependencies": [0]},
                         {"operation": "exist", "argument": "?", "dependencies": [1]} if exist else
                         {"operation": "query", "argument": "name", "dependencies": [1]}]}


NOT_RED = _filtered("Is there a car that is not red?", "no", "car (1)", "not(red)", "existAttrNot")


def test_a_negated_filter_keeps_its_value_and_claims_only_what_the_graph_excludes():
    """"the car that is not red": the edited program keeps `not(red)` whole (it is a value, not a
    name with ids), and a renamed object passes it only where the graph shows it is not red (the
    cup's one colour is blue; nothing shows the truck or the bench is not red)."""
    gen = generate({"q": NOT_RED}, {"img": NEGATED}, engine=Engine.load(), max_k=5, seed=0, workers=1, mode="programs")
    made = {p["question"]: p for r in gen.records for p in r["perturbations"]}
    assert made["Is there a cup that is not red?"]["answer"] == "yes"
    assert not {"Is there a truck that is not red?", "Is there a bench that is not red?"} & set(made)
    assert all(p["semantic"][1]["argument"] == "not(red)" for p in made.values())
    assert verify_contrast_sets(gen.records, {"img": NEGATED}).ok


def test_the_verifier_reads_a_negated_filter_as_a_value_and_as_a_claim():
    gen = generate({"q": NOT_RED}, {"img": NEGATED}, engine=Engine.load(), max_k=5, seed=0, workers=1, mode="programs")
    record = next(r for r in gen.records if r["perturbations"])
    mangled = {**record, "perturbations": [{**p, "semantic": [p["semantic"][0], {**p["semantic"][1], "argument": "not"},
                                                             p["semantic"][2]]} for p in record["perturbations"]]}
    report = verify_contrast_sets([mangled], {"img": NEGATED})
    assert any("also changed its name: 'not(red)' -> 'not'" in f.problem for f in report.failures), report.failures
    steps = [{"operation": "select", "argument": "truck (2)", "dependencies": []},
             {"operation": "filter color", "argument": "not(red)", "dependencies": [0]},
             {"operation": "exist", "argument": "?", "dependencies": [1]}]
    with pytest.raises(EvidenceProblem, match="nothing in the graph shows that object 2 is not 'red'"):
        execute_program(steps, GraphIndex(NEGATED), load_rules())


def _rel(name: str, x: int, *edges: tuple[str, str], attributes: tuple[str, ...] = ()) -> dict:
    return {**_box(x, 200), "name": name, "attributes": list(attributes),
            "relations": [{"name": r, "object": o} for r, o in edges]}


WORN = {"width": 640, "height": 480, "objects": {
    "1": _rel("man", 20, ("wearing", "2"), ("holding", "5")),
    "2": _rel("coat", 60, attributes=("black",)),
    "3": _rel("boy", 300, ("wearing", "4"), ("holding", "6")),
    "4": _rel("socks", 340, attributes=("white",)),
    "5": _rel("umbrella", 120),
    "6": _rel("bat", 400)}}


def _what(text: str, answer: str, relation: str, thing: str, detailed: str = "relO") -> dict:
    return {"question": text, "answer": answer, "imageId": "img",
            "types": {"structural": "query", "semantic": "rel", "detailed": detailed},
            "annotations": {"question": {"3": "1"}},
            "semantic": [{"operation": "select", "argument": "man (1)", "dependencies": []},
                         {"operation": "relate", "argument": f"_,{relation},o ({thing})", "dependencies": [0]},
                         {"operation": "query", "argument": "name", "dependencies": [1]}]}


WORN_QUESTIONS = {
    "w1": _what("What is the man wearing?", "coat", "wearing", "2"),
    "w2": _what("What is the man holding?", "umbrella", "holding", "5"),
    "w3": _filtered("Which kind of clothing is black?", "coat", "clothing (2)", "black", "categoryThat"),
    "w4": _filtered("Is there any clothing that is red?", "no", "clothing (-)", "red", "existAttr"),
}


def test_a_new_object_of_a_kind_graphs_leave_out_is_not_claimed_the_only_one():
    """"What is the boy wearing? socks" would say the socks are all he wears, and "Which kind of
    clothing is white? socks" that nothing else is white clothing: a shirt may be missing from the
    graph (clothing is unannotated-prone), so neither is made. What the boy holds is no such
    kind: "What is the boy holding? bat" is; nor does "Is there any clothing that is white? yes"
    say the socks are the only white clothing, only that some is there."""
    gen = generate(WORN_QUESTIONS, {"img": WORN}, engine=Engine.load(), max_k=5, seed=0, workers=1, mode="programs")
    made = {r["question_id"]: {(p["question"], p["answer"]) for p in r["perturbations"]} for r in gen.records}
    assert ("What is the boy holding?", "bat") in made["w2"]
    assert ("Is there any clothing that is white?", "yes") in made["w4"]
    assert not any(answer == "socks" for answers in made.values() for _, answer in answers), made
    assert not any("white" in question for question, _ in made.get("w3", ())), made
    assert verify_contrast_sets(gen.records, {"img": WORN}).ok


def _record(qid: str, question: dict, words: str, answer: str, change: dict, semantic: list, facts: list) -> dict:
    """A program-path record of `question` with one perturbation as the engine would write it:
    what a test forges to see the verifier refuse what the engine no longer makes."""
    step = int(change["slot"][4:])
    return {"question_id": qid, "image_id": "img", "template": "program", "answer": question["answer"],
            "question": question["question"], "semantic": question["semantic"], "grounding": {}, "slots": {},
            "types": question["types"], "perturbations": [{
                "question_id": f"{qid}_p1", "rank": 1, "kind": "contrast", "answer": answer, "question": words,
                "change": change, "semantic": semantic,
                "evidence": {"version": 1, "query": {"op": "program", "step": step}, "answer": answer, "facts": facts}}]}


def test_the_verifier_fails_a_new_object_of_a_kind_graphs_leave_out():
    record = _record("w1", WORN_QUESTIONS["w1"], "What is the boy wearing?", "socks",
                     {"kind": "object", "slot": "step0", "from": "man", "to": "boy"},
                     [{"operation": "select", "argument": "boy (3)", "dependencies": []},
                      {"operation": "relate", "argument": "_,wearing,o (4)", "dependencies": [0]},
                      {"operation": "query", "argument": "name", "dependencies": [1]}],
                     [{"fact": "object", "id": "3", "name": "boy"}, {"fact": "object", "id": "4", "name": "socks"},
                      {"fact": "only", "names": ["boy", "boys"], "ids": ["3"]}])
    report = verify_contrast_sets([record], {"img": WORN})
    assert [f.problem for f in report.failures] == [
        "step 1 now refers to ['4'], of a kind scene graphs leave out: that no other is there is not shown"]
    # the original's own object, under another name of the man, is what its words vouch for
    same = {**record["perturbations"][0], "kind": "invariance", "answer": "coat", "question": "What is the person wearing?",
            "change": {"kind": "object", "slot": "step0", "from": "man", "to": "person"},
            "semantic": [{"operation": "select", "argument": "person (1)", "dependencies": []},
                         {"operation": "relate", "argument": "_,wearing,o (2)", "dependencies": [0]},
                         {"operation": "query", "argument": "name", "dependencies": [1]}]}
    report = verify_contrast_sets([{**record, "perturbations": [same]}], {"img": WORN})
    assert not any("leave out" in f.problem for f in report.failures)


FURNITURE = {"width": 640, "height": 480, "objects": {
    "1": _rel("cabinet", 20, attributes=("black",)),
    "2": _rel("bench", 200, attributes=("gray",)),
    "3": _rel("bed", 400)}}
BLACK_FURNITURE = _filtered("Which kind of furniture is black?", "cabinet", "furniture (1)", "black", "categoryThat")


def test_a_new_filter_value_says_what_it_leaves_out_lacks_it():
    """"Which kind of furniture is gray? bench" says the bed is not gray: not made while the bed
    is listed with no colour, made once its one colour is another."""
    def made(graph: dict) -> set:
        gen = generate({"q": BLACK_FURNITURE}, {"img": graph}, engine=Engine.load(), max_k=5, seed=0, workers=1,
                       mode="programs")
        assert verify_contrast_sets(gen.records, {"img": graph}).ok
        return {(p["question"], p["answer"]) for r in gen.records for p in r["perturbations"]}

    assert ("Which kind of furniture is gray?", "bench") not in made(FURNITURE)
    brown_bed = {**FURNITURE, "objects": {**FURNITURE["objects"], "3": _rel("bed", 400, attributes=("brown",))}}
    assert ("Which kind of furniture is gray?", "bench") in made(brown_bed)


def test_the_verifier_fails_a_filter_whose_left_out_objects_may_have_its_value():
    # the program lists only the bench's id at the select: the verifier reads it by the words
    record = _record("f", BLACK_FURNITURE, "Which kind of furniture is gray?", "bench",
                     {"kind": "attribute", "slot": "step1", "from": "black", "to": "gray"},
                     [{"operation": "select", "argument": "furniture (2)", "dependencies": []},
                      {"operation": "filter color", "argument": "gray", "dependencies": [0]},
                      {"operation": "query", "argument": "name", "dependencies": [1]}],
                     [{"fact": "object", "id": "1", "name": "cabinet"},
                      {"fact": "object", "id": "2", "name": "bench", "attributes": ["gray"]},
                      {"fact": "object", "id": "3", "name": "bed"}])
    report = verify_contrast_sets([record], {"img": FURNITURE})
    assert [f.problem for f in report.failures] == [
        "step 1 says its objects are the only 'gray' ones: nothing in the graph shows that object 3 is not "
        "'gray' (no opposite, and no single other value of a single-valued type)"]


def test_a_question_refused_only_for_kinds_graphs_leave_out_is_counted_so():
    """"What is the man wearing?" where the only other thing worn is socks: no candidate fails
    for want of one, so the question is counted `unannotated_prone`, not `no_distractor`; what
    the man holds has a candidate that is no such kind."""
    gen = generate({k: WORN_QUESTIONS[k] for k in ("w1", "w2")}, {"img": WORN}, engine=Engine.load(), max_k=5, seed=0,
                   workers=1, mode="programs")
    assert gen.stats["templates"]["program"]["reasons"] == {"unannotated_prone": 1}
    bare = {**WORN, "objects": {k: v for k, v in WORN["objects"].items() if k != "4"}}
    bare["objects"]["3"] = _rel("boy", 300, ("holding", "6"))
    gen = generate({"w1": WORN_QUESTIONS["w1"]}, {"img": bare}, engine=Engine.load(), max_k=5, seed=0, workers=1,
                   mode="programs")
    assert gen.stats["templates"]["program"]["reasons"] == {"no_distractor": 1}


@pytest.mark.parametrize("dependencies", [5, "0", {"0": 1}, None, [0.5]])
def test_a_program_whose_dependencies_are_not_step_numbers_fails_verify_without_a_crash(dependencies):
    """A hostile record: every step's `dependencies` replaced, in the original and the edit. Each
    check reads them through one guard, and the executor names what is wrong."""
    gen = generate({"w2": WORN_QUESTIONS["w2"]}, {"img": WORN}, engine=Engine.load(), max_k=5, seed=0, workers=1,
                   mode="programs")
    record = copy.deepcopy(gen.records[0])  # the original's steps may be the fixture's own
    for steps in (record["semantic"], *(p["semantic"] for p in record["perturbations"])):
        for step in steps:
            step["dependencies"] = dependencies
    report = verify_contrast_sets([record], {"img": WORN})
    assert not report.ok
    assert any("does not execute" in f.problem for f in report.failures), report.failures


def _exists(name: str, value: str, at: int) -> list[tuple[str, str, list[int]]]:
    return [("select", name, []), ("filter color", value, [at]), ("exist", "?", [at + 1])]


@pytest.mark.parametrize("op, first, second, answer", [
    ("or", ("cup (6)", "red"), ("sky (-)", "red"), "yes"),  # the red cup: the sky decides nothing
    ("and", ("sky (-)", "red"), ("cup (6)", "red"), None),  # the "no" rests on the sky, never absent
    ("or", ("table (4)", "red"), ("sky (-)", "red"), None),  # both "no"s count
    ("and", ("table (4)", "red"), ("sky (-)", "red"), None),  # so do both of an `and`
    ("and", ("cup (6)", "red"), ("table (4)", "red"), "no"),  # the brown table is shown not red
])
def test_the_answer_rests_on_what_decides_it(op, first, second, answer):
    """An `or` that says yes rests on an input that says yes, an `and` that says no on an input
    that says no: only there must a "no" be shown (the sky, unannotated-prone, is never shown
    absent; the brown table is shown not red)."""
    program = _exists(*first, 0) + _exists(*second, 3) + [(op, "", [2, 5])]
    if answer is None:
        with pytest.raises(EvidenceProblem, match="sky"):
            _run(program)
    else:
        assert _run(program) == answer


def test_the_engine_proves_only_what_the_answer_rests_on():
    """"Are there red doors or windows? no": the door is listed with no colour and windows are
    not shown absent, so no "no" can be made; "red kites or windows? yes" rests on the red kite."""
    graph = {"width": 640, "height": 480, "objects": {
        "1": {**_box(20, 20), "name": "door", "attributes": []},
        "2": {**_box(300, 40), "name": "kite", "attributes": ["red"]},
        "3": {**_box(500, 300), "name": "lamp", "attributes": ["white"]}}}
    question = {"imageId": "img", "question": "Are there red doors or windows?", "answer": "no",
                "semantic": [{"operation": "select", "argument": "door (1)", "dependencies": []},
                             {"operation": "filter color", "argument": "red", "dependencies": [0]},
                             {"operation": "exist", "argument": "?", "dependencies": [1]},
                             {"operation": "select", "argument": "windows (-) ", "dependencies": []},
                             {"operation": "filter color", "argument": "red", "dependencies": [3]},
                             {"operation": "exist", "argument": "?", "dependencies": [4]},
                             {"operation": "or", "argument": "", "dependencies": [2, 5]}]}
    gen = generate({"q1": question}, {"img": graph}, engine=Engine.load(), max_k=5, seed=0, workers=1, mode="programs")
    made = {(p["question"], p["answer"]) for r in gen.records for p in r["perturbations"]}
    assert ("Are there red kites or windows?", "yes") in made
    assert all(answer == "yes" for _, answer in made)
    assert verify_contrast_sets(gen.records, {"img": graph}).ok
