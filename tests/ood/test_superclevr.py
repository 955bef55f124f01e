"""`contrastgen ood superclevr`: concept-distribution and compositionality splits of scenes and
questions, on a handwritten CLEVR-format fixture and on the shared Super-CLEVR data."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.datasets.clevr_released import read_questions, read_scenes
from contrastgen.errors import InputError
from contrastgen.ood.superclevr import (
    build_superclevr,
    concept_words,
    head_and_tail,
    question_concepts,
    tail_parameter,
)

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "super-clevr"


def _obj(shape, color, material="metal"):
    return {"shape": shape, "color": color, "material": material, "size": "large"}


def test_the_tail_parameter_is_the_papers_a():
    long = Counter({f"c{i}": round(1000 * 2.0 ** -i) for i in range(6)})
    assert tail_parameter(long) == pytest.approx(2.0, rel=0.02)
    assert tail_parameter(Counter({"a": 5, "b": 5, "c": 5})) == pytest.approx(1.0)
    assert head_and_tail(Counter({"a": 6, "b": 3, "c": 1}), 0.5) == (["a"], ["b", "c"])
    assert head_and_tail(Counter({"a": 4, "b": 4, "c": 2}), 0.5) == (["a", "b"], ["c"])


def _unrelated(objects: int) -> dict[str, list[list[int]]]:
    """Every direction, one empty list per object: the splits below read no relation."""
    return {direction: [[] for _ in range(objects)] for direction in ("left", "right", "front", "behind")}


def test_splits_of_a_clevr_format_fixture(tmp_path):
    scenes = {"scenes": [
        {"image_filename": "s1.png", "objects": [_obj("truck", "red"), _obj("truck", "red"), _obj("jet", "blue")],
         "relationships": _unrelated(3)},
        {"image_filename": "s2.png", "objects": [_obj("truck", "red"), _obj("jet", "blue", "rubber")],
         "relationships": _unrelated(2)},
        {"image_filename": "s3.png", "objects": [_obj("truck", "gray"), _obj("jet", "blue")],
         "relationships": _unrelated(2)},
    ]}
    (tmp_path / "scenes.json").write_text(json.dumps(scenes))
    questions = {"questions": [
        {"image": "s1", "question": "Is there a red truck?", "answer": True},
        {"image": "s2", "question": "What color is the jet?", "answer": "blue"},
        {"image": "s3", "question": "Is there a gray truck?", "answer": True},
        {"image": "s3", "question": "How many things are there?", "answer": 2},
    ]}
    (tmp_path / "q.json").write_text(json.dumps(questions))
    built = build_superclevr(read_scenes(tmp_path / "scenes.json"), read_questions([tmp_path / "q.json"]))
    assert built.counts["color"] == Counter({"red": 3, "blue": 3, "gray": 1})
    assert built.head["color"] == ["blue", "red"] and built.tail["color"] == ["gray"]
    assert built.head["shape"] == ["truck"] and built.tail["shape"] == ["jet"]
    assert [q["question"] for q in built.splits["head"]] == ["Is there a red truck?"]
    assert [q["question"] for q in built.splits["none"]] == ["How many things are there?"]
    assert built.held_out == [("truck", "gray")]  # the rarest combination of a shape seen otherwise too
    assert [q["image"] for q in built.splits["co_test"]] == ["s3", "s3"]
    result = CliRunner().invoke(cli, ["ood", "superclevr", "--scenes", str(tmp_path / "scenes.json"),
                                      "--questions", str(tmp_path / "q.json"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["questions"] == {"head": 1, "tail": 2, "none": 1, "co_train": 2, "co_test": 2,
                                  "rd-": 0, "rd": 0, "rd+": 0}
    # records without a template family cannot be read into programs: counted, not split
    assert stats["redundancy"]["originals"] == {"unread (no_family)": 4}
    assert stats["tail_parameter_a"]["color"] > 1
    assert json.loads((tmp_path / "out" / "co_test.json").read_text())["questions"] == built.splits["co_test"]


def test_bad_files_are_named(tmp_path):
    bad = tmp_path / "scene.json"
    bad.write_text(json.dumps({"image_filename": "x.png", "objects": [{"shape": "truck"}]}))
    with pytest.raises(InputError, match="scene.json.*object 0 has no color, material"):
        read_scenes(bad)
    (tmp_path / "q.json").write_text(json.dumps({"questions": [{"question": 3}]}))
    with pytest.raises(InputError, match="question 0"):
        read_questions([tmp_path / "q.json"])
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["ood", "superclevr", "--scenes", str(bad), "--questions",
                                      str(tmp_path / "q.json"), "--out", str(out)])
    assert result.exit_code == 2 and not out.exists()


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/super-clevr is not here (a user's clone)")
def test_the_shared_super_clevr_data():
    scenes = read_scenes(SHARED / "scenes")
    questions = read_questions([SHARED / "superCLEVR_questions_5.json", SHARED / "superCLEVR_questions_part_5.json"])
    built = build_superclevr(scenes, questions)
    assert len(scenes) == 10 and len(questions) == 463
    s = built.splits
    assert len(s["head"]) + len(s["tail"]) + len(s["none"]) == len(s["co_train"]) + len(s["co_test"]) == 463
    words = concept_words()
    for q in s["tail"]:
        assert any(c not in built.head[t] for t, c in question_concepts(q, words))
    for q in s["head"]:
        assert all(c in built.head[t] for t, c in question_concepts(q, words))
    held = set(built.held_out)
    assert held
    for q in s["co_train"]:
        assert not held & {(o["shape"], o["color"]) for o in scenes[q["image"]]}
    for q in s["co_test"]:
        assert held & {(o["shape"], o["color"]) for o in scenes[q["image"]]}
    asked = {q["image"] for q in questions}
    train_images = {q["image"] for q in s["co_train"]}
    assert len(train_images) >= len(asked) / 2  # half the scenes asked about keep no held-out combination


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/super-clevr is not here (a user's clone)")
def test_redundancy_splits_on_the_shared_data():
    """rd- says fewer attributes than rd, rd+ more; every rewrite keeps the answer, reads back, and
    in rd- no attribute can be dropped, in rd+ none added."""
    from contrastgen.clevr.edits import Editor
    from contrastgen.clevr.executor import execute
    from contrastgen.clevr.scene_view import clevr_scene
    from contrastgen.datasets.clevr import load_scenes
    from contrastgen.datasets.clevr_reading import Reading, read_question, words_and_program_agree
    from contrastgen.datasets.clevr_vocab import load_vocabulary
    from contrastgen.ood.superclevr_redundancy import attribute_filters, redundancy_splits

    graphs = load_scenes(SHARED / "scenes")
    questions = read_questions([SHARED / "superCLEVR_questions_5.json", SHARED / "superCLEVR_questions_part_5.json"])
    splits, stats = redundancy_splits(questions, graphs)
    assert stats["questions"]["rd"] == 463 and stats["questions"]["rd-"] >= 400 and stats["questions"]["rd+"] >= 400
    mean = stats["mean_attributes_said"]
    assert mean["rd-"] < mean["rd"] < mean["rd+"]
    gold = {(q["image"], q["question_index"], q["template_filename"]): q["answer"] for q in questions}
    vocab = load_vocabulary()
    for level in ("rd-", "rd+"):
        for q in splits[level]:
            reading = read_question(q)
            # the same program, each part named as the scene names it (the words' spelling may differ)
            assert isinstance(reading, Reading) and words_and_program_agree(reading, q["program"]), q["question"]
            scene = clevr_scene(q["image"], graphs[q["image"]])
            result = execute(q["program"], scene)
            original = gold[_original_key(q)]
            assert vocab.answer_words(result.answer) == vocab.answer_words(original)
            assert Editor(reading, scene, result).at_level(level), (level, q["question"])
    by_key = {_original_key(q): q for q in splits["rd"]}
    for q in splits["rd-"]:
        assert attribute_filters(q["program"]) <= attribute_filters(by_key[_original_key(q)]["program"])


def _original_key(q):
    """A split question's original: a rewrite that added or dropped a relation names its family."""
    rewrite = q.get("relations_added") or q.get("relations_dropped") or {"from_family": q}
    return q["image"], q["question_index"], rewrite["from_family"]["template_filename"]


