"""GQA's redundancy ladder (`ood gqa-redundancy`): the levels, their proof, `verify` and `evaluate --ood`.

The shared GQA sample has at most one attribute said before a noun per reference, so ladders
above level 1 are tested on questions written the way GQA words them ("On which side of the
picture is the large white car?", "Are there both a large white car and a wood fence in the
picture?"), with GQA's programs, over a small graph.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.errors import InputError
from contrastgen.language.lexicon import Lexicon
from contrastgen.ood import evaluate_ood
from contrastgen.programs.redundancy_ladder import LadderConfig, build_ladder, write_ladder
from contrastgen.verify.gqa_redundancy import verify_ladder

REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "gqa" / "val_balanced_questions_sample.json"


def _step(operation: str, argument: str, deps: list[int]) -> dict:
    return {"operation": operation, "argument": argument, "dependencies": deps}


GRAPHS = {"img1": {"width": 640, "height": 480, "objects": {
    "101": {"name": "car", "x": 40, "y": 200, "w": 200, "h": 120, "attributes": ["large", "white", "metal"],
            "relations": [{"name": "to the left of", "object": "102"}]},
    "102": {"name": "fence", "x": 400, "y": 180, "w": 200, "h": 100, "attributes": ["wood", "brown"],
            "relations": [{"name": "to the right of", "object": "101"}]},
    "103": {"name": "tree", "x": 300, "y": 20, "w": 100, "h": 150, "attributes": ["green", "tall"],
            "relations": []}}}}


def _q(text: str, answer: str, semantic: list[dict]) -> dict:
    return {"imageId": "img1", "question": text, "answer": answer, "semantic": semantic,
            "types": {"detailed": "x", "semantic": "attr", "structural": "query"}}


QUESTIONS = {
    "side": _q("On which side of the picture is the large white car?", "left",
               [_step("select", "car (101)", []), _step("filter color", "white", [0]),
                _step("filter size", "large", [1]), _step("query", "hposition", [2])]),
    "both": _q("Are there both a large white car and a wood fence in the picture?", "yes",
               [_step("select", "car (101)", []), _step("filter color", "white", [0]), _step("filter size", "large", [1]),
                _step("exist", "?", [2]), _step("select", "fence (102)", []), _step("filter material", "wood", [4]),
                _step("exist", "?", [5]), _step("and", "", [3, 6])]),
    "or": _q("Do you see any white cars or wood fences?", "yes",
             [_step("select", "car (101)", []), _step("filter color", "white", [0]), _step("exist", "?", [1]),
              _step("select", "fence (102)", []), _step("filter material", "wood", [3]), _step("exist", "?", [4]),
              _step("or", "", [2, 5])]),
    "made": _q("What is the large white vehicle made of?", "metal",
               [_step("select", "vehicle (101)", []), _step("filter color", "white", [0]),
                _step("filter size", "large", [1]), _step("query", "material", [2])]),
    "bare": _q("What color is the car?", "white", [_step("select", "car (101)", []), _step("query", "color", [0])]),
    # the only fence: the relation goes (level 1), then "wood" (level 2)
    "related": _q("Which color is the wood fence to the right of the car?", "brown",
                  [_step("select", "car (101)", []), _step("relate", "fence,to the right of,s (102)", [0]),
                   _step("filter material", "wood", [1]), _step("query", "color", [2])]),
    "wrong gold": _q("What material is the white car?", "plastic",
                     [_step("select", "car (101)", []), _step("filter color", "white", [0]),
                      _step("query", "material", [1])]),
    "no program": {"imageId": "img1", "question": "Is it sunny?", "answer": "yes"},
}


@pytest.fixture(scope="module")
def lex():
    return Lexicon.load()


@pytest.fixture(scope="module")
def built(lex):
    return build_ladder(copy.deepcopy(QUESTIONS), GRAPHS, LadderConfig(), lex=lex)


def _texts(build, level: int) -> dict[str, str]:
    return {r["ladder"]["original_id"]: r["question"] for r in build.levels[level].values()}


def test_each_level_removes_one_redundant_operation_and_keeps_the_answer(built):
    assert [len(level) for level in built.levels] == [6, 5, 5, 1]
    assert _texts(built, 1) == {"side": "On which side of the picture is the large car?",
                                "both": "Are there both a large car and a wood fence in the picture?",
                                "or": "Do you see any cars or wood fences?",
                                "made": "What is the large vehicle made of?",
                                "related": "Which color is the wood fence?"}
    assert _texts(built, 2) == {"side": "On which side of the picture is the car?",
                                "both": "Are there both a car and a wood fence in the picture?",
                                "or": "Do you see any cars or fences?",
                                "made": "What is the vehicle made of?",
                                "related": "Which color is the fence?"}
    assert _texts(built, 3) == {"both": "Are there both a car and a fence in the picture?"}
    for level in built.levels[1:]:
        for qid, r in level.items():
            original = built.levels[0][r["ladder"]["original_id"]]
            assert r["answer"] == original["answer"]
            assert len(r["semantic"]) == len(original["semantic"]) - r["ladder"]["level"]
            assert qid == f"{r['ladder']['original_id']}_rd{r['ladder']['level']}"
            assert "annotations" not in r and r["semanticStr"].startswith("select:")
    chain = built.levels[3]["both_rd3"]["ladder"]["chain"]
    assert [(c["operation"], c["value"]) for c in chain] == [("filter color", "white"), ("filter size", "large"),
                                                              ("filter material", "wood")]
    chain = built.levels[2]["related_rd2"]["ladder"]["chain"]
    assert [(c["operation"], c["value"]) for c in chain] == [("relate", "to the right of the car"),
                                                              ("filter material", "wood")]
    assert built.levels[1]["related_rd1"]["semantic"][0] == _step("select", "fence (102)", [])


def test_questions_without_a_removal_stay_at_level_0_and_unproven_ones_are_refused(built):
    stats = built.stats()
    assert stats["refused"] == {"answer_mismatch": 1, "no program": 1}
    assert set(built.levels[0]) == {"side", "both", "or", "made", "bare", "related"}
    assert stats["deepest_level"] == {"0": 1, "2": 4, "3": 1}
    assert stats["reaching"] == {"1": 5, "2": 5, "3+": 1}
    assert stats["questions_per_level"] == {"0": 6, "1": 5, "2": 5, "3": 1}
    assert stats["stopped"] == {"no redundant operation left": 6}


def test_the_removal_order_is_a_stated_rule(lex):
    last = build_ladder(copy.deepcopy(QUESTIONS), GRAPHS, LadderConfig(order="last"), lex=lex)
    assert _texts(last, 1)["both"] == "Are there both a large white car and a fence in the picture?"
    assert _texts(last, 3)["both"] == "Are there both a car and a fence in the picture?"
    capped = build_ladder(copy.deepcopy(QUESTIONS), GRAPHS, LadderConfig(max_level=1), lex=lex)
    assert len(capped.levels) == 2 and capped.stats()["stopped"]["max level"] == 5


def test_the_same_inputs_and_seed_give_byte_identical_files(lex, tmp_path):
    for run in ("a", "b"):
        write_ladder(build_ladder(copy.deepcopy(QUESTIONS), GRAPHS, LadderConfig(order="seeded", seed=3), lex=lex),
                     tmp_path / run)
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == ["level_0.json", "level_1.json", "level_2.json", "level_3.json", "manifest.json", "stats.json",
                     "stats.md"]
    assert all((tmp_path / "a" / n).read_bytes() == (tmp_path / "b" / n).read_bytes() for n in names)


def test_every_rung_verifies(built, tmp_path):
    write_ladder(built, tmp_path / "ladder")
    report = verify_ladder(tmp_path / "ladder", GRAPHS)
    assert report.ok, report.failures
    assert report.checked == 5 + 5 + 1


def _tampered(built, tmp_path, level: int, qid: str, edit) -> list[str]:
    out = tmp_path / "ladder"
    write_ladder(built, out)
    data = json.loads((out / f"level_{level}.json").read_text())
    edit(data[qid])
    (out / f"level_{level}.json").write_text(json.dumps(data))
    return [f.check for f in verify_ladder(out, GRAPHS).failures if f.question_id == qid]


def test_the_verifier_rejects_a_rung_whose_words_program_or_answer_do_not_follow(built, tmp_path):
    def reworded(r):
        r["question"] = "On which side is the car?"

    def other_step_dropped(r):  # the program drops "white" while the words and the change drop "large"
        r["semantic"] = [_step("select", "car (101)", []), _step("filter size", "large", [0]),
                         _step("query", "hposition", [1])]

    def other_answer(r):
        r["answer"] = "right"
        r["ladder"]["evidence"]["answer"] = "right"

    def broken_chain(r):
        r["ladder"]["chain"] = r["ladder"]["chain"][1:]

    def contrast(r):
        r["ladder"]["kind"] = "contrast"

    assert "text_mismatch" in _tampered(built, tmp_path, 2, "side_rd2", reworded)
    assert "program" in _tampered(built, tmp_path, 2, "side_rd2", other_step_dropped)
    assert "answer" in _tampered(built, tmp_path, 2, "side_rd2", other_answer)
    assert "ladder" in _tampered(built, tmp_path, 2, "side_rd2", broken_chain)
    assert "change" in _tampered(built, tmp_path, 1, "side_rd1", contrast)


def test_the_verifier_rejects_a_rung_whose_level_below_is_missing(built, tmp_path):
    out = tmp_path / "ladder"
    write_ladder(built, out)
    data = json.loads((out / "level_1.json").read_text())
    del data["side_rd1"]
    (out / "level_1.json").write_text(json.dumps(data))
    failures = verify_ladder(out, GRAPHS).failures
    assert [(f.question_id, f.check) for f in failures] == [("side_rd2", "ladder")]


@pytest.mark.parametrize("held", [4096, 0])  # 0: every rung's graph indexed again, none kept
def test_the_ladder_verified_with_its_graphs_on_disk_gives_the_same_report(built, tmp_path, monkeypatch, held):
    from contrastgen.verify import checker, gqa_redundancy

    out = tmp_path / "ladder"
    write_ladder(built, out)
    data = json.loads((out / "level_2.json").read_text())
    data["side_rd2"]["question"] = "On which side is the car?"  # one rung whose words do not follow
    (out / "level_2.json").write_text(json.dumps(data))
    (tmp_path / "sg.json").write_bytes(orjson.dumps(GRAPHS))
    monkeypatch.setattr(checker, "_INDEX_CACHE_SIZE", held)
    on_disk = gqa_redundancy.verify_ladder_dir(out, tmp_path / "sg.json")
    assert on_disk == verify_ladder(out, GRAPHS)
    assert [(f.question_id, f.check) for f in on_disk.failures] == [("side_rd2", "text_mismatch")]


def test_a_removal_that_narrows_the_reference_is_no_rung(lex):
    two_cars = copy.deepcopy(GRAPHS)
    two_cars["img1"]["objects"]["104"] = {"name": "car", "x": 500, "y": 300, "w": 60, "h": 40,
                                          "attributes": ["red", "small"], "relations": []}
    build = build_ladder({"side": copy.deepcopy(QUESTIONS["side"])}, two_cars, LadderConfig(), lex=lex)
    # the rd- edit drops an attribute only where the name alone says the same objects: with a
    # second car neither "white" nor "large" goes, and the question stays at level 0, counted
    assert len(build.levels) == 1 and set(build.levels[0]) == {"side"}
    assert build.stats()["stopped"] == {"no redundant operation left": 1}


def _predictions(built, right: dict[int, set[str]]) -> dict[str, str]:
    """Gold answers where the original id is in `right[level]`, a wrong one elsewhere."""
    out = {}
    for n, level in enumerate(built.levels):
        for qid, r in level.items():
            out[qid] = r["answer"] if r["ladder"]["original_id"] in right.get(n, set()) else "nothing"
    return out


def test_evaluate_scores_each_level_and_its_drop_on_the_questions_that_reach_it(built, tmp_path):
    write_ladder(built, tmp_path / "ladder")
    gold = _predictions(built, {n: set(built.levels[0]) for n in range(4)})
    # right on every original; at level 1 wrong on "or", at level 2 wrong on "or" and "side"
    model = _predictions(built, {0: set(built.levels[0]), 1: {"side", "both", "made", "related"},
                                 2: {"both", "made", "related"}, 3: {"both"}})
    report = evaluate_ood(tmp_path / "ladder", {"oracle": gold, "model": model}, out_dir=tmp_path / "report")
    assert report["benchmark"] == "gqa-redundancy" and report["sizes"] == {"0": 6, "1": 5, "2": 5, "3": 1}
    oracle = report["models"]["oracle"]
    assert [r["accuracy"] for r in oracle["levels"]] == [1.0] * 4 and oracle["deepest"]["drop"] == 0
    levels = report["models"]["model"]["levels"]
    assert levels[1]["accuracy"] == 0.8 and levels[1]["level_0_accuracy_same_questions"] == 1.0
    assert levels[1]["drop"] == pytest.approx(0.2)
    assert levels[2]["drop"] == pytest.approx(2 / 5) and levels[3]["drop"] == 0
    # every question at its deepest level: wrong on "or" and "side" (level 2) of 6
    assert report["models"]["model"]["deepest"]["drop"] == pytest.approx(2 / 6)
    assert (tmp_path / "report" / "ood_report.json").is_file()


def test_the_cli_builds_verifies_and_scores(tmp_path):
    (tmp_path / "q.json").write_text(json.dumps(QUESTIONS))
    (tmp_path / "sg.json").write_text(json.dumps(GRAPHS))
    runner = CliRunner()
    res = runner.invoke(cli, ["ood", "gqa-redundancy", "--questions", str(tmp_path / "q.json"),
                              "--scene-graphs", str(tmp_path / "sg.json"), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert "Reaching level 1: 5, level 2: 5, level 3 or more: 1." in res.output
    res = runner.invoke(cli, ["verify", str(tmp_path / "out"), "--scene-graphs", str(tmp_path / "sg.json")])
    assert res.exit_code == 0 and "checked 11 perturbations, 0 failed" in res.output, res.output
    levels = [json.loads((tmp_path / "out" / f"level_{n}.json").read_text()) for n in range(4)]
    (tmp_path / "p.json").write_text(json.dumps({q: r["answer"] for level in levels for q, r in level.items()}))
    res = runner.invoke(cli, ["evaluate", "--ood", str(tmp_path / "out"), "-p", f"oracle={tmp_path / 'p.json'}"])
    assert res.exit_code == 0 and "redundancy ladder" in res.output, res.output
    data = json.loads((tmp_path / "out" / "level_1.json").read_text())
    data["side_rd1"]["answer"] = "right"
    (tmp_path / "out" / "level_1.json").write_text(json.dumps(data))
    res = runner.invoke(cli, ["verify", str(tmp_path / "out"), "--scene-graphs", str(tmp_path / "sg.json")])
    assert res.exit_code == 1 and "FAILED" in res.output


def test_bad_input_is_named_and_leaves_no_output(tmp_path):
    (tmp_path / "q.json").write_text(json.dumps({"x": {"question": "What?", "answer": "no"}}))  # no imageId
    (tmp_path / "sg.json").write_text(json.dumps(GRAPHS))
    res = CliRunner().invoke(cli, ["ood", "gqa-redundancy", "--questions", str(tmp_path / "q.json"),
                                   "--scene-graphs", str(tmp_path / "sg.json"), "--out", str(tmp_path / "out")])
    assert res.exit_code == 2 and "q.json" in res.output and "question x" in res.output
    assert not (tmp_path / "out").exists()


def test_a_level_id_the_input_already_has_is_refused(lex):
    questions = {**copy.deepcopy(QUESTIONS), "side_rd1": _q("What color is the tree?", "green",
                                                            [_step("select", "tree (103)", []),
                                                             _step("query", "color", [0])])}
    with pytest.raises(InputError, match="side_rd1"):
        build_ladder(questions, GRAPHS, LadderConfig(), lex=lex)


@pytest.mark.shared
@pytest.mark.skipif(not REAL.is_file(), reason="../shared/data/gqa is not here")
@pytest.mark.parametrize("density", [0, 16])
def test_real_gqa_ladders_verify(lex, density, tmp_path):
    import graphs_from_programs  # benchmarks/ is on pytest's pythonpath

    questions = orjson.loads(REAL.read_bytes())
    graphs = graphs_from_programs.build(questions, density=density)
    build = build_ladder(questions, graphs, LadderConfig(), lex=lex)
    # at most one attribute before a noun per reference, so the higher levels are relations removed
    assert len(build.levels) == 4 and len(build.levels[1]) >= 50 and len(build.levels[0]) >= 1000
    relations = sum(1 for level in build.levels[1:] for r in level.values()
                    if r["ladder"]["change"]["kind"] == "relation")
    assert relations >= 40
    write_ladder(build, tmp_path / "ladder")
    report = verify_ladder(tmp_path / "ladder", graphs)
    assert report.ok and report.checked == sum(len(level) for level in build.levels[1:]), report.failures[:3]


def test_a_malformed_ladder_is_named_with_exit_2(built, tmp_path):
    out = tmp_path / "ladder"
    write_ladder(built, out)
    (tmp_path / "sg.json").write_text(json.dumps(GRAPHS))
    (tmp_path / "p.json").write_text(json.dumps({"elsewhere": "yes"}))
    runner = CliRunner()
    res = runner.invoke(cli, ["evaluate", "--ood", str(out), "-p", f"m={tmp_path / 'p.json'}"])
    assert res.exit_code == 2 and "cover none of the questions" in res.output, res.output
    data = json.loads((out / "level_2.json").read_text())
    del data["side_rd2"]["ladder"]
    (out / "level_2.json").write_text(json.dumps(data))
    for args in (["verify", str(out), "--scene-graphs", str(tmp_path / "sg.json")],
                 ["evaluate", "--ood", str(out), "-p", f"m={tmp_path / 'p.json'}"]):
        res = runner.invoke(cli, args)
        assert res.exit_code == 2 and "level_2.json" in res.output and "question side_rd2" in res.output, res.output
    (out / "level_1.json").unlink()
    res = runner.invoke(cli, ["verify", str(out), "--scene-graphs", str(tmp_path / "sg.json")])
    assert res.exit_code == 2 and "level_1.json is missing" in res.output, res.output
