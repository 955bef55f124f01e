"""CLEVR 1.0, all nine families: questions written by CLEVR's own generator, with its programs
(tests/data/clevr10/README.md says how they were made)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from contrastgen.clevr.executor import execute
from contrastgen.clevr.scene_view import clevr_scene
from contrastgen.datasets.clevr import load_questions, load_scenes
from contrastgen.datasets.clevr_reading import Reading, normalize_program, read_question
from contrastgen.datasets.clevr_vocab import load_vocabulary
from contrastgen.run.generate import generate
from contrastgen.verify.checker import verify_contrast_sets

DATA = Path(__file__).resolve().parents[1] / "data" / "clevr10"


@pytest.fixture(scope="module")
def data():
    return load_questions(DATA / "questions.json"), load_scenes(DATA / "scenes.json")


def test_every_question_reads_to_the_generators_own_program_and_answer(data):
    questions, scenes = data
    vocab = load_vocabulary()
    families = Counter()
    for qid, q in questions.items():
        reading = read_question(q)
        assert isinstance(reading, Reading), (qid, q["question"], reading)
        assert reading.program() == normalize_program(q["program"]), (qid, q["question"])
        answer = execute(reading.program(), clevr_scene(q["imageId"], scenes[q["imageId"]])).answer
        assert vocab.answer_words(answer) == q["answer"], (qid, q["question"])
        families[q["template_filename"]] += 1
    assert len(families) == 9


def test_contrast_sets_on_all_families_verify(data):
    questions, scenes = data
    gen = generate(questions, scenes, family="clevr", max_k=3, seed=0)
    records = gen.records
    assert len(records) >= 250 and len({r["template"] for r in records}) == 9
    assert gen.stats["reasons"].get("program_mismatch", 0) == 0
    # a set of only redundancy edits (invariances) is perturbed but has no contrast
    with_contrast = {r["question_id"] for r in records if any(p.get("kind", "contrast") == "contrast" for p in r["perturbations"])}
    assert 0 < gen.stats["questions_with_contrast"] == len(with_contrast) < len(records)
    report = verify_contrast_sets(records, scenes)
    assert report.ok, report.failures[:3]