def _two_files_built(tmp_path):
    from contrastgen.resources import clevr_sample_dir

    sample = clevr_sample_dir()
    files = sorted((sample / "questions").glob("*.json"))
    args = ["ood", "superclevr", "--scenes", str(sample / "scenes"), "--out", str(tmp_path / "ood")]
    for f in files:
        args += ["--questions", str(f)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return tmp_path / "ood", files


def test_two_question_files_give_ids_qualified_by_file_unique_in_every_split(tmp_path):
    out, files = _two_files_built(tmp_path)
    stems = {f.stem for f in files}
    for name in ("head", "tail", "none", "co_train", "co_test", "rd-", "rd", "rd+"):
        ids = [q["question_index"] for q in json.loads((out / f"{name}.json").read_text())["questions"]]
        assert len(ids) == len(set(ids)), name
        assert {i.split("/")[0] for i in ids} <= stems, name
    assert len(json.loads((out / "rd.json").read_text())["questions"]) == 463


def test_a_question_file_given_twice_is_refused(tmp_path):
    from contrastgen.resources import clevr_sample_dir

    f = sorted((clevr_sample_dir() / "questions").glob("*.json"))[0]
    with pytest.raises(InputError, match="is given twice"):
        read_questions([f, f])


def test_evaluate_ood_scores_a_superclevr_split_with_accuracy_and_relative_degrade(tmp_path):
    out, _ = _two_files_built(tmp_path)

    def words(a):
        return ("yes" if a else "no") if isinstance(a, bool) else str(a)

    rd = json.loads((out / "rd.json").read_text())["questions"]
    (tmp_path / "gold.json").write_text(json.dumps({q["question_index"]: words(q["answer"]) for q in rd}))
    (tmp_path / "yes.json").write_text(json.dumps({q["question_index"]: "yes" for q in rd}))
    result = CliRunner().invoke(cli, ["evaluate", "--ood", str(out), "-p", f"gold={tmp_path / 'gold.json'}",
                                      "-p", f"yes={tmp_path / 'yes.json'}", "--out", str(tmp_path / "eval")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "eval" / "ood_report.json").read_text())
    assert report["benchmark"] == "super-clevr"
    gold, yes = report["models"]["gold"], report["models"]["yes"]
    assert set(gold["accuracy"].values()) == {1.0}
    assert {f: r["value"] for f, r in gold["relative_degrade"].items()} == {
        "redundancy": 0.0, "concept": 0.0, "compositionality": 0.0}

    def accuracy(split):
        qs = json.loads((out / f"{split}.json").read_text())["questions"]
        return sum(words(q["answer"]) == "yes" for q in qs) / len(qs)

    a, b = accuracy("co_train"), accuracy("co_test")
    assert yes["accuracy"]["co_test"] == pytest.approx(b)
    assert yes["relative_degrade"]["compositionality"]["value"] == pytest.approx(abs(a - b) / a)
    # the paper's definition: the drops to rd- and to rd+ summed, over the in-domain accuracy
    r, r_minus, r_plus = accuracy("rd"), accuracy("rd-"), accuracy("rd+")
    assert yes["relative_degrade"]["redundancy"]["value"] == pytest.approx(abs(2 * r - r_minus - r_plus) / r)
    assert yes["ci95"]["rd"][0] <= yes["accuracy"]["rd"] <= yes["ci95"]["rd"][1]


def _engine_part_filter(value, scope):
    """Super-CLEVR's engine's part-name filter (`question_engine.make_filter_handler`): a part is
    kept when the value is its raw name or a substring of it."""
    return [p for p in scope if value == p[1] or value in p[1]]


def test_redundancy_splits_name_parts_as_the_scene_does_so_the_authors_engine_reads_them():
    """Each `partfilter_partname` of every split selects, read by the engine's rule, exactly what it
    selects read by its words (the bundled sample: "front left wheel" is `wheel_front_left` on a
    bus, `front_left_wheel` on a car, and the split must write the scene's spelling)."""
    from contrastgen.clevr.executor import Execution, execute
    from contrastgen.clevr.scene_view import clevr_scene
    from contrastgen.datasets.clevr import load_scenes
    from contrastgen.ood.superclevr_redundancy import redundancy_splits
    from contrastgen.resources import clevr_sample_dir

    sample = clevr_sample_dir()
    graphs = load_scenes(sample / "scenes")
    splits, _ = redundancy_splits(read_questions(sorted((sample / "questions").glob("*.json"))), graphs)
    checked = 0
    for level, questions in splits.items():
        for q in questions:
            for n, node in enumerate(q["program"]):
                if node["type"] != "partfilter_partname":
                    continue
                run = execute(q["program"], clevr_scene(q["image"], graphs[q["image"]]))
                assert isinstance(run, Execution)
                scope = run.outputs[node["inputs"][0]]
                assert _engine_part_filter(node["value_inputs"][0], scope) == list(run.outputs[n]), \
                    (level, q["question"], node)
                checked += 1
    assert checked >= 60  # 24+ part questions per level in the sample
