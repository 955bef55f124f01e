"""The caption exports read by each benchmark's loader as it stands. Every test does exactly the
loader's file layout and field access (written from reading CLIP_benchmark's `SugarCrepe`
dataset, ARO's `VG_Relation` / `VG_Attribution` and the NegCLIP fork's `CsvDataset`), on images
written for the bundled GQA sample at the sizes its graphs give."""

from __future__ import annotations

import ast
import csv
import json
import os
import random
from collections import Counter

import orjson
import pytest
from caption_cli import run
from PIL import Image

from contrastgen.export.caption_benchmarks import ARO_MIN_PAIR, SUGARCREPE_KINDS
from contrastgen.export.negclip import NEGCLIP_FILE
from contrastgen.jsonio import read_jsonl, write_jsonl
from contrastgen.resources import sample_dir


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    folder = tmp_path_factory.mktemp("images")
    graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    for image_id, g in graphs.items():
        Image.new("RGB", (g["width"], g["height"]), (20, 120, 200)).save(folder / f"{image_id}.jpg")
    return folder


def export(gqa_captions, out, fmt, images=None):
    args = ["captions", "export", gqa_captions, "--format", fmt, "--out", out]
    result = run(*args, *(["--images", images] if images else []))
    assert result.exit_code == 0, result.output
    return out


def pairs_of_kind(gqa_captions, kind):
    return [(r, n) for r in read_jsonl(gqa_captions / "captions.jsonl") for n in r["negatives"] if n["kind"] == kind]


def test_sugarcrepe_as_clip_benchmark_reads_it(tmp_path, gqa_captions, images):
    root = export(gqa_captions, tmp_path / "sugar", "sugarcrepe", images)
    for kind in SUGARCREPE_KINDS:  # main_eval.py opens all seven; CLIP_benchmark one per dataset name
        with open(os.path.join(root, f"{kind}.json")) as f:  # noqa: PTH123 (the loader's own call)
            ann = json.load(f)
        expected = pairs_of_kind(gqa_captions, kind)
        assert len(ann) == len(expected) > 0
        for idx_str, (record, negative) in zip(list(ann.keys()), expected, strict=True):
            data = ann[idx_str]
            img = Image.open(os.path.join(root, "val2017", data["filename"]))
            assert img.size[0] > 0
            assert [data["caption"], data["negative_caption"]] == [record["caption"], negative["caption"]]
            assert set(data) == {"filename", "caption", "negative_caption"}


def test_aro_as_its_dataset_classes_read_it(tmp_path, gqa_captions, images):
    root = export(gqa_captions, tmp_path / "aro", "aro", images)
    image_dir = os.path.join(root, "images")
    assert os.path.exists(image_dir)
    for name, kind in (("visual_genome_relation.json", "aro_relation"),
                       ("visual_genome_attribution.json", "aro_attribute")):
        with open(os.path.join(root, name)) as f:
            dataset = json.load(f)
        assert isinstance(dataset, list) and len(dataset) == len(pairs_of_kind(gqa_captions, kind)) > 0
        for item in dataset:
            image = Image.open(os.path.join(image_dir, item["image_path"])).convert("RGB")
            box = (item["bbox_x"], item["bbox_y"], item["bbox_x"] + item["bbox_w"], item["bbox_y"] + item["bbox_h"])
            assert all(isinstance(v, int) for v in box) and box[2] <= image.size[0] and box[3] <= image.size[1]
            crop = image.crop(box)
            assert crop.size == (item["bbox_w"], item["bbox_h"])
            caption_options = [item["false_caption"], item["true_caption"]]
            assert caption_options[0] != caption_options[1]
            if kind == "aro_relation":
                assert item["relation_name"] in item["true_caption"] and item["relation_name"] in item["false_caption"]
            else:
                a0, a1 = item["attributes"][0], item["attributes"][1]
                assert f"the {a0} " in item["true_caption"] and f"the {a1} " in item["false_caption"]


