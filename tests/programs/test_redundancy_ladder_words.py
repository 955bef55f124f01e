"""A ladder rung's words say exactly its program, and `verify` reads them as GQA writes them.

Three cases from real GQA phrasing: one attribute word said for two references ("Do you see any
white street signs or cars?", GQA's program filters `white` on both), a word repeated around the
removed relation ("Is the skier wearing a scarf wearing a sneaker?"), and program arguments with
GQA's trailing space (`verify color: white `, `verify: comfortable `)."""

from __future__ import annotations

import copy

import pytest

import contrastgen.programs.redundancy_ladder as ladder_module
from contrastgen.language.lexicon import Lexicon
from contrastgen.programs.executor import GqaExecutor, parse_program
from contrastgen.programs.redundancy_ladder import (
    WORDS_UNSAID,
    LadderConfig,
    build_ladder,
    write_ladder,
)
from contrastgen.programs.said_filters import unsaid_filters
from contrastgen.scene.index import SceneIndex
from contrastgen.verify.checker import index_graph
from contrastgen.verify.gqa_redundancy import said_filter_problems, verify_ladder
from contrastgen.verify.program import execute_program
from contrastgen.verify.program_edits import word_problems
from contrastgen.verify.rules import load_rules


def _step(operation: str, argument: str, deps: list[int]) -> dict:
    return {"operation": operation, "argument": argument, "dependencies": deps}


def _obj(name, x, attributes, relations=()):
    return {"name": name, "x": x, "y": 200, "w": 60, "h": 60, "attributes": list(attributes),
            "relations": [{"name": r, "object": o} for r, o in relations]}


GRAPHS = {"img3": {"width": 800, "height": 600, "objects": {
    "1": _obj("skier", 100, ["young"], [("wearing", "2"), ("wearing", "3")]),
    "2": _obj("scarf", 120, ["red"]),
    "3": _obj("sneaker", 130, ["white"]),
    "4": _obj("street sign", 500, ["white"]),
    "5": _obj("car", 700, ["large", "white"]),
    "6": _obj("couch", 300, ["comfortable", "large", "brown"]),
    "7": _obj("fence", 600, ["wood"]),
}}}


def _q(text: str, answer: str, semantic: list[dict]) -> dict:
    return {"imageId": "img3", "question": text, "answer": answer, "semantic": semantic,
            "types": {"detailed": "x", "semantic": "attr", "structural": "verify"}}


SIGNS = _q("Do you see any white street signs or cars?", "yes",
           [_step("select", "street sign (4)", []), _step("filter color", "white", [0]), _step("exist", "?", [1]),
            _step("select", "car (5) ", []), _step("filter color", "white", [3]), _step("exist", "?", [4]),
            _step("or", "", [2, 5])])
# the same program where the words say each reference's value: the sign's "white" may go
SIGNS_APART = _q("Do you see any white street signs or wood fences?", "yes",
                 [_step("select", "street sign (4)", []), _step("filter color", "white", [0]), _step("exist", "?", [1]),
                  _step("select", "fence (7)", []), _step("filter material", "wood", [3]), _step("exist", "?", [4]),
                  _step("or", "", [2, 5])])
SKIER = _q("Is the skier wearing a scarf wearing a sneaker?", "yes",
           [_step("select", "scarf (2)", []), _step("relate", "skier,wearing,s (1)", [0]),
            _step("verify rel", "sneaker,wearing,o (3)", [1])])
WHITE = _q("Is the large car white?", "yes",
           [_step("select", "car (5)", []), _step("filter size", "large", [0]), _step("verify color", "white ", [1])])
COMFORTABLE = _q("Is the large couch comfortable?", "yes",
                 [_step("select", "couch (6)", []), _step("filter size", "large", [0]),
                  _step("verify", "comfortable ", [1])])


@pytest.fixture(scope="module")
def lex():
    return Lexicon.load()


def _build(lex, questions: dict):
    return build_ladder(copy.deepcopy(questions), GRAPHS, LadderConfig(), lex=lex)


def _rungs(build) -> dict[str, str]:
    return {qid: r["question"] for level in build.levels[1:] for qid, r in level.items()}


def test_a_word_said_for_two_references_does_not_go_with_one_of_their_filters(lex):
    build = _build(lex, {"signs": SIGNS, "apart": SIGNS_APART})
    # the editor proves "white" redundant for the only street sign, but the words say it of the
    # cars too, whose filter stays: "Do you see any street signs or cars?" would not say it
    assert _rungs(build) == {"apart_rd1": "Do you see any street signs or wood fences?",
                             "apart_rd2": "Do you see any street signs or fences?"}
    assert build.stats()["removals_refused"] == {WORDS_UNSAID: 1}
    assert set(build.levels[0]) == {"signs", "apart"}


