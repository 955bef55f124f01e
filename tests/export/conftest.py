"""Contrast sets to export: the bundled GQA sample in both modes (templates and program edits,
contrast and invariance) and the bundled Super-CLEVR sample."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from contrastgen.resources import clevr_sample_dir, sample_dir


@pytest.fixture(scope="session")
def gqa_output(tmp_path_factory) -> Path:
    from contrastgen.engine import Engine
    from contrastgen.run.generate import generate
    from contrastgen.writers import write_outputs

    questions = orjson.loads((sample_dir() / "questions.json").read_bytes())
    graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    out = tmp_path_factory.mktemp("export_gqa") / "out"
    write_outputs(generate(questions, graphs, engine=Engine.load(), workers=1, mode="both"), out)
    return out


@pytest.fixture(scope="session")
def clevr_output(tmp_path_factory) -> Path:
    from contrastgen.run.pipeline import RunRequest, run_generate

    sample = clevr_sample_dir()
    out = tmp_path_factory.mktemp("export_clevr") / "out"
    run_generate(RunRequest(sample / "questions", sample / "scenes", "clevr", workers=1), out)
    return out


@pytest.fixture()
def hf_offline(tmp_path, monkeypatch):
    """`datasets` with its cache in the test's own folder and no network (parallel-safe)."""
    datasets = pytest.importorskip("datasets", reason="the `datasets` package (extra [hf]) is not installed")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    datasets.disable_progress_bars()
    return datasets


SHARED_CLEVR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "super-clevr"


@pytest.fixture(scope="session")
def shared_clevr_images() -> Path:
    """../shared's Super-CLEVR renders (PNG, 640x480)."""
    if not (SHARED_CLEVR / "images").is_dir():
        pytest.skip(f"../shared/data/super-clevr/images is absent ({SHARED_CLEVR})")
    return SHARED_CLEVR / "images"


@pytest.fixture(scope="session")
def gqa_images(gqa_output, tmp_path_factory) -> Path:
    """A JPEG per image of the GQA sample (the sample ships scene graphs, not images), each a
    different colour so that a test can tell which image a row carries."""
    from PIL import Image

    folder = tmp_path_factory.mktemp("gqa_images")
    ids = {orjson.loads(line)["image_id"] for line in (gqa_output / "contrast_sets.jsonl").read_bytes().splitlines()}
    for i, image_id in enumerate(sorted(ids)):
        Image.new("RGB", (48, 32), (i * 37 % 256, i * 91 % 256, 120)).save(folder / f"{image_id}.jpg")
    return folder


@pytest.fixture(scope="session")
def shared_clevr_output(shared_clevr_images, tmp_path_factory) -> Path:
    """Contrast sets of every sixth question about ../shared's rendered Super-CLEVR scenes, each
    record naming its PNG (`generate --images`); 40 questions, k = 2, so that embedding the
    640x480 renders stays small."""
    from contrastgen.run.pipeline import RunRequest, run_generate

    folder = tmp_path_factory.mktemp("shared_clevr")
    questions = orjson.loads((SHARED_CLEVR / "superCLEVR_questions_5.json").read_bytes())
    questions["questions"] = questions["questions"][::6]
    (folder / "questions.json").write_bytes(orjson.dumps(questions))
    out = folder / "out"
    run_generate(RunRequest(folder / "questions.json", SHARED_CLEVR / "scenes", "clevr", max_k=2, workers=1), out,
                 images=shared_clevr_images)
    return out


@pytest.fixture(scope="session")
def gqa_with_image_files(gqa_output, gqa_images, tmp_path_factory) -> Path:
    """The GQA sample's contrast file with each record naming its image file, as
    `generate --images` writes it."""
    lines = [orjson.loads(line) for line in (gqa_output / "contrast_sets.jsonl").read_bytes().splitlines()]
    for rec in lines:
        rec["image_file"] = str(gqa_images / f"{rec['image_id']}.jpg")
    source = tmp_path_factory.mktemp("gqa_image_files") / "contrast_sets.jsonl"
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in lines))
    return source
