"""CLEVR output in the other consumers: the viewer's data and the crowd export, with the real renders."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.viewer.bundle import bundle
from contrastgen.viewer.site import read_inputs


def test_viewer_reads_clevr_scenes_and_finds_the_renders(generated, sample):
    inputs = read_inputs(generated, scene_graphs=sample / "scenes", images_dir=sample / "images",
                         images="images")
    assert set(inputs.scene_graphs) == {f"superCLEVR_new_00000{i}" for i in range(5)}
    assert all(name and name.endswith(".jpg") for name in inputs.image_files.values())
    pages = bundle(inputs)
    text = json.dumps(pages, default=str)
    assert "the scene has" in text and "has a part" in text  # CLEVR facts in words
    assert '"w"' in text  # boxes of the scene objects, drawn over the render


def test_mturk_export_points_at_each_images_real_file(generated, sample, tmp_path):
    out = tmp_path / "hits"
    result = CliRunner().invoke(cli, ["mturk", "export", "--contrast", str(generated), "--images",
                                      str(sample / "images"), "--images-base-url", "https://example.org/sc",
                                      "--sample", "5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    csv_text = (out / "upload" / "batch_input.csv").read_text()
    urls = set(re.findall(r"https://example\.org/sc/[^,\s]+", csv_text))
    assert urls and all(u.endswith(".jpg") and (sample / "images" / u.rsplit("/", 1)[1]).is_file() for u in urls)
    missing = CliRunner().invoke(cli, ["mturk", "export", "--contrast", str(generated), "--images",
                                       str(sample / "scenes"), "--sample", "5", "--out", str(tmp_path / "x")])
    assert missing.exit_code == 2 and "has no file" in missing.output and not (tmp_path / "x").exists()


def test_generate_images_names_each_records_file_or_fails_before_writing(sample, tmp_path):
    out = tmp_path / "out"
    args = ["generate", "--questions", str(sample / "questions" / "superCLEVR_questions_part_5.json"),
            "--scene-graphs", str(sample / "scenes"), "--max-k", "1", "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--images", str(sample / "images")])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "contrast_sets.jsonl").read_text().splitlines()]
    assert records and all(r["image_file"] == str((sample / "images" / f"{r['image_id']}.jpg").resolve())
                           for r in records)
    bad = CliRunner().invoke(cli, [*args[:-1], str(tmp_path / "bad"), "--images", str(sample / "scenes")])
    assert bad.exit_code == 2 and "has no file" in bad.output and not (tmp_path / "bad").exists()


def test_generate_images_on_gqa_data(tmp_path):
    from PIL import Image

    from contrastgen.resources import sample_dir

    graphs = json.loads((sample_dir() / "scene_graphs.json").read_text())
    images = tmp_path / "images"
    images.mkdir()
    for image_id in graphs:
        Image.new("RGB", (8, 8)).save(images / f"{image_id}.png")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["generate", "--questions", str(sample_dir() / "questions.json"),
                                      "--scene-graphs", str(sample_dir() / "scene_graphs.json"), "--workers", "1",
                                      "--no-progress", "--images", str(images), "--out", str(out)])
    assert result.exit_code == 0, result.output
    first = json.loads((out / "contrast_sets.jsonl").read_text().splitlines()[0])
    assert first["image_file"].endswith(f"{first['image_id']}.png")


def test_augment_on_clevr_writes_originals_and_edited_programs(sample, tmp_path):
    questions = sample / "questions" / "superCLEVR_questions_part_5.json"
    out = tmp_path / "train_augmented.json"
    result = CliRunner().invoke(cli, ["augment", "--questions", str(questions), "--scene-graphs",
                                      str(sample / "scenes"), "--max-k", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    entries = json.loads(out.read_text())
    n_orig = len(json.loads(questions.read_text())["questions"])
    perturbed = {k: v for k, v in entries.items() if "_p" in k}
    assert len(entries) - len(perturbed) == n_orig and perturbed
    # every entry is a CLEVR question with its program; a perturbation's differs from its original's
    assert all(isinstance(e.get("program"), list) and e["program"] for e in entries.values())
    some_id, some = next(iter(sorted(perturbed.items())))
    original = entries[some_id.rsplit("_p", 1)[0]]
    assert some["question"] != original["question"]
    lxmert = json.loads(out.with_name("train_augmented.lxmert.json").read_text())
    assert len(lxmert) == len(entries) and {e["question_id"] for e in lxmert} == set(entries)


def test_every_clevr_perturbation_says_its_kind_in_every_output(generated):
    records = [json.loads(line) for line in (generated / "contrast_sets.jsonl").read_text().splitlines()]
    kinds = {p["question_id"]: p["kind"] for r in records for p in r["perturbations"]}
    assert set(kinds.values()) == {"contrast", "invariance"}
    view = json.loads((generated / "augmented.json").read_text())
    assert {qid: q["contrast"]["kind"] for qid, q in view.items() if "contrast" in q} == kinds


def _questions_with_a_wrong_answer(sample, tmp_path):
    """The first 40 questions of the sample's part file, the first one's answer made wrong."""
    data = json.loads((sample / "questions" / "superCLEVR_questions_part_5.json").read_text())
    data["questions"] = data["questions"][:40]
    wrong = data["questions"][0]
    wrong["answer"] = "7" if wrong["answer"] != "7" else "8"
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(data))
    return path, data["questions"]


def test_generate_views_hold_only_the_perturbed_originals_as_gqas_do(sample, tmp_path):
    questions, _ = _questions_with_a_wrong_answer(sample, tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["generate", "--questions", str(questions), "--scene-graphs",
                                      str(sample / "scenes"), "--no-progress", "--out", str(out)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "contrast_sets.jsonl").read_text().splitlines()]
    stats = json.loads((out / "stats.json").read_text())
    assert stats["reasons"].get("answer_mismatch") == 1 and len(records) < 40
    perturbed = {r["question_id"] for r in records}
    perturbations = {p["question_id"] for r in records for p in r["perturbations"]}
    original = json.loads((out / "original.json").read_text())
    assert set(original) == perturbed
    assert all(original[r["question_id"]]["answer"] == r["answer"] for r in records)
    assert set(json.loads((out / "augmented.json").read_text())) == perturbed | perturbations
    lxmert = json.loads((out / "lxmert" / "augmented.json").read_text())
    assert {e["question_id"] for e in lxmert} == perturbed | perturbations


def test_augment_keeps_every_original_and_a_program_only_where_it_is_proven(sample, tmp_path):
    questions, raw = _questions_with_a_wrong_answer(sample, tmp_path)
    out = tmp_path / "train.json"
    result = CliRunner().invoke(cli, ["augment", "--questions", str(questions), "--scene-graphs",
                                      str(sample / "scenes"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    entries = json.loads(out.read_text())
    originals = {k: v for k, v in entries.items() if "contrast" not in v}
    assert len(originals) == 40
    wrong_id = next(k for k, v in originals.items() if v["question"] == raw[0]["question"])
    assert originals[wrong_id]["answer"] == raw[0]["answer"] and "program" not in originals[wrong_id]
    assert all(isinstance(v.get("program"), list) for k, v in originals.items() if k != wrong_id)
