"""The CLEVR executor's semantics on a scene small enough to check by hand."""

from __future__ import annotations

from contrastgen.clevr.executor import Execution, Invalid, execute
from contrastgen.clevr.scene_view import clevr_scene
from contrastgen.datasets.clevr import scene_graph


def _scene():
    scene = {
        "image_filename": "tiny.png",
        "objects": [
            {"shape": "sedan", "size": "large", "color": "red", "material": "metal", "pixel_coords": [100, 100, 10],
             "parts": {"front_left_wheel": {"color": "blue", "material": "rubber", "size": "large"}}},
            {"shape": "school", "size": "small", "color": "red", "material": "rubber", "pixel_coords": [300, 100, 10],
             "parts": {"wheel_front_left": {"color": "green", "material": "metal", "size": "small"},
                       "wheel_back_left": {"color": "green", "material": "rubber", "size": "small"}}},
            {"shape": "jet", "size": "small", "color": "gray", "material": "metal", "pixel_coords": [200, 50, 12]},
        ],
        # relationships[r][i]: the objects that are r of object i
        "relationships": {"left": [[], [0], [0]], "right": [[1, 2], [], []], "behind": [[2], [2], []],
                          "front": [[], [], [0, 1]]},
    }
    image_id, graph = scene_graph(scene, path="tiny.json", record="scene 0")
    return clevr_scene(image_id, graph)


def _run(*nodes):
    program = [{"type": t, "inputs": i, "value_inputs": v} for t, i, v in nodes]
    return execute(program, _scene())


def test_shape_filter_takes_categories_and_unique_refuses_many():
    cars = _run(("scene", [], []), ("filter_shape", [0], ["car"]), ("count", [1], []))
    assert cars.answer == 1
    red = _run(("scene", [], []), ("filter_color", [0], ["red"]), ("unique", [1], []))
    assert isinstance(red, Invalid) and "2 objects" in red.reason


def test_relate_reads_relationships_as_clevr_does():
    # the objects left of the bus (object 1): the sedan
    out = _run(("scene", [], []), ("filter_shape", [0], ["bus"]), ("unique", [1], []), ("relate", [2], ["left"]),
               ("unique", [3], []), ("query_shape", [4], []))
    assert isinstance(out, Execution) and out.answer == "sedan"


def test_same_excludes_the_object_itself():
    out = _run(("scene", [], []), ("filter_shape", [0], ["jet"]), ("unique", [1], []), ("same_material", [2], []),
               ("count", [3], []))
    assert out.answer == 1  # the sedan, not the jet itself


def test_part_names_match_by_their_words_across_raw_spellings():
    wheels = _run(("scene", [], []), ("object2part", [0], []), ("partfilter_partname", [1], ["front_left_wheel"]),
                  ("count", [2], []))
    assert wheels.answer == 2  # the sedan's front_left_wheel and the bus's wheel_front_left
    front = _run(("scene", [], []), ("object2part", [0], []), ("partfilter_partname", [1], ["wheel_front"]),
                 ("unique", [2], []))
    assert isinstance(front, Invalid)  # "front wheel" names both front left wheels: not unique
    owner = _run(("scene", [], []), ("object2part", [0], []), ("partfilter_color", [1], ["green"]),
                 ("partfilter_material", [2], ["rubber"]), ("unique", [3], []), ("part2object", [4], []),
                 ("unique", [5], []), ("query_shape", [6], []))
    assert owner.answer == "school"


def test_comparisons():
    out = _run(("scene", [], []), ("filter_color", [0], ["red"]), ("count", [1], []), ("scene", [], []),
               ("filter_color", [3], ["gray"]), ("count", [4], []), ("greater_than", [2, 5], []))
    assert out.answer is True