def test_hf_dataset_loads_with_datasets(tmp_path, gqa_captions, images, monkeypatch):
    datasets = pytest.importorskip("datasets", reason="the `datasets` package (extra [hf]) is not installed")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    out = export(gqa_captions, tmp_path / "hf", "hf", images)
    ds = datasets.load_from_disk(str(out))["test"]
    n = sum(len(r["negatives"]) for r in read_jsonl(gqa_captions / "captions.jsonl"))
    assert ds.num_rows == n
    row = ds[0]
    assert isinstance(row["image"], Image.Image)
    assert {"caption", "negative_caption", "kind", "evidence"} <= set(row)
    assert json.loads(row["evidence"])["proof"] in ("empty_phrase", "no_pair", "referents")
    again = export(gqa_captions, tmp_path / "hf2", "hf", images)
    assert sorted(p.name for p in again.rglob("*")) == sorted(p.name for p in out.rglob("*"))
    assert all((again / p.relative_to(out)).read_bytes() == p.read_bytes() for p in out.rglob("*") if p.is_file())


def test_hf_dataset_has_a_card_and_its_info_names_licence_and_citation(tmp_path, gqa_captions, monkeypatch):
    datasets = pytest.importorskip("datasets", reason="the `datasets` package (extra [hf]) is not installed")
    from huggingface_hub import DatasetCard, DatasetCardData

    import contrastgen

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    out = export(gqa_captions, tmp_path / "hf", "hf")
    card = DatasetCard.load(out / "README.md")
    assert isinstance(card.data, DatasetCardData)
    assert card.data.license == "cc-by-4.0" and card.data.source_datasets == ["extended|other-gqa"]
    stats = json.loads((gqa_captions / "stats.json").read_text())
    assert f"contrastgen {contrastgen.__version__}" in card.text and f"seed {stats['seed']}" in card.text
    citation = card.text.split("## Citation", 1)[1]
    assert "Bitton, Yonatan" in citation and "hudson2019gqa" in citation
    assert "has no images, only their file names" in card.text
    info = datasets.load_from_disk(str(out))["test"].info
    assert info.license == "cc-by-4.0" and "Bitton, Yonatan" in info.citation and info.description


def test_negclip_as_the_fork_reads_it(tmp_path, gqa_captions, images):
    pd = pytest.importorskip("pandas")
    out = export(gqa_captions, tmp_path / "negclip", "negclip", images)
    assert sorted(p.name for p in out.iterdir()) == [NEGCLIP_FILE]  # a folder, as every export's --out
    df = pd.read_csv(out / NEGCLIP_FILE, sep="\t", converters={"neg_caption": ast.literal_eval, "neg_image": ast.literal_eval})
    images_ = df["filepath"].tolist()
    captions = df["title"].tolist()
    hard_captions = df["neg_caption"].tolist()
    hard_images = df["neg_image"].tolist()
    rng = random.Random(0)
    for idx in range(len(df)):
        Image.open(str(images_[idx]))
        assert isinstance(captions[idx], str) and hard_captions[idx]
        chosen = rng.choice(hard_images[idx])
        assert 0 <= chosen < len(df) and images_[chosen] != images_[idx]
        assert isinstance(rng.choice(hard_captions[chosen]), str)


