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
from contrastgen.ood.redundancy import redundancy_splits
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
    assert stats["relations_added"] == {"questions": 1, "relations": 1, "relations of an empty set": 0}
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
