"""Outputs say what they are (`manifest.json`), and the readers go by it: `verify`, `evaluate`,
`export` and `view` dispatch on the manifest's kind; an output written before manifests is known
by its layout (`files.manifest.legacy_kind`) and reads as before; a reader handed another kind
says which kind it was given."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from contrastgen import __version__
from contrastgen.cli import cli
from contrastgen.errors import InputError
from contrastgen.files.manifest import (
    CAPTION_SET,
    CONTRAST_SET,
    GQA_REDUNDANCY_LADDER,
    MANIFEST,
    OOD_GQA,
    OOD_SUPERCLEVR,
    OOD_SUPERCLEVR_VARIANTS,
    OOD_VQAVS,
    artifact_kind,
    legacy_kind,
    read_manifest,
)
from contrastgen.jsonio import write_json, write_jsonl
from contrastgen.records import caption_file, contrast_file
from contrastgen.resources import sample_dir


def _run(*args: str):
    return CliRunner().invoke(cli, list(map(str, args)), catch_exceptions=False)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """`generate` and `ood gqa-redundancy` on the bundled sample: {kind: directory}."""
    root = tmp_path_factory.mktemp("manifests")
    q, g = sample_dir() / "questions.json", sample_dir() / "scene_graphs.json"
    made = {CONTRAST_SET: root / "cs", GQA_REDUNDANCY_LADDER: root / "ladder"}
    assert _run("generate", "--questions", q, "--scene-graphs", g, "--out", made[CONTRAST_SET],
                "--workers", "1", "--no-progress").exit_code == 0
    assert _run("ood", "gqa-redundancy", "--questions", q, "--scene-graphs", g,
                "--out", made[GQA_REDUNDANCY_LADDER]).exit_code == 0
    return made


def test_each_output_says_what_it_is_and_what_made_it(outputs):
    for kind, folder in outputs.items():
        manifest = read_manifest(folder)
        assert manifest is not None and manifest.kind == kind == artifact_kind(folder)
        assert manifest.contrastgen == __version__ and manifest.made_by.startswith("contrastgen ")
        raw = json.loads((folder / MANIFEST).read_text())
        assert list(raw) == ["contrastgen", "format_version", "kind", "made_by"]  # and nothing of the host


def test_an_output_without_a_manifest_is_known_by_its_layout_and_reads_as_before(outputs, tmp_path):
    graphs = sample_dir() / "scene_graphs.json"
    for kind, folder in outputs.items():
        old = tmp_path / folder.name
        shutil.copytree(folder, old)
        (old / MANIFEST).unlink()
        assert read_manifest(old) is None and artifact_kind(old) == legacy_kind(old) == kind
        now, before = (_run("verify", d, "--scene-graphs", graphs, "--json") for d in (folder, old))
        assert now.exit_code == before.exit_code == 0
        assert json.loads(now.output)["checked"] == json.loads(before.output)["checked"] > 0


def test_the_layouts_of_older_outputs(tmp_path):
    benchmarks = {"gqa-ood": OOD_GQA, "vqa-vs": OOD_VQAVS, "gqa-redundancy": GQA_REDUNDANCY_LADDER,
                  "super-clevr": OOD_SUPERCLEVR}
    for benchmark, kind in benchmarks.items():
        write_json(tmp_path / benchmark / "stats.json", {"benchmark": benchmark})
        assert legacy_kind(tmp_path / benchmark) == kind
    write_json(tmp_path / "variants" / "stats.json", {"benchmark": "super-clevr", "layout": "variants"})
    assert legacy_kind(tmp_path / "variants") == OOD_SUPERCLEVR_VARIANTS
    caption = {"id": "c", "caption": "a cat", "negatives": []}
    write_jsonl(tmp_path / "captions" / "captions.jsonl", [caption])
    write_jsonl(tmp_path / "picked.jsonl", [caption])
    assert legacy_kind(tmp_path / "captions") == legacy_kind(tmp_path / "picked.jsonl") == CAPTION_SET
    write_jsonl(tmp_path / "cs.jsonl", [{"question_id": "q"}])
    assert legacy_kind(tmp_path / "cs.jsonl") == CONTRAST_SET
    (tmp_path / "empty").mkdir()
    assert legacy_kind(tmp_path / "empty") is None


def test_a_reader_handed_another_kind_says_which(outputs):
    ladder = outputs[GQA_REDUNDANCY_LADDER]
    with pytest.raises(InputError, match="is a GQA redundancy ladder .*, not a contrast set") as err:
        contrast_file(ladder)
    assert err.value.path == str(ladder)
    with pytest.raises(InputError, match="is a contrast set .*, not a caption set"):
        caption_file(outputs[CONTRAST_SET])
    result = CliRunner().invoke(cli, ["export", str(ladder), "--format", "jsonl", "--out", str(ladder.parent / "x")])
    assert result.exit_code == 2 and "GQA redundancy ladder" in result.output and "Traceback" not in result.output


def test_a_manifest_of_a_newer_format_or_no_known_kind_is_refused(tmp_path):
    write_json(tmp_path / "new" / MANIFEST, {"kind": CONTRAST_SET, "format_version": 99, "made_by": "x"})
    with pytest.raises(InputError, match="newer than this contrastgen reads"):
        artifact_kind(tmp_path / "new")
    write_json(tmp_path / "odd" / MANIFEST, {"kind": "photo album", "format_version": 1, "made_by": "x"})
    with pytest.raises(InputError, match="not a contrastgen manifest"):
        artifact_kind(tmp_path / "odd")
