"""Rebuilds tests/data/clevr10/: CLEVR 1.0 questions written by CLEVR's own generator.

Why: the shared Super-CLEVR questions use five of CLEVR 1.0's nine families; the other four
(zero_hop, two_hop, three_hop, single_and, single_or) need real generator output to test the
reading of words into programs. No CLEVR 1.0 question file is here, so this script makes one:
the ten shared Super-CLEVR scenes with each object's shape replaced by a CLEVR shape (cube,
sphere, cylinder; colours, materials, sizes and relationships kept), then Facebook's
`question_generation/generate_questions.py` (github.com/facebookresearch/clevr-dataset-gen, BSD;
not shipped) writes 30 questions per scene with their programs.

Usage: python benchmarks/make_clevr10_fixture.py GENERATOR_DIR SUPERCLEVR_SCENES_DIR OUT_DIR
(GENERATOR_DIR holds generate_questions.py, question_engine.py, metadata.json, synonyms.json and
CLEVR_1.0_templates/). The generator draws from an unseeded `random` and iterates over sets of
strings; seeded (0) and with PYTHONHASHSEED fixed, as here, its output is reproducible.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SHAPES = ("cube", "sphere", "cylinder")


def clevr_scenes(superclevr_dir: Path) -> dict:
    scenes = []
    for i, path in enumerate(sorted(superclevr_dir.glob("*.json"))):
        s = json.loads(path.read_text())
        objects = [{"shape": SHAPES[(j * 7 + i) % 3], "color": o["color"], "material": o["material"],
                    "size": o["size"], "pixel_coords": o["pixel_coords"][0], "3d_coords": o["3d_coords"],
                    "rotation": o["rotation"]} for j, o in enumerate(s["objects"])]
        scenes.append({"image_filename": f"CLEVR_synth_{i:06d}.png", "image_index": i, "split": "synth",
                       "objects": objects, "relationships": s["relationships"], "directions": s["directions"]})
    return {"info": {"split": "synth", "license": "made from Super-CLEVR scenes (BSD)"}, "scenes": scenes}


def main(generator: str, superclevr_scenes: str, out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    scenes = clevr_scenes(Path(superclevr_scenes))
    with tempfile.TemporaryDirectory() as tmp:
        scene_file = Path(tmp) / "scenes.json"
        scene_file.write_text(json.dumps(scenes))
        questions_file = Path(tmp) / "questions.json"
        # The generator never seeds `random` itself: seed it, then run the script as __main__.
        seeded = ("import random, runpy, sys; random.seed(0); sys.argv = sys.argv[1:]; "
                  "runpy.run_path('generate_questions.py', run_name='__main__')")
        subprocess.run([sys.executable, "-c", seeded, "generate_questions.py", "--input_scene_file", str(scene_file),
                        "--output_questions_file", str(questions_file), "--templates_per_image", "30",
                        "--instances_per_template", "1"], cwd=generator, check=True, capture_output=True,
                       env={**os.environ, "PYTHONHASHSEED": "0"})  # it also iterates over sets of strings
        questions = json.loads(questions_file.read_text())
    for q in questions["questions"]:
        for node in q["program"]:
            node.pop("_output", None)  # the generator's cache of each node's output
    (out / "questions.json").write_text(json.dumps(questions, indent=0, sort_keys=True))
    (out / "scenes.json").write_text(json.dumps(scenes, indent=0, sort_keys=True))


if __name__ == "__main__":
    main(*sys.argv[1:4])
