"""`contrastgen export --format hf|parquet` as the datasets people publish on the Hub: each row
with its image (`--images DIR`), a card written with `huggingface_hub` naming the source, its
licence, the method's paper and the generator, `DatasetInfo` filled, one default split name."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

import contrastgen
from contrastgen.cli import cli

pytest.importorskip("huggingface_hub", reason="the `huggingface_hub` package (extra [hf]) is not installed")


def _export(source: Path, out: Path, fmt: str, *extra: str) -> Path:
    result = CliRunner().invoke(cli, ["export", str(source), "--format", fmt, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out


def _pixel(images: Path, image_id: str) -> tuple[int, ...]:
    with Image.open(images / f"{image_id}.jpg") as image:
        return image.convert("RGB").getpixel((24, 16))


def _check_images(ds, images: Path) -> None:
    """Every row's image decodes to its own file's size and colour (the fixture's images differ)."""
    assert ds.features["image"].__class__.__name__ == "Image"
    seen = {}
    for row in ds:
        image = row["image"]
        assert isinstance(image, Image.Image) and image.size == (48, 32)
        if row["image_id"] not in seen:
            seen[row["image_id"]] = image.convert("RGB").getpixel((24, 16))
            assert seen[row["image_id"]] == _pixel(images, row["image_id"])
    assert len(seen) > 1


def test_hf_export_with_images_loads_them_from_disk(gqa_output, gqa_images, tmp_path, hf_offline):
    out = _export(gqa_output, tmp_path / "hf", "hf", "--images", str(gqa_images))
    ds = hf_offline.load_from_disk(str(out))["test"]
    _check_images(ds, gqa_images)
    assert "`image` | `image`" in (out / "README.md").read_text()


def test_parquet_export_with_images_loads_them_offline(gqa_output, gqa_images, tmp_path, hf_offline):
    out = _export(gqa_output, tmp_path / "pq", "parquet", "--images", str(gqa_images))
    files = [str(f) for f in sorted((out / "data").glob("*.parquet"))]
    ds = hf_offline.load_dataset("parquet", data_files={"test": files}, cache_dir=str(tmp_path / "c1"))["test"]
    _check_images(ds, gqa_images)
    # the folder as the Hub holds it: `load_dataset` finds the split from the card's `configs`
    ds = hf_offline.load_dataset(str(out), cache_dir=str(tmp_path / "c2"))["test"]
    _check_images(ds, gqa_images)
    import pyarrow.parquet as pq

    image_type = pq.read_schema(files[0]).field("image").type
    assert [image_type.field(i).name for i in range(image_type.num_fields)] == ["bytes", "path"]


def test_without_images_there_is_no_image_column_and_the_card_says_so(gqa_output, tmp_path, hf_offline):
    out = _export(gqa_output, tmp_path / "hf", "hf")
    assert "image" not in hf_offline.load_from_disk(str(out))["test"].features
    assert "This export has no image column" in (out / "README.md").read_text()


def test_images_with_the_same_input_write_the_same_bytes(gqa_output, gqa_images, tmp_path, hf_offline):
    for fmt in ("parquet", "hf"):
        one = _export(gqa_output, tmp_path / f"{fmt}1", fmt, "--images", str(gqa_images))
        two = _export(gqa_output, tmp_path / f"{fmt}2", fmt, "--images", str(gqa_images))
        files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
        assert all((one / f).read_bytes() == (two / f).read_bytes() for f in files), fmt


def test_a_missing_image_is_an_error_and_nothing_is_written(gqa_output, gqa_images, tmp_path):
    partial = tmp_path / "partial"
    partial.mkdir()
    first = sorted(gqa_images.iterdir())[0]
    (partial / first.name).write_bytes(first.read_bytes())
    result = CliRunner().invoke(cli, ["export", str(gqa_output), "--format", "parquet", "--out",
                                      str(tmp_path / "out"), "--images", str(partial)])
    assert result.exit_code == 2 and "has no file" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, message", [
    (["--format", "jsonl", "--images", "{images}"], "--images applies to --format parquet, hf"),
    (["--format", "parquet", "--images", "{file}"], "is a file"),
])
def test_images_is_a_folder_for_a_format_that_embeds(gqa_output, gqa_images, tmp_path, args, message):
    file = next(gqa_images.iterdir())
    result = CliRunner().invoke(cli, ["export", str(gqa_output), "--out", str(tmp_path / "out"),
                                      *[a.format(images=gqa_images, file=file) for a in args]])
    assert result.exit_code == 2 and message in result.output, result.output


def _card(folder: Path):
    from huggingface_hub import DatasetCard, DatasetCardData

    card = DatasetCard.load(folder / "README.md")
    assert isinstance(card.data, DatasetCardData)
    return card.data.to_dict(), card.text


