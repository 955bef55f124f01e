import json

import orjson
import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.datasets.samples import load_vqa
from contrastgen.errors import InputError
from contrastgen.ood.pipeline import run_vqavs

from .helpers import gqa_questions, vqa_files, write_json


def rows():
    """'what color is the' (QT): white x6, black, red -> imbalanced, tail black/red;
    'is the' (QT): yes x3, no x3 -> balanced."""
    out = []
    for i in range(6):
        out.append((f"What color is the wall {i}?", str(i + 1), "white", ["white"] * 10))
    out.append(("What color is the cat?", "7", "black", ["black"] * 8 + ["gray"] * 2))
    out.append(("What color is the car?", "8", "red", ["red"] * 10))
    for i in range(6):
        answer = "yes" if i < 3 else "no"
        out.append((f"Is the dog asleep {i}?", str(10 + i), answer, [answer] * 10))
    return out


def test_loader_accepts_official_and_release_layouts(tmp_path):
    q1, a1 = vqa_files(tmp_path, rows())
    release = load_vqa(q1, a1)
    (tmp_path / "o").mkdir()
    q2, a2 = vqa_files(tmp_path / "o", rows(), official=True)
    official = load_vqa(q2, a2)
    assert [s.question_id for s in release] == [s.question_id for s in official]
    assert release[6].answers[-1] == "gray" and release[6].answer == "black"


def test_question_without_annotation_names_it(tmp_path):
    q, a = vqa_files(tmp_path, rows())
    anns = json.loads(a.read_text())
    write_json(a, anns[1:])
    with pytest.raises(InputError, match="question 1000"):
        load_vqa(q, a)


