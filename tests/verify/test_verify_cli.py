"""`contrastgen verify`: exit codes 0/1/2 and messages that name the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from verify_cases import VALID, as_record, make_graph

from contrastgen.cli import cli
from contrastgen.jsonio import write_json, write_jsonl

# Cases that answer no question about absence, so the shipped unannotated-prone list (which other
# engineers edit) cannot change their verdict.
_CASES = ["side", "color", "exists_related_yes", "relation_no", "relation_yes"]


@pytest.fixture
def out(tmp_path):
    """A generated-looking output dir and its scene graphs; returns (out_dir, sg_path)."""
    records = [as_record(VALID[c][0], [VALID[c][1]], qid=f"q{i}") for i, c in enumerate(_CASES)]
    out_dir = tmp_path / "out"
    write_jsonl(out_dir / "contrast_sets.jsonl", records)
    sg = tmp_path / "sg.json"
    write_json(sg, {"img1": make_graph()})
    return out_dir, sg


def run(*args: str):
    return CliRunner().invoke(cli, ["verify", *map(str, args)])


def test_all_hold_exits_0(out):
    out_dir, sg = out
    result = run(out_dir, "--scene-graphs", sg)
    assert result.exit_code == 0, result.output
    assert f"checked {len(_CASES)} perturbations, 0 failed" in result.stdout


def test_a_jsonl_file_may_be_given_instead_of_the_directory(out, tmp_path):
    out_dir, sg = out
    copy = tmp_path / "filtered.jsonl"
    copy.write_bytes((out_dir / "contrast_sets.jsonl").read_bytes())
    result = run(copy, "--scene-graphs", sg)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{copy}: OK")


def test_json_report(out):
    out_dir, sg = out
    result = run(out_dir, "--scene-graphs", sg, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["checked"] == len(_CASES) and report["failures"] == []


def _tamper(out_dir, change):
    path = out_dir / "contrast_sets.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    change(records)
    write_jsonl(path, records)


def test_a_flipped_answer_exits_1_and_says_why(out):
    out_dir, sg = out

    def flip(records):
        p = records[0]["perturbations"][0]
        p["answer"] = p["evidence"]["answer"] = "right"
    _tamper(out_dir, flip)
    result = run(out_dir, "--scene-graphs", sg)
    assert result.exit_code == 1
    assert "FAILED: checked 5 perturbations, 1 failed" in result.stdout
    assert "[answer] q0_c1 (of q0): the query gives 'left' on the graph, but evidence.answer is 'right'" in result.stdout
    assert "problems by check: answer 2" in result.stdout  # also equals the original now
    report = json.loads(run(out_dir, "--scene-graphs", sg, "--json").stdout)
    assert report["ok"] is False and report["failed"] == 1 and report["by_check"] == {"answer": 2}
    assert {(f["perturbation_id"], f["check"]) for f in report["failures"]} == {("q0_c1", "answer")}


def test_an_original_question_that_is_not_text_exits_1(out):
    # an export or a crowd task would show the original as the question a model was asked
    out_dir, sg = out

    def number(records):
        records[0]["question"] = 12345
    _tamper(out_dir, number)
    result = run(out_dir, "--scene-graphs", sg)
    assert result.exit_code == 1
    assert "record has no original 'question' as text" in result.stdout


def test_unknown_image_exits_1(out, tmp_path):
    out_dir, _ = out
    sg = tmp_path / "other.json"
    write_json(sg, {"img2": make_graph()})
    result = run(out_dir, "--scene-graphs", sg)
    assert result.exit_code == 1
    assert "image 'img1' is not among the scene graphs" in result.stdout


def test_show_limits_the_listing(out):
    out_dir, sg = out

    def break_all(records):
        for r in records:
            r["perturbations"][0]["evidence"]["query"]["op"] = "count"
    _tamper(out_dir, break_all)
    result = run(out_dir, "--scene-graphs", sg, "--show", "4")
    assert result.exit_code == 1
    # each tampered perturbation fails twice: the query has no answer, and the words ask another op
    assert result.stdout.count("unknown query op 'count'") == 2
    assert result.stdout.count("the words give the operation") == 2
    assert "... and 6 more (use --json for all)" in result.stdout


def test_malformed_jsonl_exits_2_naming_file_and_line(out):
    out_dir, sg = out
    path = out_dir / "contrast_sets.jsonl"
    path.write_text(path.read_text() + "{not json\n")
    result = run(out_dir, "--scene-graphs", sg)
    assert result.exit_code == 2
    assert f"{path}: record line {len(_CASES) + 1}: malformed JSON" in result.stderr


def test_empty_contrast_sets_exits_2(out):
    out_dir, sg = out
    (out_dir / "contrast_sets.jsonl").write_text("\n")
    result = run(out_dir, "--scene-graphs", sg)
    assert result.exit_code == 2
    assert f"{out_dir / 'contrast_sets.jsonl'}: file is empty" in result.stderr


def test_missing_output_dir_exits_2(tmp_path, out):
    _, sg = out
    result = run(tmp_path / "nowhere", "--scene-graphs", sg)
    assert result.exit_code == 2
    assert f"{tmp_path / 'nowhere' / 'contrast_sets.jsonl'}: file not found" in result.stderr


def test_bad_scene_graph_exits_2_naming_file_and_image(out, tmp_path):
    out_dir, _ = out
    sg = tmp_path / "bad_sg.json"
    graph = make_graph()
    graph["objects"]["1"]["relations"].append({"name": "on", "object": "404"})
    write_json(sg, {"img1": graph})
    result = run(out_dir, "--scene-graphs", sg)
    assert result.exit_code == 2
    assert f"{sg}: record image img1 object 1: relation 'on' points at unknown object '404'" in result.stderr


_REPORT_SCRIPT = """
import sys
from contrastgen.datasets.gqa import load_scene_graphs
from contrastgen.jsonio import dumps, read_jsonl
from contrastgen.verify.checker import verify_contrast_sets
report = verify_contrast_sets(read_jsonl(sys.argv[1]), load_scene_graphs(sys.argv[2]))
sys.stdout.buffer.write(dumps([vars(f) for f in report.failures]))
"""


def test_report_is_byte_identical_across_hash_seeds(out):
    """Messages list sets (ids, names); they must be sorted, not in the process's hash order.

    The library is run in child processes (the CLI package imports every command family, which
    is slow); the CLI prints these same failures.
    """
    out_dir, sg = out

    def break_sets(records):
        for r in records:
            for p in r["perturbations"]:
                for f in p["evidence"]["facts"]:
                    if f["fact"] == "only":
                        f["ids"] = ["4", "2", "6"]
    _tamper(out_dir, break_sets)
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", _REPORT_SCRIPT, str(out_dir / "contrast_sets.jsonl"), str(sg)],
                              capture_output=True, env=env, check=True)
        outputs.add(proc.stdout)
    assert len(outputs) == 1
    assert b"not ['2', '4', '6']" in outputs.pop()
