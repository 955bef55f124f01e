"""Reading CLEVR-family files: both scene layouts, format detection, and located errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from contrastgen.datasets.clevr import is_clevr_scenes, load_questions, load_scenes
from contrastgen.errors import InputError
from contrastgen.families import family_reading


def test_scene_dir_and_scenes_file_give_the_same_graphs(sample, tmp_path):
    from_dir = load_scenes(sample / "scenes")
    scenes = [json.loads(p.read_text()) for p in sorted((sample / "scenes").glob("*.json"))]
    bundle = tmp_path / "scenes.json"
    bundle.write_text(json.dumps({"info": {}, "scenes": scenes}))
    assert load_scenes(bundle) == from_dir
    graph = from_dir["superCLEVR_new_000000"]
    obj = graph["objects"]["0"]
    assert obj["name"] == "truck" and set(obj["attributes"]) == {"small", "red", "rubber"}
    assert obj["parts"]["trunk"]["name"] == "trunk"
    # relationships["left"][0] lists the objects left of object 0; they carry the relation
    left_of_0 = {o for o, v in graph["objects"].items()
                 if {"name": "to the left of", "object": "0"} in v["relations"]}
    assert left_of_0 == {str(i) for i in scenes[0]["relationships"]["left"][0]}
    assert 0 < obj["w"] < graph["width"]


def test_formats_are_detected(sample):
    assert family_reading(sample / "questions").name == "clevr"
    assert is_clevr_scenes(sample / "scenes")
    from contrastgen.resources import sample_dir
    assert family_reading(sample_dir() / "questions.json").name == "gqa"
    assert not is_clevr_scenes(sample_dir() / "scene_graphs.json")


def test_question_ids_and_answers(sample):
    one = load_questions(sample / "questions" / "superCLEVR_questions_5.json")
    both = load_questions(sample / "questions")
    assert "0" in one and "superCLEVR_questions_5/0" in both and "superCLEVR_questions_part_5/0" in both
    assert one["0"]["imageId"] == "superCLEVR_new_000000"
    assert {q["answer"] for q in one.values()} >= {"yes", "no"}  # CLEVR's booleans, as words


@pytest.mark.parametrize("scene, message", [
    ({"objects": []}, "image_filename"),
    ({"image_filename": "a.png", "objects": [{"shape": "cube"}], "relationships": {}}, "'size'"),
    ({"image_filename": "a.png", "objects": [{"shape": "dragon", "size": "small", "color": "red",
                                               "material": "metal", "pixel_coords": [1, 2, 3]}],
      "relationships": {}}, "unknown shape"),
    ({"image_filename": "a.png", "objects": [{"shape": "cube", "size": "small", "color": "red",
                                               "material": "metal", "pixel_coords": [1, 2, 3]}],
      "relationships": {"left": [[4]], "right": [[]], "front": [[]], "behind": [[]]}}, "does not exist"),
])
def test_malformed_scene_names_file_and_record(tmp_path, scene, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(scene))
    with pytest.raises(InputError) as err:
        load_scenes(path)
    assert message in str(err.value) and "bad.json" in str(err.value)


def _first_object(scene: dict) -> dict:
    return scene["objects"][0]


@pytest.mark.parametrize(("spoil", "message"), [
    (lambda s: s.pop("relationships"), "scene has no 'relationships'"),
    (lambda s: s["relationships"].clear(), "'relationships' has no 'left'"),
    (lambda s: s["relationships"].pop("behind"), "'relationships' has no 'behind'"),
    (lambda s: s["relationships"]["front"].pop(), "relationships['front'] does not have one list per object"),
    (lambda s: s["relationships"]["right"].__setitem__(0, None), "relationships['right'][0] is not a list"),
    (lambda s: _first_object(s).__setitem__("parts", None), "'parts' must be an object"),
    (lambda s: _first_object(s).__setitem__("pixel_coords", None), "object has no pixel_coords"),
])
def test_a_scene_field_given_as_nothing_is_refused_not_read_as_absent(sample, tmp_path, spoil, message):
    """No relations is not what a missing `relationships` says (it says nothing: "Is there a cube
    left of the sphere?" would be computed "no"); null parts or coordinates are no file a CLEVR
    writer made. A field left out where the format allows it (parts, pixel_coords) is still read."""
    data = json.loads((sample / "scenes" / "superCLEVR_new_000000.json").read_text())
    relationships = json.loads(json.dumps(data["relationships"]))
    spoil(data)
    bad = tmp_path / "s.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        load_scenes(bad)
    assert message in str(err.value) and "s.json" in str(err.value) and "superCLEVR_new_000000" in str(err.value)
    for obj in data["objects"]:
        obj.pop("parts", None)
        obj.pop("pixel_coords", None)
    data["relationships"] = relationships
    bad.write_text(json.dumps(data))
    assert load_scenes(bad)["superCLEVR_new_000000"]["objects"]["0"]["w"] == 0.0


@pytest.mark.parametrize(("field", "value", "message"), [
    ("question_family_index", -1e9, "'question_family_index' must be a whole number >= 0, not -1000000000.0"),
    ("question_family_index", -3, "'question_family_index' must be a whole number >= 0, not -3"),
    ("question_family_index", "7", "'question_family_index' must be a whole number >= 0, not '7'"),
    ("question_family_index", None, "'question_family_index' must be a whole number >= 0, not None"),
    ("template_filename", 12, "'template_filename' must be a string"),
    ("image_index", 2**70, "'image_index' must be a whole number >= 0, not 1.1805916207174113e+21"),  # read as a float
    ("image_index", -1e9, "'image_index' must be a whole number >= 0, not -1000000000.0"),
    ("image_filename", 12345, "'image_filename' must be a string"),
    ("question_index", 1.5, "'question_index' must be a whole number >= 0, not 1.5"),
])
def test_a_malformed_family_is_an_input_error_not_an_unreadable_question(sample, tmp_path, field, value, message):
    data = json.loads((sample / "questions" / "superCLEVR_questions_5.json").read_text())
    data["questions"][1][field] = value
    bad = tmp_path / "q.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        load_questions(bad)
    assert message in str(err.value) and "q.json" in str(err.value) and "question 1" in str(err.value)


@pytest.mark.parametrize("value", [2**70, -1e9, "3", True])
def test_a_scene_image_index_that_is_no_whole_number_is_refused(sample, tmp_path, value):
    data = json.loads((sample / "scenes" / "superCLEVR_new_000000.json").read_text())
    data["image_index"] = value
    bad = tmp_path / "s.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"s\.json: .*'image_index' must be a whole number >= 0"):
        load_scenes(bad)


@pytest.mark.parametrize("answer", [None, {}, [3]])
def test_an_answer_that_is_no_answer_is_an_input_error_not_gold(sample, tmp_path, answer):
    # read as words, null would be the gold answer "None" and an object "{}"
    data = json.loads((sample / "questions" / "superCLEVR_questions_5.json").read_text())
    data["questions"][2]["answer"] = answer
    bad = tmp_path / "q.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        load_questions(bad)
    assert "field 'answer' must be text, a number or a boolean" in str(err.value) and "question 2" in str(err.value)


def test_cli_error_exit_code_and_no_output(sample, tmp_path):
    bad = tmp_path / "q.json"
    bad.write_text(json.dumps({"questions": [{"question": "Is it?"}]}))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "contrastgen", "generate", "--questions", str(bad),
                           "--scene-graphs", str(sample / "scenes"), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "q.json" in done.stderr and "question 0" in done.stderr and "'image'" in done.stderr
    assert not out.exists()


def test_a_missing_file_is_named_before_its_format_is_guessed(sample, tmp_path):
    """Format detection opens the first file: a missing one is the user's error, by name, not a
    traceback, and not a complaint about the other input."""
    missing = tmp_path / "questions.json"
    with pytest.raises(InputError, match="file not found") as err:
        family_reading(missing)
    assert err.value.path == str(missing)
    with pytest.raises(InputError, match="file not found"):
        is_clevr_scenes(tmp_path / "scenes.json")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "contrastgen", "generate", "--questions", str(missing),
                           "--scene-graphs", str(sample / "scenes"), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 2 and f"{missing}: file not found" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()
