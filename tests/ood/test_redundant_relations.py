"""Redundant relations in Super-CLEVR's rd+ / rd- (`clevr.redundant_relations`), the family pairs
they are written with (`datasets.clevr_hops`) and their re-check (`verify.superclevr_redundancy`),
on handwritten scenes whose relations are known, and on the shared Super-CLEVR data."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.datasets.clevr import load_scenes
from contrastgen.datasets.clevr_hops import hop_at, hops
from contrastgen.datasets.clevr_reading import Reading, read_question
from contrastgen.ood.superclevr_redundancy import redundancy_splits
from contrastgen.verify.superclevr_redundancy import question_problems

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "super-clevr"


def _obj(shape, size, color, material, x):
    return {"shape": shape, "size": size, "color": color, "material": material, "3d_coords": [x, 0, 0]}


def _line(image, objects):
    """A scene whose objects stand in a row from left to right, at one depth: object j is left
    of object i when it stands before it."""
    n = len(objects)
    return {"image_filename": f"{image}.png", "objects": objects,
            "relationships": {"left": [list(range(i)) for i in range(n)],
                              "right": [list(range(i + 1, n)) for i in range(n)],
                              "behind": [[] for _ in range(n)], "front": [[] for _ in range(n)]}}


def _q(image, index, family, question, answer):
    file, fam = family
    return {"image": image, "question_index": index, "template_filename": file, "question_family_index": fam,
            "question": question, "answer": answer}


@pytest.fixture()
def scenes(tmp_path):
    data = {"scenes": [
        # a bus, a car and a jet in a row: "the bus" is also "the bus left of the car"
        _line("s1", [_obj("school", "large", "red", "metal", 0), _obj("sedan", "small", "cyan", "rubber", 1),
                     _obj("jet", "large", "blue", "metal", 2)]),
        # two alike buses around a car: no relation keeps "the buses" the same two
        _line("s2", [_obj("school", "large", "red", "metal", 0), _obj("sedan", "small", "cyan", "rubber", 1),
                     _obj("school", "large", "red", "metal", 2)]),
    ]}
    path = tmp_path / "scenes.json"
    path.write_text(json.dumps(data))
    return path


def _split(scenes, questions):
    return redundancy_splits(questions, load_scenes(scenes))


def test_families_pair_with_the_family_that_adds_one_relation_whatever_order_their_files_list_nodes():
    hop = hop_at(("zero_hop.json", 4), 1)
    assert hop is not None and hop.target == ("one_hop.json", 3)
    assert hop.param_map == {"<Z>": "<Z2>", "<C>": "<C2>", "<M>": "<M2>", "<S>": "<S2>"}
    assert hop.relation == "<R>" and hop.anchor == ("<Z>", "<C>", "<M>", "<S>")
    # comparison 0 lists its nodes in another order than 4 and 5, which relate its first / second object
    assert {(h.node, h.target) for h in hops()[("comparison.json", 0)]} == {
        (1, ("comparison.json", 4)), (3, ("comparison.json", 5))}
    assert hop_at(("two_hop.json", 3), 1).target == ("three_hop.json", 4)  # query_color, not the file's 3rd
    assert not any(key[0] in ("part.json", "same_relate.json") for key in hops())


def test_rd_plus_adds_a_relation_that_leaves_the_referent_and_reads_back(scenes):
    question = _q("s1", 0, ("zero_hop.json", 4), "What color is the bus?", "red")
    splits, stats = _split(scenes, [question])
    (plus,) = splits["rd+"]
    assert plus["template_filename"] == "one_hop.json" and plus["question_family_index"] == 3
    # every attribute of the bus and of the object related to, the relation to the car or the jet
    assert plus["question"] in ("What color is the large metallic bus that is left of the small cyan rubber sedan?",
                                "What color is the large metallic bus that is left of the large blue metallic jet?")
    reading = read_question(plus)
    assert isinstance(reading, Reading) and reading.program() == plus["program"]
    added = plus["relations_added"]
    assert added["from_family"] == {"template_filename": "zero_hop.json", "question_family_index": 4}
    (relation,) = added["relations"]
    assert relation["relation"] == "left" and relation["object"] in (1, 2)
    assert relation["denotes"] == relation["denotes_without_relation"] == [0]
    assert plus["program"][relation["relate_node"]]["type"] == "relate"
    assert stats["relations_added"] == {"questions": 1, "relations": 1}
    assert stats["mean_relations_said"] == {"rd-": 0.0, "rd": 0.0, "rd+": 1.0}
    graphs = load_scenes(scenes)
    assert question_problems(plus, graphs["s1"]["objects"], {}) == []
    # rd- and rd are not touched
    assert [q["question"] for q in splits["rd"]] == [q["question"] for q in splits["rd-"]] == ["What color is the bus?"]
    assert "relations_added" not in splits["rd"][0] and "relations_dropped" not in splits["rd-"][0]


def test_no_relation_is_added_where_every_one_would_change_the_set(scenes):
    # "Are there any buses left of the car?" is still yes, but of one bus, not of both
    questions = [_q("s2", 0, ("zero_hop.json", 0), "How many buses are there?", 2),
                 _q("s2", 1, ("zero_hop.json", 1), "Are there any buses?", True)]
    splits, stats = _split(scenes, questions)
    assert [(q["question"], q["template_filename"]) for q in splits["rd+"]] == [
        ("How many buses are there?", "zero_hop.json"), ("Are there any buses?", "zero_hop.json")]
    assert not any("relations_added" in q for q in splits["rd+"])
    assert stats["relations_not_changed"]["rd+"] == {
        "no relation to a uniquely described object leaves the reference unchanged": 2}
    assert stats["relations_added"] == {}


def test_rd_minus_drops_a_relation_that_changes_nothing_and_keeps_one_that_is_needed(scenes):
    redundant = _q("s1", 0, ("one_hop.json", 3), "What color is the bus that is left of the car?", "red")
    needed = _q("s1", 1, ("one_hop.json", 3), "What color is the thing that is left of the car?", "red")
    splits, stats = _split(scenes, [redundant, needed])
    dropped, kept = splits["rd-"]
    assert dropped["question"] == "What color is the bus?" and dropped["template_filename"] == "zero_hop.json"
    evidence = dropped["relations_dropped"]
    assert evidence["from_program"] == splits["rd"][0]["program"]
    assert evidence["relations"][0]["object"] == 1 and evidence["relations"][0]["denotes"] == [0]
    assert kept["question"] == needed["question"] and "relations_dropped" not in kept
    assert stats["relations_dropped"] == {"questions": 1, "relations": 1, "relations of an empty set": 0}
    rd = {str(q["question_index"]): q for q in splits["rd"]}
    objects = load_scenes(scenes)["s1"]["objects"]
    assert question_problems(dropped, objects, rd) == []
    forged = copy.deepcopy(dropped)
    forged["relations_dropped"]["from_program"] = splits["rd"][1]["program"]
    assert [c for c, _ in question_problems(forged, objects, rd)] == ["relation"]


@pytest.mark.parametrize("field, value", [("denotes", [1]), ("relation", "right"), ("object", 0),
                                          ("relate_node", 0)])
def test_the_verifier_refuses_a_relation_whose_evidence_is_wrong(scenes, field, value):
    splits, _ = _split(scenes, [_q("s1", 0, ("zero_hop.json", 4), "What color is the bus?", "red")])
    forged = copy.deepcopy(splits["rd+"][0])
    forged["relations_added"]["relations"][0][field] = value
    problems = question_problems(forged, load_scenes(scenes)["s1"]["objects"], {})
    assert problems and {c for c, _ in problems} == {"relation"}


def test_verify_reads_an_ood_superclevr_directory(scenes, tmp_path):
    questions = {"questions": [_q("s1", 0, ("zero_hop.json", 4), "What color is the bus?", "red"),
                               _q("s1", 1, ("one_hop.json", 3), "What color is the bus that is left of the car?",
                                  "red")]}
    (tmp_path / "q.json").write_text(json.dumps(questions))
    out = tmp_path / "ood"
    built = CliRunner().invoke(cli, ["ood", "superclevr", "--scenes", str(scenes), "--questions",
                                     str(tmp_path / "q.json"), "--out", str(out)])
    assert built.exit_code == 0, built.output
    ok = CliRunner().invoke(cli, ["verify", str(out), "--scene-graphs", str(scenes)])
    assert ok.exit_code == 0 and "checked 6 questions, 0 failed" in ok.output, ok.output
    plus = json.loads((out / "rd+.json").read_text())
    plus["questions"][0]["answer"] = "blue"
    (out / "rd+.json").write_text(json.dumps(plus))
    bad = CliRunner().invoke(cli, ["verify", str(out), "--scene-graphs", str(scenes)])
    assert bad.exit_code == 1 and "[answer]" in bad.output, bad.output


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/super-clevr is not here (a user's clone)")
def test_relations_on_the_shared_data_are_added_proven_and_leave_the_rest_as_it_was():
    from contrastgen.clevr.edits import Editor
    from contrastgen.clevr.executor import execute
    from contrastgen.clevr.scene_view import clevr_scene
    from contrastgen.datasets.clevr_released import read_questions

    graphs = load_scenes(SHARED / "scenes")
    questions = read_questions([SHARED / "superCLEVR_questions_5.json", SHARED / "superCLEVR_questions_part_5.json"])
    splits, stats = redundancy_splits(questions, graphs)
    assert stats["relations_added"]["questions"] >= 100
    mean = stats["mean_relations_said"]
    assert mean["rd-"] < mean["rd"] < mean["rd+"]
    rd = {str(q["question_index"]): q for q in splits["rd"]}
    for level, key in (("rd+", "relations_added"), ("rd-", "relations_dropped")):
        for q in splits[level]:
            if key in q:
                assert question_problems(q, graphs[q["image"]]["objects"], rd) == [], q["question"]
    # a question that gains no relation is what the attribute rewrite alone makes of it
    for q in questions:
        plus = next(p for p in splits["rd+"] if p["question_index"] == q["question_index"])
        if "relations_added" in plus:
            continue
        reading = read_question(q)
        scene = clevr_scene(q["image"], graphs[q["image"]])
        edit = Editor(reading, scene, execute(reading.program(), scene)).whole_question("rd+")
        assert plus["question"] == (edit.question if edit is not None else q["question"])


# rd+'s relations must be redundancy, not the answer said: never related to an object
# the question asks about, nor to one whose attributes include the answer, nor added to a
# reference that denotes nothing.

@pytest.fixture()
def answer_scenes(tmp_path):
    data = {"scenes": [
        # a bus and a car: the car's only redundant relation is to the bus the question asks about
        _line("a1", [_obj("school", "large", "red", "metal", 0), _obj("sedan", "small", "cyan", "rubber", 1)]),
        # a red bus, a red car and a blue jet: "the bus" is left of both, only the jet is not red
        _line("a2", [_obj("school", "large", "red", "metal", 0), _obj("sedan", "small", "red", "rubber", 1),
                     _obj("jet", "large", "blue", "metal", 2)]),
        # a red bus and a red car: the bus's only relation is to an object described as red
        _line("a3", [_obj("school", "large", "red", "metal", 0), _obj("sedan", "small", "red", "rubber", 1)]),
    ]}
    path = tmp_path / "answer_scenes.json"
    path.write_text(json.dumps(data))
    return path


def _unguarded(monkeypatch):
    """The rewriter as it was before these rules: every redundant relation allowed."""
    from contrastgen.clevr.redundant_relations import RelationRewriter

    monkeypatch.setattr(RelationRewriter, "_anchor_refused", lambda self, obj: None)
    monkeypatch.setattr(RelationRewriter, "_reference_refused", lambda self, t: None)


def _relation_problems(record, scenes):
    return [m for c, m in question_problems(record, load_scenes(scenes)[record["image"]]["objects"], {})
            if c == "relation"]


ASKED_BUS = _q("a1", 0, ("one_hop.json", 3), "What color is the bus that is left of the car?", "red")


def test_rd_plus_relates_no_object_the_question_asks_about(answer_scenes):
    splits, stats = _split(answer_scenes, [ASKED_BUS])
    (plus,) = splits["rd+"]
    # "... left of the small cyan rubber sedan that is right of the large red metallic bus?" would
    # describe the bus asked about, its colour included
    assert "relations_added" not in plus and plus["template_filename"] == "one_hop.json"
    assert "red" not in plus["question"]
    assert stats["relations_not_changed"]["rd+"][
        "every redundant relation is anchored on an object the question asks about"] == 1


def test_rd_plus_relates_no_object_a_count_or_exist_measures(answer_scenes):
    # "How many buses are left of the small cyan rubber car that is right of the large red metallic
    # school bus?" would say the bus counted is there
    questions = [_q("a1", 1, ("one_hop.json", 0), "What number of buses are left of the car?", 1),
                 _q("a1", 2, ("one_hop.json", 1), "Are there any buses left of the car?", True)]
    splits, stats = _split(answer_scenes, questions)
    assert not any("relations_added" in q for q in splits["rd+"])
    assert stats["relations_not_changed"]["rd+"][
        "every redundant relation is anchored on an object the question asks about"] == 2


def test_rd_plus_relates_no_object_described_with_the_answer(answer_scenes):
    refused = _q("a3", 0, ("zero_hop.json", 4), "What color is the bus?", "red")
    moved = _q("a2", 1, ("zero_hop.json", 4), "What color is the bus?", "red")
    splits, stats = _split(answer_scenes, [refused, moved])
    alone, other = splits["rd+"]
    assert "relations_added" not in alone and "red" not in alone["question"]
    assert stats["relations_not_changed"]["rd+"][
        "every redundant relation is anchored on an object whose description says the answer"] == 1
    # where another object will do, the relation goes to it, whatever the hash picked first
    assert other["question"] == "What color is the large metallic bus that is left of the large blue metallic jet?"
    assert other["relations_added"]["relations"][0]["object"] == 2


def test_rd_plus_adds_no_relation_to_a_reference_that_denotes_nothing(scenes):
    questions = [_q("s1", 0, ("zero_hop.json", 0), "How many trucks are there?", 0),
                 _q("s1", 1, ("zero_hop.json", 1), "Are there any trucks?", False)]
    splits, stats = _split(scenes, questions)
    assert [q["question"] for q in splits["rd+"]] == ["How many trucks are there?", "Are there any trucks?"]
    assert not any("relations_added" in q for q in splits["rd+"])
    assert stats["relations_not_changed"]["rd+"] == {"the reference denotes nothing: a relation on it is vacuous": 2}
    assert stats["relations_added"] == {}


def test_the_verifier_refuses_each_relation_that_says_the_answer_or_nothing(scenes, answer_scenes, monkeypatch):
    _unguarded(monkeypatch)
    (asked,) = _split(answer_scenes, [ASKED_BUS])[0]["rd+"]
    assert asked["question"].endswith("that is right of the large red metallic school bus?")
    assert any("which the question asks about" in m for m in _relation_problems(asked, answer_scenes))
    (said,) = _split(answer_scenes, [_q("a3", 0, ("zero_hop.json", 4), "What color is the bus?", "red")])[0]["rd+"]
    assert "relations_added" in said
    assert any("described as 'red': the answer" in m for m in _relation_problems(said, answer_scenes))
    (empty,) = _split(scenes, [_q("s1", 0, ("zero_hop.json", 0), "How many trucks are there?", 0)])[0]["rd+"]
    assert "relations_added" in empty
    assert any("denotes nothing" in m for m in _relation_problems(empty, scenes))


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/super-clevr is not here (a user's clone)")
def test_the_shared_articulated_bus_question_is_not_related_to_the_bus_it_asks_about(monkeypatch):
    """superCLEVR_questions_5/137: "What color is the small rubber bus that is left of the large
    cyan metal bicycle?" (gray) gained "that is right of the small gray rubber articulated bus",
    the bus it asks about, as `ood superclevr` reads the two shared question files."""
    from contrastgen.datasets.clevr_released import read_questions
    from contrastgen.verify.clevr import run_program

    graphs = load_scenes(SHARED / "scenes")
    questions = [q for q in read_questions([SHARED / "superCLEVR_questions_5.json",
                                            SHARED / "superCLEVR_questions_part_5.json"])
                 if q["question_index"] == "superCLEVR_questions_5/137"]
    assert [q["answer"] for q in questions] == ["gray"]
    (plus,) = redundancy_splits(questions, graphs)[0]["rd+"]
    objects = graphs[plus["image"]]["objects"]
    trace = run_program(plus["program"], objects)
    bus = trace[plus["program"][-1]["inputs"][0]]
    assert "gray" not in plus["question"]
    assert all(r["object"] != bus for r in plus["relations_added"]["relations"])
    assert question_problems(plus, objects, {}) == []
    # the rewriter without its rules writes the question the issue found, which verify refuses
    _unguarded(monkeypatch)
    (before,) = redundancy_splits(questions, graphs)[0]["rd+"]
    assert before["question"] == ("What color is the small rubber bus that is on the left side of the large cyan "
                                  "metal bicycle that is right of the small gray rubber articulated bus?")
    assert any("which the question asks about" in m for c, m in question_problems(before, objects, {}))
