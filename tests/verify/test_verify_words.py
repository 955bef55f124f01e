"""The verifier reads the words: perturbed questions whose text does not ask what their evidence
proves fail as text_mismatch, on recorded regression cases and on phrasings
the generator must never produce."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contrastgen.engine import Engine
from contrastgen.verify.checker import TEXT, verify_contrast_sets
from contrastgen.verify.graph import EvidenceProblem, GraphIndex
from contrastgen.verify.rules import load_rules
from contrastgen.verify.words import check_words, load_reading_rules, read_question

CASES = json.loads((Path(__file__).resolve().parents[1] / "data" / "regressions" /
                    "proofs_about_the_words.json").read_text())


def test_the_old_engines_proofs_fail_the_word_check():
    report = verify_contrast_sets(CASES["old_engine_output"], CASES["scene_graphs"])
    failed = {f.perturbation_id: f for f in report.failures}
    assert set(failed) == {"q1_r1", "240000603_r1"}
    assert all(f.check == TEXT for f in failed.values())
    assert "cannot read" in failed["q1_r1"].problem
    assert "'the man' denotes 2 objects" in failed["240000603_r1"].problem


def test_the_engine_now_refuses_both_and_perturbs_what_it_can_read():
    engine = Engine.load()
    graphs = CASES["scene_graphs"]
    one = engine.perturb_question("q1", CASES["questions"]["q1"], graphs["9000001"])
    assert [r.reason for r in one] == ["no_match"]  # "the boy wearing jeans" is not a simple Y
    two = engine.perturb_question("240000603", CASES["questions"]["240000603"], graphs["2400006"])
    by_template = {r.template: r for r in two}
    # "the man": two men, whatever the program's id, so the original itself cannot be answered
    # with certainty, and heads no contrast set
    assert by_template["is_the_x_rel_the_y__relation"].reason == "original_presupposition"
    assert by_template["is_the_x_rel_the_y__object"].reason == "original_presupposition"
    assert not any(r.perturbations for r in two)
    # a question about the same image whose every reference is unique is perturbed, and verifies
    plain = {"question": "Is the boy to the left of the woman?", "answer": "yes", "imageId": "9000001"}
    results = engine.perturb_question("q2", plain, graphs["9000001"])
    records = [r.to_record() for r in results if r.perturbations]
    assert records and verify_contrast_sets(records, graphs).ok


def _graph() -> GraphIndex:
    return GraphIndex(CASES["scene_graphs"]["9000001"])


@pytest.mark.parametrize("question", [
    "Is the person to the right of the boy wearing jeans?",
    "Is the man near the catcher wearing jeans?",
    "Is the van parked behind the car?",
    "Is the person that is to the left of the bike wearing glasses?",
    "Is the little building in between the tall trees near the crane?",
    "Is the man's hat to the left of the lamp?",
])
def test_look_alikes_are_not_read(question):
    assert read_question(question, _graph()) == []


def test_a_reading_must_be_the_evidence_query():
    g, rules = _graph(), load_rules()
    query = {"op": "relation", "subject": "2", "rel": "to the left of", "object": "3"}
    check_words("Is the boy to the left of the woman?", query, "yes", g, rules)
    with pytest.raises(EvidenceProblem, match="the relation"):
        check_words("Is the boy to the right of the woman?", query, "yes", g, rules)
    with pytest.raises(EvidenceProblem, match="the subject"):
        check_words("Is the woman to the left of the boy?", query, "yes", g, rules)
    with pytest.raises(EvidenceProblem, match="denotes 3 objects"):  # a person, a boy, a woman
        check_words("Is the person to the left of the boy?", {**query, "subject": "1", "object": "2"},
                    "yes", g, rules)


def test_absence_considers_every_kind_a_word_may_denote():
    """'Are there any dishes near the cup? no' while a bowl stands near it: a bowl may be a dish."""
    graph = {"width": 640, "height": 480, "objects": {
        "1": {"name": "cup", "x": 10, "y": 10, "w": 20, "h": 20, "attributes": [], "relations": []},
        "2": {"name": "bowl", "x": 40, "y": 10, "w": 20, "h": 20, "attributes": [],
              "relations": [{"name": "near", "object": "1"}]}}}
    query = {"op": "exists_related", "names": ["dish", "dishes"], "rel": "near", "object": "1", "symmetric": True}
    with pytest.raises(EvidenceProblem, match="the answer 'yes', the evidence 'no'"):
        check_words("Are there any dishes near the cup?", query, "no", GraphIndex(graph), load_rules())


def test_every_frame_example_is_read():
    """The examples in rules/readings.json are read by their frame (over a graph naming their nouns)."""
    import regex

    rules = load_reading_rules()
    data = json.loads((Path(__file__).resolve().parents[2] / "rules" / "readings.json").read_text())
    for frame in data["frames"]:
        for example in frame["examples"]:
            words = regex.findall(r"[a-z]+", example.lower())
            objects = {str(i): {"name": w, "x": 0, "y": 0, "w": 1, "h": 1} for i, w in enumerate(words)}
            found = read_question(example, GraphIndex({"width": 10, "objects": objects}), rules=rules)
            assert frame["op"] in {r.op for r in found}, example