def test_verify_rejects_a_rung_whose_words_drop_a_filter_its_program_keeps(lex, tmp_path, monkeypatch):
    monkeypatch.setattr(ladder_module, "_words_say_program", lambda p, below: True)  # the rung as it was made
    build = _build(lex, {"signs": SIGNS})
    assert _rungs(build) == {"signs_rd1": "Do you see any street signs or cars?"}
    write_ladder(build, tmp_path / "ladder")
    failures = verify_ladder(tmp_path / "ladder", GRAPHS).failures
    assert [(f.question_id, f.check) for f in failures] == [("signs_rd1", "text_mismatch")]
    assert "no longer say 'white'" in failures[0].problem


def test_the_words_check_reads_both_ways_and_inherits_gqa_s_own_wording():
    below, kept = SIGNS["semantic"], [s for j, s in enumerate(SIGNS["semantic"]) if j != 1]
    kept = [{**s, "dependencies": [0] if s["operation"] == "exist" and s["dependencies"] == [1] else
             [d - 1 for d in s["dependencies"]]} for s in kept]
    dropped_words = "Do you see any street signs or cars?"
    assert unsaid_filters(SIGNS["question"], below, dropped_words, kept) == ["white"]
    assert said_filter_problems(SIGNS, {"question": dropped_words, "semantic": kept})
    # words that still say a value the program no longer has ("added")
    none = [s for s in kept if s["operation"] != "filter color"]
    assert unsaid_filters(SIGNS["question"], below, "Do you see any white street signs or cars?", none) == ["white"]
    # GQA says `wood` as "wooden": the original disagrees already, so the rung is not blamed
    wooden = [_step("select", "fence (7)", []), _step("filter material", "wood", [0]), _step("exist", "?", [1])]
    assert unsaid_filters("Is there a wooden fence?", wooden, "Is there a wooden fence?", wooden) == []


def test_a_relation_between_repeated_words_is_removed_and_verified(lex, tmp_path):
    build = _build(lex, {"skier": SKIER})
    assert _rungs(build) == {"skier_rd1": "Is the skier wearing a sneaker?"}
    assert build.levels[1]["skier_rd1"]["ladder"]["change"]["from"] == "wearing a scarf"
    assert build.stats()["removals_refused"] == {WORDS_UNSAID: 0}
    write_ladder(build, tmp_path / "ladder")
    report = verify_ladder(tmp_path / "ladder", GRAPHS)
    assert report.ok and report.checked == 1, report.failures


def test_the_word_comparison_tries_every_alignment_of_repeated_words():
    change = {"kind": "relation", "slot": "step1", "from": "wearing a scarf", "to": ""}
    assert word_problems(SKIER["question"], "Is the skier wearing a sneaker?", change) == []
    # still one run: words dropped elsewhere, or another run than the change, fail
    assert word_problems(SKIER["question"], "Is the skier a sneaker?", change)
    assert word_problems(SKIER["question"], "Is the skier wearing a scarf?",
                         {**change, "from": "wearing a sneaker"}) == []
    assert word_problems(SKIER["question"], "Is the skier wearing a scarf?", change)


@pytest.mark.parametrize("operation,argument,attributes,answer", [
    ("verify color", "white ", ["white", "large"], "yes"),
    ("verify", "comfortable ", ["comfortable"], "yes"),
    ("verify", "clean ", ["dirty"], "no"),
    ("verify  color ", " white", ["white"], "yes"),
])
def test_verify_s_executor_reads_arguments_as_the_generator_does(lex, operation, argument, attributes, answer):
    graph = {"width": 640, "height": 480, "objects": {"1": _obj("couch", 40, attributes)}}
    semantic = [_step("select", "couch (1) ", []), _step(operation, argument, [0])]
    ours = GqaExecutor(SceneIndex.build("g", graph, lex), lex, graph).run_steps(parse_program(semantic)).answer
    theirs, _ = execute_program(semantic, index_graph("g", graph), load_rules())
    assert ours == theirs == answer


def test_verify_s_untyped_no_must_be_shown():
    graph = {"width": 640, "height": 480, "objects": {"1": _obj("couch", 40, ["brown"])}}
    semantic = [_step("select", "couch (1)", []), _step("verify", "comfortable ", [0])]
    with pytest.raises(Exception, match="nothing in the graph shows"):
        execute_program(semantic, index_graph("g", graph), load_rules())


def test_rungs_over_arguments_with_a_trailing_space_verify(lex, tmp_path):
    build = _build(lex, {"white": WHITE, "comfortable": COMFORTABLE})
    assert _rungs(build) == {"white_rd1": "Is the car white?", "comfortable_rd1": "Is the couch comfortable?"}
    write_ladder(build, tmp_path / "ladder")
    report = verify_ladder(tmp_path / "ladder", GRAPHS)
    assert report.ok and report.checked == 2, report.failures