@pytest.mark.parametrize("which, sources, cited", [
    ("gqa_output", ["extended|other-gqa"], ["bitton-etal-2021-automatic", "hudson2019gqa"]),
    ("clevr_output", ["extended|other-clevr"], ["bitton-etal-2021-automatic", "johnson2017clevr", "li2023superclevr"]),
])
def test_the_card_names_source_licence_paper_and_generator(which, sources, cited, request, tmp_path):
    source = request.getfixturevalue(which)
    meta, text = _card(_export(source, tmp_path / "pq", "parquet"))
    assert meta["license"] == "cc-by-4.0" and meta["source_datasets"] == sources
    assert meta["task_categories"] == ["visual-question-answering"] and meta["size_categories"]
    assert "## Source data and licence" in text and "CC BY 4.0" in text
    citation = text.split("## Citation", 1)[1]
    assert "```bibtex" in citation and "Bitton, Yonatan" in citation and "pages = {94--105}" in citation
    for key in cited:
        assert f"{{{key}," in citation
    assert f"contrastgen {contrastgen.__version__}" in text and "seed 0" in text


def test_hf_dataset_info_carries_description_citation_and_licence(clevr_output, tmp_path, hf_offline):
    out = _export(clevr_output, tmp_path / "hf", "hf", "--license", "cc-by-sa-4.0")
    info = hf_offline.load_from_disk(str(out))["test"].info
    assert info.license == "cc-by-sa-4.0"
    assert "Bitton, Yonatan" in info.citation and "johnson2017clevr" in info.citation
    assert "Contrast sets" in info.description and contrastgen.__version__ in info.description


def test_every_export_has_the_same_default_split(gqa_output, tmp_path, hf_offline):
    from contrastgen.export import caption_hf, lmms_eval, write

    assert write.SPLIT == caption_hf.SPLIT == lmms_eval.SPLIT == "test"
    _export(gqa_output, tmp_path / "jl", "jsonl")
    assert (tmp_path / "jl" / "test.jsonl").is_file()
    assert list(hf_offline.load_from_disk(str(_export(gqa_output, tmp_path / "hf", "hf")))) == ["test"]


@pytest.mark.parametrize("command", [
    ["export", "{src}", "--format", "lmms-eval", "--out", "{out}"],
    ["captions", "export", "{src}", "--format", "sugarcrepe", "--out", "{out}"],
    ["generate", "--questions", "{src}", "--scene-graphs", "{src}", "--out", "{out}"],
    ["mturk", "export", "--contrast", "{src}", "--images-base-url", "https://h/i", "--sample", "1", "--out", "{out}"],
])
def test_images_is_a_directory_in_every_command(command, tmp_path):
    file = tmp_path / "a.jpg"
    file.write_bytes(b"x")
    result = CliRunner().invoke(cli, [*(a.format(src=file, out=tmp_path / "out") for a in command), "--images", str(file)])
    assert result.exit_code == 2 and "--images" in result.output and "is a file" in result.output, result.output
    assert not (tmp_path / "out").exists()


def test_export_names_its_input_source_and_its_output_a_folder(gqa_output, tmp_path):
    help_text = CliRunner().invoke(cli, ["export", "--help"]).output
    assert "export [OPTIONS] SOURCE" in help_text and "OUT_DIR" not in help_text
    (tmp_path / "file").write_text("")
    result = CliRunner().invoke(cli, ["export", str(gqa_output), "--format", "jsonl", "--out", str(tmp_path / "file")])
    assert result.exit_code == 2 and "is a file" in result.output


def test_a_batch_ends_at_its_image_bytes(gqa_output, gqa_images, tmp_path, monkeypatch, hf_offline):
    """Memory holds one batch: with images a batch (a Parquet row group) also ends once it holds
    BATCH_IMAGE_BYTES, and the rows read back the same however they were cut."""
    import pyarrow.parquet as pq

    from contrastgen.export import write

    whole = _export(gqa_output, tmp_path / "whole", "parquet", "--images", str(gqa_images))
    one_image = max(p.stat().st_size for p in gqa_images.iterdir())
    monkeypatch.setattr(write, "BATCH_IMAGE_BYTES", 10 * one_image)
    cut = _export(gqa_output, tmp_path / "cut", "parquet", "--images", str(gqa_images))
    file = "data/test-00000-of-00001.parquet"
    parquet = pq.ParquetFile(cut / file)
    assert parquet.num_row_groups > 1
    for i in range(parquet.num_row_groups):  # a group ends with the row that reaches the bound
        held = [len(image["bytes"]) for image in parquet.read_row_group(i, columns=["image"]).column("image").to_pylist()]
        assert sum(held[:-1]) < 10 * one_image
    assert pq.read_table(cut / file).to_pylist() == pq.read_table(whole / file).to_pylist()
