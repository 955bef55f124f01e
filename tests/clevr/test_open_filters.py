"""A single-attribute filter the words leave open ("How many things are either ...", in a family
whose text is "How many <Z3> things are either ...") filters nothing: the program has no node for
it, both executors refuse a filter node that holds no value, and the synthetic generator's
answers are what the words mean."""

from __future__ import annotations

import pytest

from contrastgen.clevr.executor import Execution, Invalid, execute
from contrastgen.clevr.scene_view import clevr_scene
from contrastgen.datasets.clevr import scene_graph
from contrastgen.datasets.clevr_reading import Reading, read_question
from contrastgen.verify.clevr import ProgramFails, answer_words, run_program

_OPEN = {("filter_size", ""), ("filter_color", ""), ("filter_material", ""), ("filter_shape", "thing"),
         ("partfilter_partname", "part")}


def _graph():
    def obj(size, color, material, shape, x):
        return {"size": size, "color": color, "material": material, "shape": shape, "pixel_coords": [x, 100, 10]}
    scene = {"image_filename": "either.png", "objects": [
        obj("large", "red", "metal", "cube", 50), obj("small", "red", "rubber", "cube", 100),
        obj("large", "blue", "metal", "sphere", 150), obj("small", "gray", "rubber", "sphere", 200),
        obj("large", "green", "rubber", "cylinder", 250)],
        "relationships": {r: [[] for _ in range(5)] for r in ("left", "right", "behind", "front")}}
    return scene_graph(scene, path="either.json", record="scene 0")


def _read(question: str, index: int) -> Reading:
    reading = read_question({"question": question, "template_filename": "single_or.json",
                             "question_family_index": index})
    assert isinstance(reading, Reading), (question, reading)
    return reading


# (family, words with the family's own attribute left open, the family's NULL attributes respected,
#  the union's count on the scene above)
OPEN_QUESTIONS = [
    (1, "How many things are either red cubes or metal spheres?", 3),   # <Z3> open
    (2, "How many things are either large cubes or metal spheres?", 2),  # <C3> open
    (4, "How many things are either red cubes or large spheres?", 3),   # <M3> open
    (5, "How many things are either red things or large metal things?", 3),  # <S3> open ("things")
]


@pytest.mark.parametrize(("index", "question", "count"), OPEN_QUESTIONS)
def test_an_open_single_attribute_filter_is_no_node_and_the_count_is_the_unions(index, question, count):
    reading = _read(question, index)
    program = reading.program()
    assert not [n for n in program if (n["type"], (n["value_inputs"] or [None])[0]) in _OPEN]
    assert [n["type"] for n in program].count("union") == 1 and program[-1]["type"] == "count"
    image_id, graph = _graph()
    result = execute(program, clevr_scene(image_id, graph))
    assert isinstance(result, Execution) and result.answer == count
    assert answer_words(run_program(program, graph["objects"])[-1]) == str(count)  # the verifier's reading


@pytest.mark.parametrize("index", [1, 2, 4])
def test_the_open_family_says_the_same_program_as_the_family_without_the_filter(index):
    question = dict((i, q) for i, q, _ in OPEN_QUESTIONS)[index]
    assert _read(question, index).program() == _read(question, 0).program()


def test_a_said_attribute_keeps_its_filter():
    reading = _read("How many large things are either red cubes or metal spheres?", 1)
    program = reading.program()
    union = [n["type"] for n in program].index("union")
    assert program[union + 1] == {"type": "filter_size", "inputs": [union], "value_inputs": ["large"]}
    image_id, graph = _graph()
    assert execute(reading.program(), clevr_scene(image_id, graph)).answer == 2


@pytest.mark.parametrize(("kind", "value"), sorted(_OPEN))
def test_both_executors_refuse_a_filter_that_holds_no_value(kind, value):
    image_id, graph = _graph()
    program = [{"type": "scene", "inputs": [], "value_inputs": []}]
    if kind.startswith("part"):
        program.append({"type": "object2part", "inputs": [0], "value_inputs": []})
    program += [{"type": kind, "inputs": [len(program) - 1], "value_inputs": [value]},
                {"type": "count", "inputs": [len(program)], "value_inputs": []}]
    result = execute(program, clevr_scene(image_id, graph))
    assert isinstance(result, Invalid) and result.node == len(program) - 2 and repr(value) in result.reason
    with pytest.raises(ProgramFails, match=kind):
        run_program(program, graph["objects"])


def test_synthetic_questions_answer_what_their_words_mean():
    synth = pytest.importorskip("synth_superclevr", reason="benchmarks/ absent (installed package)")
    scenes, questions = synth.make_pool(40, seed=0)
    graphs = {}
    for scene in scenes["scenes"]:
        image_id, graph = scene_graph(scene, path="pool", record=scene["image_filename"])
        graphs[image_id] = graph
    open_ones = 0
    for q in questions["questions"]:
        program = q["program"]
        assert not [n for n in program if (n["type"], (n["value_inputs"] or [None])[0]) in _OPEN], q["question"]
        reading = read_question(q)
        assert isinstance(reading, Reading) and reading.program() == program
        # the verifier's own interpreter agrees with the recorded answer
        trace = run_program(program, graphs[q["image"]]["objects"])
        assert answer_words(trace[-1]) == answer_words(q["answer"]), q["question"]
        kinds = [n["type"] for n in program]
        if q["template_filename"] == "single_or.json" and q["question_family_index"] in (1, 2, 4, 5):
            open_ones += kinds[kinds.index("union") + 1] == "count"
    assert open_ones >= 3  # the pool does ask "How many things are either ..." in those families
