"""Programs from words: every shared Super-CLEVR question is read back, and its program answers it."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from contrastgen.clevr.executor import Execution, execute
from contrastgen.clevr.render import render
from contrastgen.clevr.scene_view import clevr_scene
from contrastgen.datasets.clevr import load_questions, load_scenes
from contrastgen.datasets.clevr_reading import Reading, read_question
from contrastgen.datasets.clevr_templates import PATTERNS_FILE, build_patterns, compiled_patterns
from contrastgen.datasets.clevr_vocab import load_vocabulary, plural
from contrastgen.resources import rules_file

QUESTION_FILES = ("superCLEVR_questions_5.json", "superCLEVR_questions_part_5.json")


def _all_questions(base):
    return [(f, qid, q) for f in QUESTION_FILES for qid, q in load_questions(base / f).items()]


@pytest.mark.shared
def test_every_shared_question_is_read_and_its_program_gives_its_answer(shared):
    scenes = load_scenes(shared / "scenes")
    vocab = load_vocabulary()
    questions = _all_questions(shared)
    assert len(questions) == 463
    outcome = Counter()
    for f, qid, q in questions:
        reading = read_question(q)
        assert isinstance(reading, Reading), (f, qid, q["question"], reading)
        result = execute(reading.program(), clevr_scene(q["image"], scenes[q["image"]]))
        assert isinstance(result, Execution), (f, qid, q["question"], result)
        assert vocab.answer_words(result.answer) == q["answer"], (f, qid, q["question"])
        outcome[q["template_filename"]] += 1
    assert set(outcome) == {"compare_integer.json", "comparison.json", "one_hop.json", "same_relate.json",
                            "part.json"}


def test_bundled_sample_reads_completely_and_rerenders_word_for_word(sample):
    for _f, qid, q in [(None, qid, q) for qid, q in load_questions(sample / "questions").items()]:
        reading = read_question(q)
        assert isinstance(reading, Reading), (qid, q["question"])
        # word for word, but for the plural Super-CLEVR's generator writes "buss"
        assert render(reading, reading.values) == q["question"].replace(" buss", " buses"), qid


# Every Super-CLEVR and CLEVR shape name in the plural, as an English reader writes it.
SHAPE_PLURALS = {
    "aeroplane": "aeroplanes", "airliner": "airliners", "articulated bus": "articulated buses",
    "ball": "balls", "bicycle": "bicycles", "biplane": "biplanes", "block": "blocks", "bus": "buses",
    "car": "cars", "chopper": "choppers", "cruiser": "cruisers", "cube": "cubes", "cylinder": "cylinders",
    "dirtbike": "dirtbikes", "double bus": "double buses", "fighter": "fighters", "jet": "jets",
    "minivan": "minivans", "motorbike": "motorbikes", "mountain bike": "mountain bikes", "object": "objects",
    "regular bus": "regular buses", "regular car": "regular cars", "road bike": "road bikes",
    "school bus": "school buses", "scooter": "scooters", "sedan": "sedans", "sphere": "spheres", "suv": "suvs",
    "tandem bike": "tandem bikes", "thing": "things", "truck": "trucks", "utility bike": "utility bikes",
    "wagon": "wagons",
}


def test_every_shape_name_has_its_english_plural_and_both_spellings_read_back():
    vocab = load_vocabulary()
    assert set(vocab.surfaces("Shape")) == set(SHAPE_PLURALS)
    assert {name: plural(name) for name in SHAPE_PLURALS} == SHAPE_PLURALS
    # a question written with the English plural reads as the generator's own spelling does
    pattern = next(p for (f, _), ps in compiled_patterns().items() if f == "compare_integer.json" for p in ps
                   if "more" in p.pattern and "than" in p.pattern)
    for text in ("Are there more blue trucks than metallic buses?", "Are there more blue trucks than metallic buss?"):
        m = pattern.fullmatch(text)
        assert m is not None and m.group("S2") == "bus", text


def test_edits_of_superclevr_questions_never_write_the_generators_buss(sample):
    from contrastgen.run.generate import generate

    qs = load_questions(sample / "questions")
    buses = {k: q for k, q in qs.items() if " buss" in q["question"]}
    assert buses, "the bundled sample has questions about buses"
    gen = generate(buses, load_scenes(sample / "scenes"), family="clevr", max_k=5, seed=0)
    written = [p["question"] for line in gen.lines for p in json.loads(line)["perturbations"]]
    assert written and not [w for w in written if " buss" in w]
    assert any(" buses" in w for w in written)


def test_committed_patterns_are_what_the_build_step_writes():
    committed = json.loads(rules_file("clevr", PATTERNS_FILE).read_text())
    assert committed == json.loads(json.dumps(build_patterns())), "run `contrastgen clevr compile`"


def test_each_word_stands_for_one_value_of_one_type():
    """Why the union vocabulary is safe: no word is two things, so one reading per question."""
    vocab = load_vocabulary()
    seen: dict[str, str] = {}
    for kind, words in vocab.words.items():
        for word in words:
            if word:
                assert word not in seen, f"{word!r} is both {seen[word]} and {kind}"
                seen[word] = kind


def test_refusals_are_named_not_guessed():
    q = {"question": "What is the colour of the large thing?", "template_filename": "zero_hop.json",
         "question_family_index": 0}
    assert read_question(q).reason == "no_reading"
    assert read_question({**q, "template_filename": "nope.json"}).reason == "no_family"


def test_program_has_clevr_shape_with_every_value_filled(sample):
    qs = load_questions(sample / "questions")
    q = next(v for v in qs.values() if v["template_filename"] == "one_hop.json")
    program = read_question(q).program()
    assert all(set(n) == {"type", "inputs", "value_inputs"} for n in program)
    assert any(n["type"] == "relate" and n["value_inputs"] in (["left"], ["right"], ["behind"], ["front"])
               for n in program)
    assert all(n["value_inputs"] for n in program if n["type"].startswith(("filter_", "relate")))


def test_a_records_own_program_must_agree_with_its_words(sample, tmp_path):
    from contrastgen.clevr.question import perturb_clevr_question

    scenes = load_scenes(sample / "scenes")
    qid, q = next((k, v) for k, v in load_questions(sample / "questions").items()
                  if v["template_filename"] == "comparison.json")
    program = read_question(q).program()
    wrong = [dict(n) for n in program]
    i = next(i for i, n in enumerate(wrong) if n["type"].startswith("filter_"))
    wrong[i] = {**wrong[i], "value_inputs": ["__other__"]}
    scene = clevr_scene(q["imageId"], scenes[q["imageId"]])
    refused = perturb_clevr_question(qid, {**q, "program": wrong}, scene, max_k=3, seed=0, existing=set()).result
    assert refused.to_record() is None and refused.reason == "program_mismatch"
    agreed = perturb_clevr_question(qid, {**q, "program": program}, scene, max_k=3, seed=0, existing=set()).result
    assert agreed.reason in (None, "no_edit")