@pytest.mark.parametrize(("file", "field", "value"), [
    ("q.json", "image_id", "7"), ("q.json", "image_id", -7), ("q.json", "question_id", "1000"),
    ("q.json", "question_id", -1000), ("a.json", "question_id", "1000"), ("a.json", "question_id", -3),
])
def test_a_vqa_id_that_is_no_whole_number_from_0_is_refused_where_it_is_read(tmp_path, file, field, value):
    """VQA numbers its questions and images. A numeral string read as text joins nothing (or, in the
    annotations, silently joins question 1000), and the error must name the file that holds it."""
    q, a = vqa_files(tmp_path, rows())
    path = tmp_path / file
    records = json.loads(path.read_text())
    records[0][field] = value
    write_json(path, records)
    result = CliRunner().invoke(cli, ["ood", "vqavs", "--questions", str(q), "--annotations", str(a),
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    error = result.output.strip().splitlines()[-1]
    assert f"{path}: record item 0: field {field!r} must be a whole number >= 0" in error, error
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_an_annotation_without_multiple_choice_answer_groups_on_its_most_common_answer(tmp_path):
    """The field is VQA's most common of the ten answers: left out, it is computed by that rule
    (ties alphabetical), so the file is still read."""
    q, a = vqa_files(tmp_path, rows())
    anns = json.loads(a.read_text())
    for ann in anns[6:8]:
        del ann["multiple_choice_answer"]
    anns[7]["answers"] = [{"answer": w} for w in ["red", "blue"] * 5]
    write_json(a, anns)
    samples = load_vqa(q, a)
    assert (samples[6].answer, samples[7].answer) == ("black", "blue")


def test_qt_ood_set_is_the_rare_colours_and_object_shortcuts_are_skipped(tmp_path):
    q, a = vqa_files(tmp_path, rows())
    stats = run_vqavs(q, tmp_path / "out", annotations=a)
    qt = stats["shortcuts"]["QT"]
    assert qt["groups"] == 2 and qt["imbalanced_groups"] == 1
    assert (qt["head"], qt["tail"]) == (6, 2)
    for name in ("KO", "KOP", "QT+KO", "KW+KO", "QT+KW+KO"):
        assert "no object annotations" in stats["shortcuts"][name]["skipped"]
    out = tmp_path / "out"
    ques = json.loads((out / "ood" / "QT-Ques.json").read_text())
    assert sorted(x["question"] for x in ques) == ["What color is the car?", "What color is the cat?"]
    assert not (out / "ood" / "KO-Ques.json").exists()
    splits = json.loads((out / "splits.json").read_text())
    assert splits["ood"]["QT"] == ["1006", "1007"]
    assert len(splits["iid"]) == 14
    concepts = [json.loads(line) for line in (out / "concepts.jsonl").read_text().splitlines()]
    assert concepts[6]["concepts"]["QT"] == "what color is the" and concepts[6]["split"]["QT"] == "tail"


def test_object_shortcuts_with_a_mapping_file(tmp_path):
    q, a = vqa_files(tmp_path, rows())
    objects = {str(i): (["cat"] if i == 7 else ["car"] if i == 8 else ["wall", "paint"]) for i in range(1, 9)}
    objects.update({str(i): ["dog", "bed"] for i in range(10, 16)})
    obj = write_json(tmp_path / "objects.json", objects)
    stats = run_vqavs(q, tmp_path / "out", annotations=a, objects=obj)
    assert all("skipped" not in s for s in stats["shortcuts"].values())
    concepts = [json.loads(x) for x in (tmp_path / "out" / "concepts.jsonl").read_text().splitlines()]
    assert concepts[6]["labels"]["ko"] == "cat"
    assert concepts[0]["concepts"]["KOP"] in ("paint + wall", "wall + paint")
    overlap = stats["overlap"]
    assert overlap["QT"]["QT"] == 1.0
    assert set(overlap) == set(stats["shortcuts"])


def test_images_without_object_annotations_are_counted_not_fatal(tmp_path):
    """VQA-VS's object files do not cover every image: such samples are counted and left out of
    the object-based shortcuts only; the language shortcuts are built from all samples."""
    q, a = vqa_files(tmp_path, rows())
    objects = {str(i): ["wall", "paint"] for i in range(1, 7)}  # the cat, the car and the dogs lack theirs
    obj = write_json(tmp_path / "objects.json", objects)
    full = run_vqavs(q, tmp_path / "full", annotations=a)
    stats = run_vqavs(q, tmp_path / "out", annotations=a, objects=obj)
    assert stats["samples"] == 14 and stats["samples_without_object_annotations"] == 8
    assert stats["shortcuts"]["KO"]["unlabelled"] == 8
    assert stats["shortcuts"]["QT"] == full["shortcuts"]["QT"]
    concepts = [json.loads(x) for x in (tmp_path / "out" / "concepts.jsonl").read_text().splitlines()]
    assert concepts[6]["labels"]["ko"] is None and concepts[0]["labels"]["ko"] in ("wall", "paint")
    assert "8 of 14 samples" in (tmp_path / "out" / "stats.md").read_text()


def test_coco_instances_and_gqa_scene_graphs_as_objects(tmp_path):
    from contrastgen.ood.objects import load_image_objects

    coco = write_json(tmp_path / "coco.json", {
        "images": [{"id": 1}, {"id": 2}],
        "categories": [{"id": 3, "name": "cat"}, {"id": 4, "name": "dog"}],
        "annotations": [{"id": 1, "image_id": 1, "category_id": 3}, {"id": 2, "image_id": 1, "category_id": 4},
                        {"id": 3, "image_id": 1, "category_id": 3}]})
    assert load_image_objects(coco) == {"1": ("cat", "dog"), "2": ()}
    graphs = write_json(tmp_path / "sg.json", {"5": {"width": 10, "height": 10, "objects": {
        "1": {"name": "Tree", "x": 0, "y": 0, "w": 1, "h": 1, "attributes": [], "relations": []}}}})
    assert load_image_objects(graphs) == {"5": ("tree",)}


def test_gqa_data_builds_vqavs_in_gqa_format(tmp_path):
    src = write_json(tmp_path / "gqa.json", gqa_questions())
    stats = run_vqavs(src, tmp_path / "out")
    assert stats["data_format"] == "gqa"
    qt = stats["shortcuts"]["QT"]  # one detailed type for all: one group
    assert qt["groups"] == 1
    assert (tmp_path / "out" / "ood" / "QT.json").exists() or qt["tail"] == 0


def test_cli_vqavs_subset_and_determinism(tmp_path):
    q, a = vqa_files(tmp_path, rows())
    outs = []
    for name in ("x", "y"):
        res = CliRunner().invoke(cli, ["ood", "vqavs", "--questions", str(q), "--annotations", str(a),
                                       "--out", str(tmp_path / name), "--shortcuts", "QT,KW"])
        assert res.exit_code == 0, res.output
        outs.append(tmp_path / name)
    stats = json.loads((outs[0] / "stats.json").read_text())
    assert sorted(stats["shortcuts"]) == ["KW", "QT"]
    for f in ("stats.json", "splits.json", "concepts.jsonl", "answers.json", "ood/QT-Ans.json", "overlap.png"):
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f


def test_cli_vqa_without_annotations_exits_2(tmp_path):
    q, _ = vqa_files(tmp_path, rows())
    res = CliRunner().invoke(cli, ["ood", "vqavs", "--questions", str(q), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "--annotations" in res.output


def test_cli_mi_from_another_split_is_recorded(tmp_path):
    q, a = vqa_files(tmp_path, rows())
    res = CliRunner().invoke(cli, ["ood", "vqavs", "--questions", str(q), "--annotations", str(a),
                                   "--mi-questions", str(q), "--mi-annotations", str(a),
                                   "--out", str(tmp_path / "o"), "--shortcuts", "KW"])
    assert res.exit_code == 0, res.output
    stats = json.loads((tmp_path / "o" / "stats.json").read_text())
    assert stats["mi_source"] == "separate" and list(stats["shortcuts"]) == ["KW"]


def test_only_object_shortcuts_without_objects_is_an_error(tmp_path):
    q, a = vqa_files(tmp_path, rows())
    res = CliRunner().invoke(cli, ["ood", "vqavs", "--questions", str(q), "--annotations", str(a),
                                   "--out", str(tmp_path / "o"), "--shortcuts", "KO,KOP"])
    assert res.exit_code == 2 and "--objects" in res.output
    assert not (tmp_path / "o").exists()


def test_gqa_records_kept_serialised_are_written_as_parsed_ones_would_be():
    """GQA samples keep their records as bytes (a sixth of their parsed size); the OOD file made
    from them is the bytes `jsonio.dumps` writes for the parsed records, ids in order."""
    from contrastgen.datasets.samples import Sample
    from contrastgen.jsonio import dumps
    from contrastgen.ood.vqavs import gqa_questions_object

    records = {"q2": {"z": 1, "a": {"y": [2, 1], "b": "é"}}, "q\u00e910": {"question": "Q?"}, "q1": {}}
    parsed = [Sample(qid, "1", "Q?", "a", ["a"], question_record=r) for qid, r in records.items()]
    kept = [Sample(s.question_id, "1", "Q?", "a", ["a"], question_record=dumps(s.question_record)[:-1])
            for s in parsed]
    assert b"".join(gqa_questions_object(parsed)) == b"".join(gqa_questions_object(kept)) == dumps(records)


def test_gqa_samples_stream_from_shards_and_refuse_an_id_given_twice(tmp_path):
    from contrastgen.datasets.samples import load_gqa_samples

    items = list(gqa_questions().items())
    (tmp_path / "shards").mkdir()
    write_json(tmp_path / "shards" / "a.json", dict(items[:10]))
    write_json(tmp_path / "shards" / "b.json", dict(items[10:]))
    samples = load_gqa_samples(tmp_path / "shards")
    assert [s.question_id for s in samples] == [qid for qid, _ in items]
    assert orjson.loads(samples[0].question_record) == items[0][1]
    write_json(tmp_path / "shards" / "c.json", dict(items[:1]))
    with pytest.raises(InputError, match=r"question id 'q001' is given twice \(in .*a\.json, and in .*c\.json\)") as err:
        load_gqa_samples(tmp_path / "shards")
    assert err.value.path == str(tmp_path / "shards" / "c.json")


def test_cli_refuses_ray_for_vqa_input_and_an_address_without_ray(tmp_path):
    """VQA v2 input is built in this process: --backend ray would be quietly ignored."""
    q, a = vqa_files(tmp_path, rows())
    res = CliRunner().invoke(cli, ["ood", "vqavs", "--questions", str(q), "--annotations", str(a),
                                   "--out", str(tmp_path / "o"), "--backend", "ray"])
    assert res.exit_code == 2 and "VQA v2 input is built in this process" in res.output
    res = CliRunner().invoke(cli, ["ood", "vqavs", "--questions", str(q), "--annotations", str(a),
                                   "--out", str(tmp_path / "o"), "--address", "auto"])
    assert res.exit_code == 2 and "--address needs --backend ray" in res.output
    assert not (tmp_path / "o").exists()
