"""Part words that do not settle which parts they mean are refused, never answered.

Super-CLEVR's engine keeps a part when the raw name the program writes is a substring of the
part's (`door_left_s` is no substring of a school bus's `door_mid_left`, `wheel_back` none of a
sedan's `back_left_wheel`); contrastgen reads a part's words ("a left door" keeps every part
whose words include "left door"). Where the two select different parts on the scene, the words
alone do not say whether a mid-left door is a left door: the generator refuses the question or
the edit (`part_ambiguous`) and the verifier, with its own code, rejects a record that holds one.
The scene is modelled on the synthetic Super-CLEVR questions where the engine disagreed
(`benchmarks/synth_superclevr.py --scenes 300 --seed 0`, questions 375 and 2167).
"""

from __future__ import annotations

import pytest

import contrastgen.clevr.edits as edits
from contrastgen.clevr.evidence import engine_program, part_words_ambiguous
from contrastgen.clevr.executor import Execution, execute
from contrastgen.clevr.question import perturb_clevr_question
from contrastgen.clevr.scene_view import clevr_scene
from contrastgen.datasets.clevr import scene_graph
from contrastgen.datasets.clevr_reading import Reading, read_question
from contrastgen.ood.superclevr_redundancy import redundancy_splits
from contrastgen.verify.clevr import clevr_problems, part_name_problems, run_program
from contrastgen.verify.graph import GraphIndex
from contrastgen.verify.superclevr_redundancy import question_problems

PART_FAMILY = {"template_filename": "part.json"}
NAME_OF_OBJECT_WITH_PART = 4  # "What is the name of the <Z> <C> <M> <S> that has a <Z2> <C2> <M2> <P>?"
COLOR_OF_PART = 0  # "What is the <C2> of the <Z2> <M2> <P> of the <Z> <C> <M> <S>?"


def _scene():
    def obj(size, color, material, shape, x, parts):
        return {"size": size, "color": color, "material": material, "shape": shape, "parts": parts,
                "pixel_coords": [x, 100, 10]}

    def part(color):
        return {"color": color, "material": "metal", "size": "small"}
    scene = {"image_filename": "parts.png", "objects": [
        obj("large", "gray", "metal", "jet", 50, {"door_left_s": part("yellow")}),
        obj("small", "red", "metal", "school", 150, {"door_mid_left": part("cyan")}),
        obj("small", "blue", "rubber", "sedan", 250, {"back_left_wheel": part("green")})],
        "relationships": {r: [[] for _ in range(3)] for r in ("left", "right", "behind", "front")}}
    return scene_graph(scene, path="parts.json", record="scene 0")


def _question(text: str, family: int, answer: str) -> dict:
    return {"question": text, "question_family_index": family, "answer": answer, "imageId": "parts",
            **PART_FAMILY}


def _perturb(q: dict):
    image_id, graph = _scene()
    return perturb_clevr_question("q", q, clevr_scene(image_id, graph), max_k=5, seed=0, existing=set())


def _execution(text: str, family: int) -> tuple[list, Execution]:
    reading = read_question({"question": text, "question_family_index": family, **PART_FAMILY})
    assert isinstance(reading, Reading), reading
    image_id, graph = _scene()
    run = execute(reading.program(), clevr_scene(image_id, graph))
    assert isinstance(run, Execution)
    return reading.program(), run


@pytest.mark.parametrize(("text", "family", "ambiguous"), [
    ("What is the name of the big metallic object that has a left door?", NAME_OF_OBJECT_WITH_PART, False),
    ("What is the name of the small metallic object that has a left door?", NAME_OF_OBJECT_WITH_PART, True),
    ("What is the color of the back wheel of the sedan?", COLOR_OF_PART, True),
    ("What is the color of the back left wheel of the sedan?", COLOR_OF_PART, False),
    ("What is the color of the wheel of the sedan?", COLOR_OF_PART, False),
])
def test_part_words_are_ambiguous_exactly_where_the_engines_substring_keeps_other_parts(text, family, ambiguous):
    program, run = _execution(text, family)
    assert part_words_ambiguous(program, run) is ambiguous
    _, graph = _scene()
    written = engine_program(program, run)
    assert bool(part_name_problems(written, run_program(written, graph["objects"]))) is ambiguous


@pytest.mark.parametrize(("text", "family", "answer"), [
    ("What is the name of the small metallic object that has a left door?", NAME_OF_OBJECT_WITH_PART, "school bus"),
    ("What is the color of the back wheel of the sedan?", COLOR_OF_PART, "green"),
])
def test_an_original_whose_part_words_are_ambiguous_is_refused_and_counted(text, family, answer):
    outcome = _perturb(_question(text, family, answer))
    assert outcome.result.reason == "part_ambiguous" and not outcome.result.perturbations


def test_an_edit_whose_part_words_are_ambiguous_is_refused_and_counted():
    text = "What is the name of the big metallic object that has a left door?"
    kept = _perturb(_question(text, NAME_OF_OBJECT_WITH_PART, "jet")).result
    assert kept.reason is None and kept.perturbations
    assert "school bus" not in {p.answer for p in kept.perturbations}
    reading = read_question({"question": text, "question_family_index": NAME_OF_OBJECT_WITH_PART, **PART_FAMILY})
    image_id, graph = _scene()
    scene = clevr_scene(image_id, graph)
    editor = edits.Editor(reading, scene, execute(reading.program(), scene))
    editor.contrasts()
    assert editor.refused == {"part_ambiguous": 1}  # "big" -> "small": the school bus by its mid-left door


def test_the_verifier_rejects_a_record_that_holds_ambiguous_part_words(monkeypatch):
    q = _question("What is the name of the big metallic object that has a left door?", NAME_OF_OBJECT_WITH_PART, "jet")
    monkeypatch.setattr(edits, "part_words_ambiguous", lambda program, execution: False)
    result = _perturb(q).result
    record = result.record()
    image_id, graph = _scene()
    index = GraphIndex({"width": 640, "height": 480, **graph})
    problems = {p["answer"]: clevr_problems(record, p, index) for p in record["perturbations"]}
    assert [kind for kind, _ in problems.pop("school bus")] == ["text_mismatch"]
    assert problems and not any(problems.values())  # every other edit holds


def test_the_redundancy_splits_leave_out_a_question_whose_part_words_are_ambiguous():
    image_id, graph = _scene()
    ambiguous = {**_question("What is the color of the back wheel of the sedan?", COLOR_OF_PART, "green"),
                 "image": image_id, "question_index": 0}
    certain = {**_question("What is the color of the left door of the jet?", COLOR_OF_PART, "yellow"),
               "image": image_id, "question_index": 1}
    splits, stats = redundancy_splits([ambiguous, certain], {image_id: graph})
    assert stats["originals"].get("unread (part words ambiguous)") == 1
    assert [q["question_index"] for q in splits["rd"]] == [1]
    assert not question_problems(splits["rd"][0], graph["objects"], {})
    program, run = _execution(ambiguous["question"], COLOR_OF_PART)
    written = {**ambiguous, "program": engine_program(program, run)}
    assert [kind for kind, _ in question_problems(written, graph["objects"], {})] == ["text_mismatch"]
