"""Property: on random GQA-like scene graphs (duplicated names, contradictory edges) and GQA-like
phrasings (modifiers, look-alikes, programs that agree or not), every perturbation the engine
emits passes the independent verifier, its word and program checks included, and answers what
the gold answer did not."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contrastgen.evaluation.oracle import oracle_answer
from contrastgen.verify.checker import verify_contrast_sets

NAMES = ["dog", "cat", "chair", "table", "sofa", "car", "bus", "tree", "fence", "puddle", "lamp", "cup",
         "bowl", "horse", "boy", "man", "woman", "helmet", "bench", "shirt", "wall", "water", "jeans",
         "bananas", "motorbike", "glasses", "umbrella", "elephant"]
COLOURS = ["red", "blue", "white", "black", "green", "brown", "yellow"]
SPATIAL = {"to the left of": "to the right of", "to the right of": "to the left of",
           "above": "below", "below": "above", "in front of": "behind", "behind": "in front of"}


@st.composite
def scene_graphs(draw):
    n = draw(st.integers(2, 9))
    width = 640
    objects = {}
    for i in range(n):
        x = draw(st.integers(0, width - 40))
        attrs = draw(st.lists(st.sampled_from(COLOURS + ["wooden", "large"]), max_size=2, unique=True))
        objects[str(i)] = {"name": draw(st.sampled_from(NAMES)), "x": x, "y": draw(st.integers(0, 400)),
                           "w": draw(st.integers(5, 60)), "h": 30, "attributes": attrs, "relations": []}
    ids = list(objects)
    for _ in range(draw(st.integers(0, 2 * n))):
        a, b = draw(st.sampled_from(ids)), draw(st.sampled_from(ids))
        if a == b:
            continue
        rel = draw(st.sampled_from(list(SPATIAL) + ["near", "holding"]))
        objects[a]["relations"].append({"name": rel, "object": b})
        back = SPATIAL.get(rel) or ("near" if rel == "near" else None)
        if back:
            objects[b]["relations"].append({"name": back, "object": a})
    return {"width": width, "height": 480, "objects": objects}


def questions_for(graph, draw):
    """Template questions and GQA's look-alikes, with its noise: modifiers on both slots, "in this
    picture", possessives, attributes; relation and near questions sometimes with a program."""
    names = [o["name"] for o in graph["objects"].values()]
    pick = lambda: draw(st.sampled_from(names + NAMES))  # noqa: E731 - present or maybe absent
    rel = draw(st.sampled_from(list(SPATIAL) + ["near"]))
    colour = draw(st.sampled_from(COLOURS))
    texts = [
        f"On which side is the {pick()}?",
        f"What color is the {pick()}?",
        f"What color is the {pick()} the {pick()} is holding?",
        f"Do you see {pick()} or {pick()}?",
        f"Is there a {pick()} near the {pick()}?",
        f"Is there a {pick()} near the {pick()} that is {colour}?",
        f"Is the {pick()} {rel} the {pick()}?",
        f"Is the {colour} {pick()} {rel} the {pick()} in this picture?",
        f"Is the {pick()} {rel} the {pick()} holding the {pick()}?",
        f"Is the {pick()} that is {rel} the {pick()} wearing a {pick()}?",
        f"Is the {pick()}'s {pick()} {rel} the {pick()}?",
    ]
    questions = [{"imageId": "1", "question": t} for t in texts]
    ids = list(graph["objects"])
    x, y = draw(st.sampled_from(ids)), draw(st.sampled_from(ids))
    # a program's ids are GQA's annotation of the objects it asks about: mostly a pair the graph
    # relates (so that the program executes to the answer), sometimes any pair (it must be refused)
    related = sorted((a, r["object"]) for a, o in graph["objects"].items() for r in o["relations"]
                     if r["name"] in (rel, "near"))
    if related and draw(st.integers(0, 3)):
        x, y = draw(st.sampled_from(related))
    xn, yn = graph["objects"][x]["name"], graph["objects"][y]["name"]
    asked = draw(st.sampled_from([rel, rel, "holding"]))  # sometimes the program asks another relation
    questions.append({"imageId": "1", "question": f"Is the {xn} {rel} the {yn}?", "semantic": [
        {"operation": "select", "argument": f"{yn} ({y})", "dependencies": []},
        {"operation": "verify rel", "argument": f"{xn},{asked},s ({x})", "dependencies": [0]}]})
    questions.append({"imageId": "1", "question": f"Is there a {xn} near the {yn}?", "semantic": [
        {"operation": "select", "argument": f"{yn} ({y})", "dependencies": []},
        {"operation": "relate", "argument": f"{xn},near,s ({x})", "dependencies": [0]},
        {"operation": "exist", "argument": "?", "dependencies": [1]}]})
    return questions


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_emitted_perturbation_verifies(engine, data):
    graph = data.draw(scene_graphs())
    graphs = {"1": graph, "2": data.draw(scene_graphs())}
    corpus = engine.build_corpus(graphs)
    records = []
    for i, q in enumerate(questions_for(graph, data.draw)):
        q["answer"] = "?"
        gold = oracle_answer(q, graph, engine)
        if gold is None:
            continue
        q["answer"] = gold
        for res in engine.perturb_question(f"q{i}", q, graph, corpus=corpus, max_k=3):
            if (rec := res.to_record()) is not None:
                records.append(rec)
    _EMITTED.append(sum(len(r["perturbations"]) for r in records))
    _WITH_PROGRAM.append(sum("semantic" in p for r in records for p in r["perturbations"]))
    report = verify_contrast_sets(records, {"1": graph})  # the word and program checks included
    assert report.ok, report.failures
    for rec in records:
        assert "wearing" not in rec["question"] and "'s" not in rec["question"], "a look-alike was read"
        for p in rec["perturbations"]:
            assert p["answer"] != rec["answer"]
            assert oracle_answer({"imageId": "1", "question": p["question"], "answer": p["answer"],
                                  "contrast": {"evidence": p["evidence"]}}, graph, engine) == p["answer"]


_EMITTED: list[int] = []
_WITH_PROGRAM: list[int] = []


def test_property_run_was_not_vacuous(engine):
    """The property above must have exercised the engine: run it and count what it emitted."""
    _EMITTED.clear()
    _WITH_PROGRAM.clear()
    test_every_emitted_perturbation_verifies(engine)
    assert sum(1 for n in _EMITTED if n) >= 10, _EMITTED
    assert sum(1 for n in _WITH_PROGRAM if n) >= 3, _WITH_PROGRAM  # edited programs were checked too
