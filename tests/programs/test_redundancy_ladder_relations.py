"""The GQA ladder's rung that removes a redundant relation with its object (`programs.edits.
relation_removal`), and its re-check (`verify.program_edits.relation_removal_problems`), on
questions written the way GQA words them ("the cat in front of the wall", "the man that is to the
left of the umbrella"), with GQA's programs, over a small graph whose relations are known."""

from __future__ import annotations

import copy
import json

import pytest

from contrastgen.language.lexicon import Lexicon
from contrastgen.programs.edits.relation_removal import relation_span
from contrastgen.programs.redundancy_ladder import LadderConfig, build_ladder, write_ladder
from contrastgen.verify.gqa_redundancy import verify_ladder


def _step(operation: str, argument: str, deps: list[int]) -> dict:
    return {"operation": operation, "argument": argument, "dependencies": deps}


def _obj(name, x, attributes, relations=()):
    return {"name": name, "x": x, "y": 200, "w": 60, "h": 60, "attributes": list(attributes),
            "relations": [{"name": r, "object": o} for r, o in relations]}


GRAPHS = {"img2": {"width": 800, "height": 600, "objects": {
    "201": _obj("cat", 100, ["black"], [("in front of", "202")]),
    "202": _obj("wall", 300, ["red", "large"]),
    "203": _obj("man", 450, ["young"], [("to the left of", "204"), ("holding", "209")]),
    "204": _obj("umbrella", 550, ["blue"]),
    "208": _obj("man", 700, ["old"], [("to the right of", "204")]),
    "209": _obj("cup", 460, ["white"]),
}}}


def _q(text: str, answer: str, semantic: list[dict]) -> dict:
    return {"imageId": "img2", "question": text, "answer": answer, "semantic": semantic,
            "types": {"detailed": "x", "semantic": "rel", "structural": "query"}}


QUESTIONS = {
    "cat": _q("What color is the cat in front of the wall?", "black",
              [_step("select", "wall (202)", []), _step("relate", "cat,in front of,s (201)", [0]),
               _step("query", "color", [1])]),
    "clause": _q("Is the cat that is in front of the large wall black?", "yes",
                 [_step("select", "wall (202)", []), _step("filter size", "large", [0]),
                  _step("relate", "cat,in front of,s (201)", [1]), _step("verify color", "black", [2])]),
    # two men: "the man" alone is not the one left of the umbrella
    "needed": _q("What is the man to the left of the umbrella holding?", "cup",
                 [_step("select", "umbrella (204)", []), _step("relate", "man,to the left of,s (203)", [0]),
                  _step("relate", "_,holding,o (209)", [1]), _step("query", "name", [2])]),
    # GQA's words say "big" where its program says "large": not certain words for the object
    "other words": _q("What color is the cat in front of the big wall?", "black",
                      [_step("select", "wall (202)", []), _step("filter size", "large", [0]),
                       _step("relate", "cat,in front of,s (201)", [1]), _step("query", "color", [2])]),
    # no subject noun to keep: "What is in front of the wall?"
    "unnamed": _q("What is in front of the wall?", "cat",
                  [_step("select", "wall (202)", []), _step("relate", "_,in front of,s (201)", [0]),
                   _step("query", "name", [1])]),
}


@pytest.fixture(scope="module")
def built():
    return build_ladder(copy.deepcopy(QUESTIONS), GRAPHS, LadderConfig(), lex=Lexicon.load())


def _rungs(built):
    return {qid: r["question"] for level in built.levels[1:] for qid, r in level.items()}


def test_a_relation_that_narrows_nothing_is_removed_with_its_object(built):
    assert _rungs(built) == {"cat_rd1": "What color is the cat?", "clause_rd1": "Is the cat black?"}
    cat = built.levels[1]["cat_rd1"]
    assert cat["semantic"] == [_step("select", "cat (201)", []), _step("query", "color", [0])]
    assert cat["answer"] == "black" and cat["ladder"]["change"] == {
        "kind": "relation", "slot": "step1", "from": "in front of the wall", "to": ""}
    assert {"fact": "only", "names": ["cat", "cats"], "ids": ["201"]} in cat["ladder"]["evidence"]["facts"]
    # the object's reference is a select and a filter: both go with the relation, and the clause's words
    clause = built.levels[1]["clause_rd1"]
    assert clause["semantic"] == [_step("select", "cat (201)", []), _step("verify color", "black", [0])]
    assert clause["ladder"]["change"]["from"] == "that is in front of the large wall"


def test_a_needed_relation_or_uncertain_words_make_no_relation_rung(built):
    assert "needed_rd1" not in built.levels[1] and "unnamed_rd1" not in built.levels[1]
    # "big" is not the filter's "large": the words are not certainly the relation's object
    relation_rungs = [qid for level in built.levels[1:] for qid, r in level.items()
                      if r["ladder"]["change"]["kind"] == "relation"]
    assert sorted(relation_rungs) == ["cat_rd1", "clause_rd1"]


def test_the_words_of_a_relation_are_found_once_after_the_subject_noun():
    text = "Is the cat that is in front of the large wall black?"
    span = relation_span(text, "cat", "cats", "in front of", ["large"], "wall", "walls")
    assert text[span.start:span.end] == "that is in front of the large wall"
    assert relation_span(text, "cat", "cats", "in front of", [], "wall", "walls") is None  # "large" unsaid
    assert relation_span("Is the cat in front of the wall near the cat in front of the wall?", "cat", "cats",
                         "in front of", [], "wall", "walls") is None  # said twice: which one is unknown


def test_every_relation_rung_verifies(built, tmp_path):
    write_ladder(built, tmp_path / "ladder")
    report = verify_ladder(tmp_path / "ladder", GRAPHS)
    assert report.ok, report.failures
    assert report.checked == 2


def _tampered(built, tmp_path, edit) -> list[str]:
    out = tmp_path / "ladder"
    write_ladder(built, out)
    data = json.loads((out / "level_1.json").read_text())
    edit(data["cat_rd1"])
    (out / "level_1.json").write_text(json.dumps(data))
    return sorted({f.check for f in verify_ladder(out, GRAPHS).failures if f.question_id == "cat_rd1"})


def test_the_verifier_rejects_a_relation_rung_that_does_not_follow(built, tmp_path):
    def other_words(r):
        r["question"] = "What color is the black cat?"

    def object_kept(r):  # the program keeps the wall's step the words dropped
        r["semantic"] = [_step("select", "wall (202)", []), _step("select", "cat (201)", []),
                         _step("query", "color", [1])]

    def other_relation(r):  # the words removed are not the relation the program had
        r["ladder"]["change"]["from"] = "behind the wall"

    def no_only_fact(r):
        r["ladder"]["evidence"]["facts"] = [f for f in r["ladder"]["evidence"]["facts"] if f["fact"] != "only"]

    assert "text_mismatch" in _tampered(built, tmp_path, other_words)
    assert "program" in _tampered(built, tmp_path, object_kept)
    assert "text_mismatch" in _tampered(built, tmp_path, other_relation)
    assert _tampered(built, tmp_path, no_only_fact) == ["reference"]
