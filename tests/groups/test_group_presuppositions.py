"""A group's cells on the second image J must make sense there: what the words presuppose ("the
lamp" a question asks of, the lamp "near the lamp" anchors on) denotes an object of J, by the rules
it meets on I; a bare absence ("Is there a lamp?") may still be asked of a J without one. The
generator never emits such a cell, and `verify` turns one down with its own code."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from contrastgen.engine import Engine
from contrastgen.groups.index import GroupIndex
from contrastgen.groups.search import GroupFinder
from contrastgen.run.generate import generate
from contrastgen.scene.index import SceneIndex
from contrastgen.verify.checker import verify_contrast_sets
from contrastgen.verify.graph import GraphIndex
from contrastgen.verify.groups import group_problems, presupposed
from contrastgen.verify.rules import load_rules


@pytest.fixture(scope="module")
def engine():
    return Engine.load()


def _object(name, x, attributes=(), relations=()):
    return {"name": name, "x": x, "y": 100, "w": 60, "h": 60, "attributes": list(attributes),
            "relations": [{"name": r, "object": o} for r, o in relations]}


def _graph(objects):
    return {"width": 640, "height": 480, "objects": objects}


# I: a lamp with a sofa near it; J candidates: a court with no lamp, a room with a lamp and no
# sofa, a room with a blue lamp (and a red car: an image with a lamp and something red)
_GRAPHS = {
    "I": _graph({"1": _object("lamp", 400, ["red"], [("near", "2")]),
                 "2": _object("couch", 100, ["brown"], [("near", "1")])}),
    "court": _graph({"11": _object("racket", 100, ["black"], [("near", "12")]),
                     "12": _object("net", 300, ["white"], [("near", "11")])}),
    "room": _graph({"21": _object("lamp", 400, ["red"], [("near", "22")]),
                    "22": _object("table", 100, ["wooden"], [("near", "21")])}),
    "blue": _graph({"31": _object("lamp", 400, ["blue"], [("near", "32")]),
                    "32": _object("car", 100, ["red"], [("near", "31")])}),
}

_SOFA = [{"operation": "select", "argument": "lamp (1)", "dependencies": []},
         {"operation": "relate", "argument": "couch,near,s (2)", "dependencies": [0]},
         {"operation": "exist", "argument": "?", "dependencies": [1]}]
_PICTURE = [{"operation": "select", "argument": "lamp (1)", "dependencies": []},
            {"operation": "relate", "argument": "picture,near,s (-)", "dependencies": [0]},
            {"operation": "exist", "argument": "?", "dependencies": [1]}]


def _red(program):
    """The same question of "the red lamp"."""
    select, relate, exist = copy.deepcopy(program)
    relate["dependencies"], exist["dependencies"] = [1], [2]
    return [select, {"operation": "filter color", "argument": "red", "dependencies": [0]}, relate, exist]


def _search(engine, images, q=_SOFA, p=_PICTURE):
    graphs = {i: _GRAPHS[i] for i in images}
    finder = GroupFinder(GroupIndex.build(graphs, engine.lex), engine.lex)
    reasons: Counter = Counter()
    original = finder.original(q, "yes", SceneIndex.build("I", graphs["I"], engine.lex), reasons)
    assert original is not None
    return finder.find(original, p, "no", 0, reasons), reasons


def test_what_a_relation_is_anchored_on_is_presupposed_a_bare_absence_is_not():
    assert presupposed(_SOFA) == {0}  # the lamp, not the sofa an `exist` asks after
    assert presupposed(_red(_SOFA)) == {0, 1}  # "the red lamp": the lamps it is filtered from too
    assert presupposed(_SOFA[:1] + [{"operation": "exist", "argument": "?", "dependencies": [0]}]) == set()


def test_no_group_is_found_on_an_image_without_the_anchor(engine):
    found, reasons = _search(engine, ["I", "court"])
    assert found is None  # "Is there a sofa near the lamp? no" on a tennis court asks of no lamp
    assert reasons["no_candidate"] == 1  # the index knows the court has no lamp: it is not executed


def test_an_image_with_the_anchor_makes_the_group(engine):
    found, _ = _search(engine, ["I", "court", "room"])
    assert found is not None
    kind, image, on_q, on_p = found
    assert (kind, image, on_q.answer, on_p.answer) == ("differs", "room", "no", "no")
    assert on_q.semantic[0]["argument"] == "lamp (21)"


def test_a_bare_absence_is_still_asked_of_an_image_without_the_object(engine):
    lamp = [_SOFA[0], {"operation": "exist", "argument": "?", "dependencies": [0]}]
    picture = [{**_SOFA[0], "argument": "picture (-)"}, lamp[1]]
    found, _ = _search(engine, ["I", "court"], lamp, picture)
    assert found is not None  # "Is there a lamp? no" on the court: the graph shows there is none
    assert (found[1], found[2].answer, found[3].answer) == ("court", "no", "no")


def test_an_anchor_its_filter_leaves_empty_is_refused_and_counted(engine):
    # the blue room has a lamp and something red: the index passes it, the red lamp is not there
    found, reasons = _search(engine, ["I", "blue"], _red(_SOFA), _red(_PICTURE))
    assert found is None
    assert reasons["presupposed_absent"] == 1


def _record(q, p, image_j, on_j):
    """A record of I with one perturbation whose group puts both questions on `image_j` with the
    programs `on_j` (Q's, Q''s) and answer "no"."""
    rec = {"question_id": "q1", "image_id": "I", "question": "Is there a sofa near the lamp?", "answer": "yes",
           "semantic": q}
    pert = {"question_id": "q1_n1", "question": "Is there a picture near the lamp?", "answer": "no", "semantic": p}
    cells = [{"question_id": qid, "image_id": image_j, "question": words, "answer": "no", "semantic": sem,
              "evidence": {"version": 1, "facts": [], "answer": "no"}}
             for qid, words, sem in (("q1_n1_gq", rec["question"], on_j[0]), ("q1_n1_gp", pert["question"], on_j[1]))]
    pert["group"] = {"id": "q1_n1_g", "kind": "differs", "images": ["I", image_j],
                     "cells": [{"question_id": "q1", "image_id": "I", "question": rec["question"], "answer": "yes"},
                               {"question_id": "q1_n1", "image_id": "I", "question": pert["question"],
                                "answer": "no"}, *cells]}
    return rec, pert


def _unlisted(program):
    """The program with every reference listing no object ("lamp (-)"), as a cell on an image
    without them was written."""
    return [{**s, "argument": s["argument"].rpartition(" (")[0] + " (-)"} if s["operation"] in ("select", "relate")
            else s for s in program]


def _with(program, argument):
    return [{**program[0], "argument": argument}, *program[1:]]


def test_verify_turns_down_a_cell_whose_anchor_is_not_on_the_image():
    graphs = {i: GraphIndex(g) for i, g in _GRAPHS.items()}
    rules = load_rules()
    bare, bare_p = _unlisted(_SOFA), _unlisted(_PICTURE)
    problems = group_problems(*_record(_SOFA, _PICTURE, "court", (bare, bare_p)), graphs.get, rules)
    assert sum("presuppose" in why for _, why in problems) == 2, problems
    # the same group on the room, whose lamp the cells list, holds
    on_room = (_with(bare, "lamp (21)"), _with(bare_p, "lamp (21)"))
    assert group_problems(*_record(_SOFA, _PICTURE, "room", on_room), graphs.get, rules) == []


# -- the example of issue 44: group 240000302_n1_g asked "Is there a sofa near the lamp?" of 2400117,
# a tennis court with no lamp

@pytest.fixture(scope="module")
def grouped(engine, sample):
    questions, graphs = sample
    return generate(questions, graphs, engine=engine, max_k=5, seed=0, workers=1, groups=True)


def _lamps(graph):
    return [o for o in graph["objects"].values() if o["name"] == "lamp"]


def test_the_sample_groups_the_lamp_question_only_on_images_with_a_lamp(grouped, sample):
    graphs = sample[1]
    assert not _lamps(graphs["2400117"])
    pairs = [p for r in grouped.records if r["question_id"] == "240000302" for p in r["perturbations"]]
    assert any(p["question_id"] == "240000302_n1" for p in pairs)
    groups = [p["group"] for p in pairs if "group" in p]
    assert groups, "the lamp question is grouped on an image with a lamp"
    for g in groups:
        assert len(_lamps(graphs[g["images"][1]])) == 1, g["id"]
        for cell in g["cells"][2:]:
            assert cell["semantic"][0]["argument"].startswith("lamp (") and "-" not in cell["semantic"][0]["argument"]
    assert verify_contrast_sets(grouped.records, graphs).ok


def test_verify_turns_down_the_sample_example(grouped, sample):
    graphs = sample[1]
    rec = copy.deepcopy(next(r for r in grouped.records if r["question_id"] == "240000302"))
    p = next(p for p in rec["perturbations"] if p["question_id"] == "240000302_n1")
    # the group as it was written: both questions on the tennis court, the lamp selecting nothing
    q_on_j, p_on_j = _unlisted(rec["semantic"]), _unlisted(p["semantic"])
    evidence = {"version": 1, "facts": [], "answer": "no"}
    p["group"] = {"id": "240000302_n1_g", "kind": "differs", "images": ["2400003", "2400117"], "cells": [
        {"question_id": "240000302", "image_id": "2400003", "question": rec["question"], "answer": rec["answer"]},
        {"question_id": "240000302_n1", "image_id": "2400003", "question": p["question"], "answer": p["answer"]},
        {"question_id": "240000302_n1_gq", "image_id": "2400117", "question": rec["question"], "answer": "no",
         "semantic": q_on_j, "evidence": evidence},
        {"question_id": "240000302_n1_gp", "image_id": "2400117", "question": p["question"], "answer": "no",
         "semantic": p_on_j, "evidence": evidence}]}
    rec["perturbations"] = [p]
    report = verify_contrast_sets([rec], graphs)
    problems = [f.problem for f in report.failures if f.check == "group"]
    assert len(problems) == 2 and all("'lamp'" in why and "presuppose" in why for why in problems), problems


def test_the_rule_is_a_reason_the_stats_can_count(grouped):
    from contrastgen.groups.search import REASONS

    assert "presupposed_absent" in REASONS
    assert set(grouped.stats["groups"]["reasons"]) <= set(REASONS)
