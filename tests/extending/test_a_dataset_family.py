"""The README's recipe "Add a dataset family", done for real: the toy Shapes family
(`shapes_family.py`, its files in `shapes/`) is one module; registered, it is read, detected,
generated through the library and the command line (in forked workers too) and verified, and
nothing in `run/` changed for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import contrastgen.families.base
from contrastgen.cli import cli
from contrastgen.errors import InputError
from contrastgen.families import FAMILIES, family_named, family_reading, register
from contrastgen.run.generate import generate
from contrastgen.verify.checker import verify_contrast_sets

DATA = Path(__file__).parent / "shapes"
QUESTIONS, SCENES = DATA / "questions.json", DATA / "scenes.json"


@pytest.fixture
def shapes():
    """The family registered for one test, as the recipe registers it: by importing its module
    (here, not at collection: the registry is the process's, and other tests hold the built-in
    list)."""
    import shapes_family

    if "shapes" not in FAMILIES:  # imported by an earlier test, and removed after it
        register(shapes_family.SHAPES)
    try:
        yield shapes_family.SHAPES
    finally:
        FAMILIES.remove("shapes")


def _perturbations(records: list[dict]) -> list[dict]:
    return [p for r in records for p in r["perturbations"]]


def test_registered_it_reads_its_files_and_is_detected(shapes):
    assert family_reading(QUESTIONS) is shapes and family_named("shapes") is shapes
    assert family_reading(Path(__file__).parents[2] / "contrastgen" / "data" / "sample" / "questions.json").name == "gqa"
    graphs = shapes.load_scenes(SCENES)
    assert graphs["a"]["objects"]["1"] == {"name": "cube", "attributes": ["red"], "x": 10, "y": 20, "w": 12, "h": 12,
                                           "relations": [{"name": "to the left of", "object": "2"}]}
    assert shapes.load_questions(QUESTIONS)["s1"] == {"question": "What color is the cube?", "imageId": "a",
                                                      "answer": "red"}


def test_the_library_generates_proven_perturbations(shapes):
    graphs = shapes.load_scenes(SCENES)
    gen = generate(shapes.load_questions(QUESTIONS), graphs, family="shapes", workers=1)
    perturbations = _perturbations(gen.records)
    assert len(perturbations) >= 3
    assert {"question": "What color is the cylinder?", "answer": "blue"}.items() <= next(
        p for p in perturbations if p["question_id"] == "s6_c1").items()
    report = verify_contrast_sets(gen.records, graphs)
    assert report.ok and report.checked == len(perturbations)


def _generate(out: Path, *extra: str):
    return CliRunner().invoke(cli, ["generate", "--questions", str(QUESTIONS), "--scene-graphs", str(SCENES),
                                    "--out", str(out), "--no-progress", *extra])


def test_the_command_line_detects_it_writes_the_same_bytes_with_workers_and_verify_checks_it(
        shapes, tmp_path, monkeypatch):
    monkeypatch.setattr(contrastgen.families.base, "SHARD_IMAGES", 1)  # three shards, over two forked workers
    for workers in ("1", "2"):
        result = _generate(tmp_path / workers, "--workers", workers)
        assert result.exit_code == 0, result.output
    one, two = tmp_path / "1", tmp_path / "2"
    files = sorted(p.name for p in one.iterdir() if p.is_file())
    assert "contrast_sets.jsonl" in files and "augmented.json" in files
    assert all((one / f).read_bytes() == (two / f).read_bytes() for f in files)
    records = [json.loads(line) for line in (one / "contrast_sets.jsonl").read_text().splitlines()]
    assert len(_perturbations(records)) >= 3
    # `verify` imports nothing of the generator, the registry included: it is given the family's
    # scenes in the data model's JSON (GQA's scene-graph file)
    graphs = tmp_path / "graphs.json"
    graphs.write_text(json.dumps(shapes.load_scenes(SCENES)))
    result = CliRunner().invoke(cli, ["verify", str(one), "--scene-graphs", str(graphs), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] and report["checked"] == len(_perturbations(records))


def test_a_bad_record_is_one_sentence_naming_the_file_and_the_record(shapes, tmp_path):
    bad = tmp_path / "questions.json"
    bad.write_text(json.dumps({"shapes_questions": [{"id": "s1", "scene": "a"}]}))
    result = CliRunner().invoke(cli, ["generate", "--questions", str(bad), "--scene-graphs", str(SCENES),
                                      "--out", str(tmp_path / "out"), "--no-progress", "--workers", "1"])
    assert result.exit_code == 2
    assert str(bad) in result.output and "question s1" in result.output and "Traceback" not in result.output
    with pytest.raises(InputError, match="shape 2"):
        shapes.load_scenes(_scenes_with(tmp_path, {"shape": "ball", "color": "blue", "x": -5, "y": 1, "size": 3}))


def _scenes_with(tmp_path: Path, shape: dict) -> Path:
    path = tmp_path / "scenes.json"
    ok = {"shape": "cube", "color": "red", "x": 1, "y": 1, "size": 3}
    path.write_text(json.dumps({"shapes_scenes": {"a": {"width": 10, "shapes": [ok, shape]}}}))
    return path


def test_without_it_the_registry_is_the_built_in_one(shapes):
    FAMILIES.remove("shapes")
    try:
        assert FAMILIES.names() == ("gqa", "clevr") and family_reading(QUESTIONS).name == "gqa"
    finally:
        register(shapes)
