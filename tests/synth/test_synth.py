"""contrastgen.synth: deterministic, GQA-shaped, statistically GQA-like, answers true of the graph."""

from __future__ import annotations

import json
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

import orjson
import pytest

from contrastgen import synth
from contrastgen.gqa import load_questions, load_scene_graphs
from contrastgen.jsonio import dumps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth_gqa_exec import execute  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
TEMPLATE_TYPES = {"positionQuery", "directOf", "directWhich", "existOrC", "existRelS", "existRelSC",
                  "relVerify", "relVerifyCr"}


@pytest.fixture(scope="module")
def medium() -> tuple[dict, dict]:
    return synth.make_dataset(300, 3900, seed=5)


def test_same_seed_same_bytes_other_seed_other_data():
    a = synth.make_dataset(40, 500, seed=3)
    b = synth.make_dataset(40, 500, seed=3)
    c = synth.make_dataset(40, 500, seed=4)
    assert dumps(a) == dumps(b)
    assert dumps(a) != dumps(c)


def test_write_dataset_streams_the_same_data_and_loads(tmp_path, monkeypatch):
    monkeypatch.setattr(synth, "CHUNK_IMAGES", 7)  # several chunks, written by two processes
    qpath, gpath = synth.write_dataset(tmp_path / "d", 45, 600, seed=2, workers=2)
    questions, graphs = synth.make_dataset(45, 600, seed=2)
    assert orjson.loads(qpath.read_bytes()) == questions
    assert orjson.loads(gpath.read_bytes()) == graphs
    # Streaming in chunks writes exactly what one sorted dump would.
    assert qpath.read_bytes() == orjson.dumps(questions, option=orjson.OPT_SORT_KEYS) + b"\n"
    assert len(load_questions(qpath)) == 600
    assert len(load_scene_graphs(gpath)) == 45
    again = synth.write_dataset(tmp_path / "e", 45, 600, seed=2, workers=1)
    assert again[0].read_bytes() == qpath.read_bytes() and again[1].read_bytes() == gpath.read_bytes()


def test_write_dataset_leaves_nothing_when_generation_fails(tmp_path, monkeypatch):
    real = synth._chunk_bytes

    def failing(task):
        if task[0] >= 20:
            raise RuntimeError("disk on fire")
        return real(task)

    monkeypatch.setattr(synth, "CHUNK_IMAGES", 10)
    monkeypatch.setattr(synth, "_chunk_bytes", failing)
    with pytest.raises(RuntimeError):
        synth.write_dataset(tmp_path / "out", 50, 500, workers=1)
    assert not list((tmp_path / "out").iterdir())


def test_rejects_nonsense_sizes():
    with pytest.raises(ValueError):
        synth.make_dataset(0, 10)
    with pytest.raises(ValueError):
        synth.make_dataset(5, -1)


def test_question_count_is_exact_and_spread_evenly():
    questions, graphs = synth.make_dataset(7, 100, seed=1)
    assert len(questions) == 100 and len(graphs) == 7
    per_image = Counter(q["imageId"] for q in questions.values())
    assert set(per_image.values()) <= {14, 15}


def test_graph_statistics_resemble_gqa(medium):
    _, graphs = medium
    objects = [o for g in graphs.values() for o in g["objects"].values()]
    assert 14 <= len(objects) / len(graphs) <= 18
    assert 3 <= statistics.mean(len(o["relations"]) for o in objects) <= 6
    assert statistics.mean(len(o["attributes"]) for o in objects) >= 1.5
    names = Counter(o["name"] for o in objects)
    assert len(names) >= 800  # ~4.8k objects over a 1,750-name Zipf vocabulary
    top = names.most_common(1)[0][1]
    assert top >= 20 * statistics.median(names.values())  # a heavy head, as in GQA ("man", "window")


def test_question_statistics_resemble_gqa(medium):
    questions, graphs = medium
    assert len(questions) / len(graphs) == 13
    template_share = sum(q["types"]["detailed"] in TEMPLATE_TYPES for q in questions.values()) / len(questions)
    assert 0.18 <= template_share <= 0.27
    kinds = Counter(q["types"]["detailed"] for q in questions.values())
    assert len(kinds) >= 12
    yes_no = Counter(q["answer"] for q in questions.values() if q["answer"] in ("yes", "no"))
    assert 0.3 <= yes_no["yes"] / sum(yes_no.values()) <= 0.7
    # Within an image, no question text repeats.
    per_image = Counter((q["imageId"], q["question"]) for q in questions.values())
    assert max(per_image.values()) == 1


def test_answers_are_true_of_the_graph(medium):
    questions, graphs = medium
    for qid, q in questions.items():
        assert execute(q, graphs[q["imageId"]]) == q["answer"], (qid, q["question"], q["semanticStr"])


def test_spatial_relations_agree_with_boxes_and_go_both_ways(medium):
    _, graphs = medium
    opposite = {"to the left of": "to the right of", "above": "below", "in front of": "behind"}
    opposite.update({v: k for k, v in opposite.items()})
    for image_id, g in list(graphs.items())[:200]:
        objs = g["objects"]
        edges = {(s, r["name"], r["object"]) for s, o in objs.items() for r in o["relations"]}
        for s, rel, o in edges:
            a, b = objs[s], objs[o]
            if rel == "to the left of":
                assert a["x"] + a["w"] / 2 < b["x"] + b["w"] / 2
            elif rel == "below":
                assert a["y"] + a["h"] / 2 > b["y"] + b["h"] / 2
            if rel in opposite:
                assert (o, opposite[rel], s) in edges, (image_id, s, rel, o)
            if rel == "near":
                assert (o, "near", s) in edges


def test_definite_references_are_unambiguous(medium):
    """GQA asks about "the X" only when X is unique; otherwise a question has two answers."""
    questions, graphs = medium
    for q in questions.values():
        if not q["question"].startswith(("What color", "On which side", "Is the ", "Are the ")):
            continue
        names = Counter(o["name"] for o in graphs[q["imageId"]]["objects"].values())
        for step in q["semantic"]:
            m = re.match(r"^(.*) \((\d+)\)$", step["argument"]) if step["operation"] == "select" else None
            if m:
                assert names[m.group(1)] == 1, q["question"]


def test_token_annotations_land_on_the_named_words():
    parts = synth.QuestionParts("What color is the cat in front of the wall?", "yellow", "The cat is yellow.",
                                [], "directOf", "attr", "query", "color", None,
                                [("cat", "7"), ("wall", "8")], [("cat", "7")])
    rec = parts.record("1", "2")
    # The real GQA record 00263036 annotates exactly these positions.
    assert rec["annotations"]["question"] == {"4": "7", "9": "8"}
    assert synth.annotate("On which side of the picture is the train car?", [("train car", "5")]) == {"8:10": "5"}


def test_semantic_str_matches_gqa_on_real_questions():
    path = SHARED / "data" / "gqa" / "val_balanced_questions_sample.json"
    if not path.is_file():
        pytest.skip("../shared GQA sample absent")
    real = json.loads(path.read_text())
    for qid, q in real.items():
        assert synth.semantic_str(q["semantic"]) == q["semanticStr"], qid


def test_vocabulary_plural_forms():
    vocab = synth.load_vocabulary()
    assert len(vocab.names) == 1750
    assert vocab.plural("man") == "men" and vocab.plural("jeans") == "jeans"
    assert vocab.plural("water") == "water" and vocab.plural("box") == "boxes"
    assert vocab.is_plural("scissors") and vocab.is_plural("dishes") and not vocab.is_plural("bus")
    assert all(isinstance(r, str) for r in vocab.semantic)  # YAML's "on" must not become True
