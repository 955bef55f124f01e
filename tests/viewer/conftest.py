"""A contrast-set output of the bundled sample, with images and a model's answers, for the viewer."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from PIL import Image

from contrastgen.engine import Engine
from contrastgen.jsonio import write_json
from contrastgen.resources import sample_dir
from contrastgen.run.generate import generate
from contrastgen.writers import write_outputs


@pytest.fixture(scope="session")
def sample_output(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("viewer")
    sample = sample_dir()
    questions = orjson.loads((sample / "questions.json").read_bytes())
    graphs = orjson.loads((sample / "scene_graphs.json").read_bytes())
    gen = generate(questions, graphs, engine=Engine.load(), workers=1, mode="both")
    out = root / "out"
    write_outputs(gen, out)
    images = root / "images"
    images.mkdir()
    for image_id, g in graphs.items():  # plain grey images the size of their graphs
        Image.new("RGB", (int(g["width"]), int(g.get("height") or 480)), (90, 90, 90)).save(images / f"{image_id}.jpg")
    answers = {}
    for rec in gen.records:  # a model that always says "yes"
        answers[rec["question_id"]] = "yes"
        for p in rec["perturbations"]:
            answers[p["question_id"]] = "yes"
    write_json(root / "always_yes.json", answers)
    write_json(root / "scene_graphs.json", graphs)
    return {"out": out, "images": images, "predictions": root / "always_yes.json",
            "scene_graphs": root / "scene_graphs.json", "root": root}
