"""The generator's real output on the shipped sample passes the verifier; one flipped answer fails it.

This is the contract test between the two sides: if the engine changes its evidence or the
verifier its reading of the evidence schema (docs/output-formats.md), this breaks.
"""

from __future__ import annotations

import importlib.resources
import json
import shutil
from collections import Counter

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.jsonio import write_jsonl

pytestmark = pytest.mark.slow


def _sample():
    root = importlib.resources.files("contrastgen.data").joinpath("sample")
    questions, graphs = root.joinpath("questions.json"), root.joinpath("scene_graphs.json")
    if not (questions.is_file() and graphs.is_file()):
        pytest.skip("contrastgen/data/sample/ has no questions.json and scene_graphs.json")
    return str(questions), str(graphs)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    base = tmp_path_factory.mktemp("e2e")
    # a private copy, so generate and verify read the same graphs even if the sample is rebuilt
    questions, graphs = (shutil.copy(src, base) for src in _sample())
    out = base / "out"
    result = CliRunner().invoke(cli, ["generate", "--questions", questions, "--scene-graphs", graphs,
                                      "--out", str(out), "--workers", "1", "--no-progress"])
    assert result.exit_code == 0, result.output
    return out, graphs


def _verify(out, graphs, *extra):
    return CliRunner().invoke(cli, ["verify", str(out), "--scene-graphs", graphs, "--json", *extra])


def test_generated_sample_verifies(generated):
    out, graphs = generated
    result = _verify(out, graphs)
    report = json.loads(result.stdout)
    assert result.exit_code == 0, report["failures"][:5]
    assert report["ok"] and report["checked"] > 50
    ops = Counter(json.loads(line)["perturbations"][0]["evidence"]["query"]["op"]
                  for line in (out / "contrast_sets.jsonl").read_text().splitlines())
    assert set(ops) >= {"side", "color", "exists_any", "exists_related", "relation"}, ops


@pytest.mark.parametrize("which", ["first", "last"])
def test_one_flipped_answer_fails(generated, tmp_path, which):
    out, graphs = generated
    records = [json.loads(line) for line in (out / "contrast_sets.jsonl").read_text().splitlines()]
    record = records[0] if which == "first" else records[-1]
    victim = record["perturbations"][-1]
    flipped = {"yes": "no", "no": "yes", "left": "right", "right": "left"}.get(victim["answer"], "purple")
    victim["answer"] = victim["evidence"]["answer"] = flipped
    write_jsonl(tmp_path / "contrast_sets.jsonl", records)
    result = _verify(tmp_path, graphs)
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert {f["perturbation_id"] for f in report["failures"]} == {victim["question_id"]}
    assert report["failed"] == 1
