"""Whole records: ranks, ids, unknown images, and the report's counts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from verify_cases import VALID

from contrastgen.errors import InputError
from contrastgen.verify.checker import Failure, verify_contrast_sets

REPO = Path(__file__).resolve().parents[2]


def _all_valid_records(record, valid):
    """One record per valid case, all on image img1, ids q0, q1, ..."""
    return [record(orig, [pert], qid=f"q{i}") for i, (orig, pert) in enumerate(valid.values())]


def test_all_valid_records_pass(graph, rules, record, valid):
    report = verify_contrast_sets(_all_valid_records(record, valid), {"img1": graph}, rules=rules)
    assert report.failures == []
    assert report.ok
    assert report.checked == len(VALID)


def test_several_perturbations_per_record_with_ranks(graph, rules, record, valid):
    rec = record("yes", [valid["exists_any_no"][1], valid["exists_related_absent"][1]])
    report = verify_contrast_sets([rec], {"img1": graph}, rules=rules)
    assert report.ok, report.failures
    assert report.checked == 2


def test_gap_in_ranks_fails(graph, rules, record, valid):
    rec = record("yes", [valid["exists_any_no"][1], valid["exists_related_absent"][1]])
    rec["perturbations"][1]["rank"] = 3
    rec["perturbations"][1]["question_id"] = "q1_c3"
    report = verify_contrast_sets([rec], {"img1": graph}, rules=rules)
    assert not report.ok
    assert any(f.perturbation_id is None and "ranks must be 1..2" in f.problem for f in report.failures)


def test_repeated_rank_fails(graph, rules, record, valid):
    rec = record("yes", [valid["exists_any_no"][1], valid["exists_related_absent"][1]])
    rec["perturbations"][1]["rank"] = 1
    rec["perturbations"][1]["question_id"] = "q1_c1"
    report = verify_contrast_sets([rec], {"img1": graph}, rules=rules)
    assert any("got [1, 1]" in f.problem for f in report.failures)
    assert any("not unique" in f.problem for f in report.failures)  # both are now q1_c1


def test_question_id_must_be_original_plus_template_suffix_and_rank(graph, rules, record, valid):
    rec = record("right", [valid["side"][1]])
    rec["perturbations"][0]["question_id"] = "q1_n1"
    report = verify_contrast_sets([rec], {"img1": graph}, rules=rules)
    assert report.failures == [Failure("q1", "q1_n1", "perturbation question id q1_n1 should be q1_c1 "
                                       "(original id, _, template suffix 'c', rank)", "ids")]


def test_without_template_table_ids_need_the_suffix_shape(graph, rules, record, valid):
    rules = dataclasses.replace(rules, template_suffixes={})
    good = record("right", [valid["side"][1]], suffix="zz")
    assert verify_contrast_sets([good], {"img1": graph}, rules=rules).ok
    bad = record("right", [valid["side"][1]], qid="q2", suffix="_7")
    report = verify_contrast_sets([bad], {"img1": graph}, rules=rules)
    assert [f.problem for f in report.failures] == ["perturbation question id q2__71 should be q2_<suffix>1"]


def test_unknown_template_fails(graph, rules, record, valid):
    rec = record("right", [valid["side"][1]], template="how_many_x")
    report = verify_contrast_sets([rec], {"img1": graph}, rules=rules)
    assert Failure("q1", None, "template 'how_many_x' is not in rules/templates.json", "structure") in report.failures


def test_one_question_may_have_a_record_per_template(graph, rules, record, valid):
    a = record("right", [valid["side"][1]])
    b = record("right", [valid["side"][1]], template="is_the_x_rel_the_y__object", suffix="o")
    assert verify_contrast_sets([a, b], {"img1": graph}, rules=rules).ok


def test_duplicate_records_fail(graph, rules, record, valid):
    rec = record("right", [valid["side"][1]])
    report = verify_contrast_sets([rec, rec], {"img1": graph}, rules=rules)
    problems = [f.problem for f in report.failures]
    assert "question q1 has more than one record for template 'what_color_is_the_x'" in problems
    assert "perturbation question id q1_c1 is not unique" in problems


def test_evidence_version_must_be_1(graph, rules, record, valid):
    original, pert = valid["side"]
    for version in (2, None):
        pert["evidence"]["version"] = version
        report = verify_contrast_sets([record(original, [pert])], {"img1": graph}, rules=rules)
        assert [f.problem for f in report.failures] == [
            f"evidence.version is {version!r}; this verifier reads version 1"]


def test_unknown_image_is_a_failure_naming_it(graph, rules, record, valid):
    recs = [record("right", [valid["side"][1]], image_id="img404"), record("right", [valid["side"][1]], qid="q2")]
    report = verify_contrast_sets(recs, {"img1": graph}, rules=rules)
    assert report.failures == [Failure("q1", None, "image 'img404' is not among the scene graphs", "image")]
    assert report.checked == 2
    assert report.failed_perturbations == 1


def test_malformed_records_are_failures_not_crashes(graph, rules, record, valid):
    no_answer = record("right", [valid["side"][1]], qid="q2")
    del no_answer["answer"]
    recs = [["not", "a", "record"], {"question_id": "q1", "image_id": "img1", "perturbations": []}, no_answer]
    report = verify_contrast_sets(recs, {"img1": graph}, rules=rules)
    assert [(f.question_id, f.problem) for f in report.failures] == [
        ("record 1", "record is not a JSON object"),
        ("q1", "record has no list of perturbations"),
        ("q2", "record has no original 'answer' to differ from"),
    ]


def test_failures_name_question_and_perturbation_and_kind(graph, rules, record, valid):
    orig, pert = valid["color"]
    pert["evidence"]["answer"] = pert["answer"] = "blue"
    report = verify_contrast_sets([record(orig, [pert], qid="777")], {"img1": graph}, rules=rules)
    assert {(f.question_id, f.perturbation_id) for f in report.failures} == {("777", "777_c1")}
    assert report.failed_perturbations == 1
    assert report.by_check() == {"answer": 1}


def test_by_check_counts_each_kind(graph, rules, record, valid):
    def one(case, **kw):
        original, pert = valid[case]
        return record(original, [pert], **kw)
    bad_fact = one("side", qid="a")
    bad_fact["perturbations"][0]["evidence"]["facts"][0]["name"] = "mug"
    prone = one("exists_any_no", qid="b")
    prone["perturbations"][0]["evidence"]["query"]["names"][1] = ["sky"]
    prone["perturbations"][0]["evidence"]["facts"][1]["names"] = ["sky"]
    lost = one("color", qid="c", image_id="img404")
    report = verify_contrast_sets([bad_fact, prone, lost], {"img1": graph}, rules=rules)
    assert report.by_check() == {"fact": 1, "unannotated": 2, "image": 1}
    assert list(report.by_check()) == ["fact", "unannotated", "image"]  # CHECKS order


def test_integer_image_ids_are_looked_up_as_strings(graph, rules, record, valid):
    rec = record("right", [valid["side"][1]], image_id=2407890)
    assert verify_contrast_sets([rec], {"2407890": graph}, rules=rules).ok


def test_malformed_graph_is_an_input_error_naming_the_image(graph, rules, record, valid):
    graph["objects"]["6"]["relations"] = [{"object": "3"}]  # a relation without a name
    original, pert = valid["exists_related_yes"]
    rec = record(original, [pert])
    with pytest.raises(InputError, match="image img1 object 6: relation without a 'name'"):
        verify_contrast_sets([rec], {"img1": graph}, rules=rules)