def test_aro_export_says_which_attribute_pairs_aro_will_report(tmp_path, gqa_captions):
    # ARO's VG_Attribution.evaluate_scores skips a pair ("first_second") with fewer than 25 records
    result = run("captions", "export", gqa_captions, "--format", "aro", "--out", tmp_path / "aro")
    assert result.exit_code == 0, result.output
    records = json.loads((tmp_path / "aro" / "visual_genome_attribution.json").read_text())
    per_pair = Counter(f"{r['attributes'][0]}_{r['attributes'][1]}" for r in records)
    assert max(per_pair.values()) < ARO_MIN_PAIR == 25  # the bundled sample is too small for any
    assert (f"none of the {len(per_pair)} pairs here has that many (the largest has {max(per_pair.values())})"
            in result.output and "no attribution result" in result.output)
    # grown until one pair has 25 records: that pair is reported, the others are counted as not
    recs = list(read_jsonl(gqa_captions / "captions.jsonl"))
    one = next(r for r in recs if any(n["kind"] == "aro_attribute" for n in r["negatives"]))
    grown = []
    for i in range(ARO_MIN_PAIR):
        copy = json.loads(json.dumps(one))
        copy["id"] = f"{one['id']}x{i}"
        copy["negatives"] = [dict(n, id=f"{n['id']}x{i}") for n in copy["negatives"] if n["kind"] == "aro_attribute"]
        grown.append(copy)
    write_jsonl(tmp_path / "grown" / "captions.jsonl", [*recs, *grown])
    result = run("captions", "export", tmp_path / "grown", "--format", "aro", "--out", tmp_path / "aro2")
    assert result.exit_code == 0, result.output
    total = len(records) + ARO_MIN_PAIR
    assert f"1 of the {len(per_pair)} pairs here (" in result.output and f" of {total} records)" in result.output


def test_exports_without_images_name_the_files_to_place(tmp_path, gqa_captions):
    root = export(gqa_captions, tmp_path / "sugar", "sugarcrepe")
    ann = json.loads((root / "add_obj.json").read_text())
    assert all(v["filename"].endswith(".jpg") for v in ann.values())
    assert not (root / "val2017").exists()


def test_a_missing_image_is_an_error_naming_it_and_nothing_is_written(tmp_path, gqa_captions, images):
    partial = tmp_path / "partial"
    partial.mkdir()
    first = next(iter(sorted(images.iterdir())))
    (partial / first.name).write_bytes(first.read_bytes())
    for fmt in ("sugarcrepe", "hf"):
        result = run("captions", "export", gqa_captions, "--format", fmt, "--out", tmp_path / fmt, "--images", partial)
        assert result.exit_code == 2 and "has no file" in result.output
        assert not (tmp_path / fmt).exists()


def test_negclip_cells_a_spreadsheet_would_run_are_neutralised(tmp_path, gqa_captions):
    recs = list(read_jsonl(gqa_captions / "captions.jsonl"))[:2]
    recs[0]["image_id"], recs[1]["image_id"] = "=HYPERLINK(\"http://x\")", "+1-2"
    write_jsonl(tmp_path / "captions.jsonl", recs)
    out = export(tmp_path / "captions.jsonl", tmp_path / "neg", "negclip")
    with (out / NEGCLIP_FILE).open(newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))[1:]
    assert [r[2] for r in rows] == ["'=HYPERLINK(\"http://x\").jpg", "'+1-2.jpg"]


@pytest.mark.parametrize(("spoil", "message"), [
    (lambda neg: neg.update(evidence=None), "negative 0: no 'evidence' object"),
    (lambda neg: neg["evidence"].update(facts=None), "negative 0: evidence.facts must be a"),
    (lambda neg: neg["evidence"]["facts"][0].update(ids=[7]), "field 'ids' must be a list of object ids"),
])
def test_a_negative_without_a_proof_is_refused_before_anything_is_written(tmp_path, gqa_captions, spoil, message):
    recs = list(read_jsonl(gqa_captions / "captions.jsonl"))
    first = next(r for r in recs if r["negatives"] and r["negatives"][0]["evidence"]["facts"][0].get("ids"))
    spoil(first["negatives"][0])
    bad = tmp_path / "bad"
    bad.mkdir()
    write_jsonl(bad / "captions.jsonl", recs)
    result = run("captions", "export", bad, "--format", "sugarcrepe", "--out", tmp_path / "out")
    assert result.exit_code == 2 and message in result.output and "captions.jsonl" in result.output
    assert not (tmp_path / "out").exists()
