"""Runs Super-CLEVR's own question engine on contrastgen's CLEVR-format programs.

Usage: python benchmarks/superclevr_engine_check.py ENGINE_DIR OUT_DIR SCENES (a folder of scene files,
or CLEVR's {"scenes": [...]} file)
ENGINE_DIR holds Super-CLEVR's `question_generation/question_engine.py` (github.com/Lizw14/Super-CLEVR;
not shipped with contrastgen); OUT_DIR is a `contrastgen generate` output on Super-CLEVR data, or a
`contrastgen ood superclevr` output (its rd-, rd and rd+ questions, each with its program).
Prints how many original and perturbed programs the engine executes to the answer contrastgen
recorded, and lists the others: the check that the programs are CLEVR's format "as they are".
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import sys
from pathlib import Path

from contrastgen.datasets.clevr_vocab import load_vocabulary
from contrastgen.resources import rules_file


def _engine_file(engine_dir: Path) -> Path | None:
    """The engine's file: ENGINE_DIR may be a clone of Super-CLEVR or its question_generation/."""
    for candidate in (engine_dir / "question_engine.py", engine_dir / "question_generation" / "question_engine.py"):
        if candidate.is_file():
            return candidate
    return None


def _engine(engine_file: Path):
    spec = importlib.util.spec_from_file_location("question_engine", engine_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _metadata() -> dict:
    meta = json.loads(rules_file("clevr", "metadata_superclevr.json").read_text())
    meta["_shape_hier"] = {s: cat for cat, shapes in meta["types"]["Shape"].items() for s in shapes}
    meta["types"]["Partname"] = json.loads(rules_file("clevr", "part_dict.json").read_text())
    return meta


def _with_parts(scene: dict, meta: dict) -> dict:
    """The engine reads parts from `_parts`, numbered by the shape's part list, as its generator
    prepares scenes before asking questions."""
    scene = copy.deepcopy(scene)
    for obj in scene["objects"]:
        names = meta["types"]["Partname"].get(obj["shape"], [])
        obj["_parts"] = {i: {"partname": n, **obj.get("parts", {})[n]} for i, n in enumerate(names)
                         if n in obj.get("parts", {})}
    return scene


def _items(out_dir: Path):
    """(image, [(id, program, answer)]) per record: a contrast set's original and perturbations, or
    each question of the redundancy splits rd-, rd, rd+."""
    if (out_dir / "rd+.json").is_file():
        for level in ("rd-", "rd", "rd+"):
            for q in json.loads((out_dir / f"{level}.json").read_text())["questions"]:
                yield q["image"], [(f"{level}/{q['question_index']}", q["program"], _words(q["answer"]))]
        return
    for line in Path(out_dir, "contrast_sets.jsonl").read_text().splitlines():
        record = json.loads(line)
        items = [(record["question_id"], record["program"], record["answer"])]
        items += [(p["question_id"], p["program"], p["answer"]) for p in record["perturbations"]]
        yield record["image_id"], items


def _words(answer) -> str:
    return load_vocabulary().answer_words(answer)


def main(engine_dir: str, out_dir: str, scenes_dir: str) -> int:
    engine_file = _engine_file(Path(engine_dir))
    if engine_file is None:
        print(f"superclevr_engine_check: no question_engine.py in {engine_dir} or its question_generation/: "
              "clone Super-CLEVR (github.com/Lizw14/Super-CLEVR) and give that folder; contrastgen does not "
              "ship the engine", file=sys.stderr)
        return 2
    for given, what in ((out_dir, "OUT_DIR"), (scenes_dir, "SCENES")):
        if not Path(given).exists():
            print(f"superclevr_engine_check: {what} {given} does not exist", file=sys.stderr)
            return 2
    engine = _engine(engine_file)
    meta = _metadata()
    vocab = load_vocabulary()
    scenes = {}
    for path in sorted(Path(scenes_dir).glob("*.json")) if Path(scenes_dir).is_dir() else [Path(scenes_dir)]:
        data = json.loads(path.read_text())
        for scene in data.get("scenes", [data]):
            scenes[Path(scene["image_filename"]).stem] = scene
    ok = bad = 0
    for image, items in _items(Path(out_dir)):
        scene = _with_parts(scenes[image], meta)
        for qid, program, answer in items:
            nodes = [{"type": n["type"], "inputs": n["inputs"], "side_inputs": n["value_inputs"]} for n in program]
            got = engine.answer_question({"nodes": nodes}, meta, copy.deepcopy(scene), cache_outputs=False)
            if got != "__INVALID__" and vocab.answer_words(got) == answer:
                ok += 1
            else:
                bad += 1
                print(f"{qid}: engine {got!r}, contrastgen {answer!r}")
    print(f"Super-CLEVR's engine agrees on {ok} of {ok + bad} programs")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("engine_dir", metavar="ENGINE_DIR", help="a clone of Super-CLEVR, or its question_generation/")
    parser.add_argument("out_dir", metavar="OUT_DIR", help="a contrastgen generate or ood superclevr output")
    parser.add_argument("scenes", metavar="SCENES", help="a folder of scene files, or CLEVR's scenes file")
    args = parser.parse_args()
    sys.exit(main(args.engine_dir, args.out_dir, args.scenes))
