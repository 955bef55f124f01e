"""Each crash a hostile input used to cause is a located error (exit 2, one line naming the file
and the record); ids given twice are refused naming both places; failures on the way out (a full
disk, a folder that may not be written) are a sentence; nothing is left half-written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from robustness_helpers import assert_refused, copy_of, invoke, run_as_ordinary_user

from contrastgen.files.atomic import FAULT_ENV


def _graphs(sample) -> dict:
    return json.loads(sample[1].read_bytes())


def _write(path: Path, value) -> Path:
    path.write_text(json.dumps(value))
    return path


def _generate(sample, out: Path, *, questions: Path | None = None, graphs: Path | None = None, env=None):
    return invoke("generate", "--questions", questions or sample[0], "--scene-graphs", graphs or sample[1],
                  "--out", out, "--no-progress", "--workers", "1", env=env)


def test_a_relation_to_an_object_that_is_not_an_id_is_a_located_error(tmp_path, sample):
    graphs = _graphs(sample)
    image, graph = next(iter(graphs.items()))
    oid = next(iter(graph["objects"]))
    graph["objects"][oid]["relations"] = [{"name": "near", "object": {}}]
    path = _write(tmp_path / "graphs.json", graphs)
    result = _generate(sample, tmp_path / "out", graphs=path)
    assert_refused(result, "graphs.json", f"image {image} object {oid}", "points at unknown object {}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("field,value,needle", [("w", -5, "field 'w' is -5"), ("x", 1e308, "field 'x' is 1e+308"),
                                                ("x", "12", "missing or invalid field 'x'")])
def test_a_box_outside_any_image_is_refused_by_generate_and_view(tmp_path, sample, generated, field, value, needle):
    graphs = _graphs(sample)
    image, graph = next(iter(graphs.items()))
    oid = next(iter(graph["objects"]))
    graph["objects"][oid][field] = value
    path = _write(tmp_path / "graphs.json", graphs)
    assert_refused(_generate(sample, tmp_path / "out", graphs=path), "graphs.json", needle)
    assert_refused(invoke("view", generated, "--scene-graphs", path, "--static", tmp_path / "site"), needle)
    assert not (tmp_path / "site").exists()


def test_view_refuses_graphs_generate_refuses(tmp_path, sample, generated):
    graphs = _graphs(sample)
    image = next(iter(graphs))
    graphs[image]["objects"] = list(graphs[image]["objects"].values())
    path = _write(tmp_path / "graphs.json", graphs)
    assert_refused(invoke("view", generated, "--scene-graphs", path, "--static", tmp_path / "site"),
                   "graphs.json", f"image {image}", "'objects'")


def test_augment_names_a_training_question_without_an_answer(tmp_path, sample):
    questions = json.loads(sample[0].read_bytes())
    qid = next(iter(questions))
    del questions[qid]["answer"]
    path = _write(tmp_path / "questions.json", questions)
    result = invoke("augment", "--questions", path, "--scene-graphs", sample[1], "--out", tmp_path / "aug.json")
    assert_refused(result, "questions.json", f"question {qid}", "no answer")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["questions.json"]


def test_ood_vqavs_names_an_objects_path_that_is_a_folder(tmp_path, sample):
    result = invoke("ood", "vqavs", "--questions", sample[0], "--objects", tmp_path, "--out", tmp_path / "o")
    assert_refused(result, str(tmp_path), "expected a file, got a directory")


def test_an_unreadable_predictions_file_is_a_located_error(tmp_path, generated):
    predictions = tmp_path / "preds.json"
    predictions.write_text("{}")
    predictions.chmod(0)
    done = run_as_ordinary_user("evaluate", "--contrast", generated, "-p", f"m={predictions}", "--out",
                                tmp_path / "report")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{predictions}: permission denied" in done.stderr


@pytest.mark.parametrize("cell,needle", [("x" * (200 << 10), "field larger than field limit"),
                                         (None, "not UTF-8")])
def test_mturk_ingest_names_a_results_file_it_cannot_read(tmp_path, generated, cell, needle):
    hits = tmp_path / "hits"
    assert invoke("mturk", "export", "--contrast", generated, "--images-base-url", "https://example.org/i",
                  "--sample", "6", "--out", hits).exit_code == 0
    results = tmp_path / "results.csv"
    assert invoke("mturk", "simulate", hits, "--out", results).exit_code == 0
    header, rows = results.read_bytes().split(b"\r\n", 1)
    assert rows.startswith(b'"')
    middle = b"\xff\xfe" if cell is None else cell.encode()  # inside the first cell of the first row
    results.write_bytes(header + b"\r\n" + b'"' + middle + rows[1:])
    result = invoke("mturk", "ingest", "--manifest", hits / "manifest.json", "--results", results,
                    "--out", tmp_path / "report")
    assert_refused(result, "results.csv", needle)
    assert not (tmp_path / "report").exists()


# --- ids given twice -------------------------------------------------------------------------


def _twice(text: str, key: str) -> str:
    """A JSON object text with its member `key` given once more at the end."""
    data = json.loads(text)
    member = json.dumps({key: data[key]})[1:-1]
    return text.rstrip()[:-1] + ", " + member + "}"


def test_an_image_given_twice_in_a_scene_graph_file_is_refused_by_every_reader(tmp_path, sample, generated):
    text = sample[1].read_text()
    image = next(iter(json.loads(text)))
    path = tmp_path / "graphs.json"
    path.write_text(_twice(text, image))
    assert_refused(_generate(sample, tmp_path / "out", graphs=path), "graphs.json", f"image id '{image}' is given "
                   "twice (record 1 of", "and record ")
    # verify streams the graphs as generate does, so it names both records alike
    assert_refused(invoke("verify", generated, "--scene-graphs", path), "graphs.json",
                   f"image id '{image}' is given twice (record 1 of", "and record ")
    assert_refused(invoke("ood", "vqavs", "--questions", sample[0], "--objects", path, "--out", tmp_path / "o"),
                   "graphs.json", f"image id '{image}' is given twice (record 1, and record ")


def test_an_image_given_in_two_shards_names_both_files(tmp_path, sample):
    graphs = _graphs(sample)
    shards = tmp_path / "graphs"
    shards.mkdir()
    image = next(iter(graphs))
    _write(shards / "a.json", graphs)
    _write(shards / "b.json", {image: graphs[image]})
    assert_refused(_generate(sample, tmp_path / "out", graphs=shards),
                   f"image id '{image}' is given twice (record 1 of {shards / 'a.json'}, and record 1 of "
                   f"{shards / 'b.json'})")


def test_a_question_given_twice_is_refused_by_match_evaluate_and_generate(tmp_path, sample, generated):
    text = sample[0].read_text()
    qid = next(iter(json.loads(text)))
    path = tmp_path / "questions.json"
    path.write_text(_twice(text, qid))
    assert_refused(invoke("match", path), "questions.json", f"key '{qid}' is given twice")
    predictions = _write(tmp_path / "preds.json", {qid: "yes"})
    assert_refused(invoke("evaluate", "--questions", path, "-p", f"m={predictions}"), "questions.json",
                   f"key '{qid}' is given twice")
    assert_refused(_generate(sample, tmp_path / "out", questions=path), f"question id '{qid}' is given twice")


def test_ood_superclevr_refuses_a_question_given_twice_and_names_the_file_of_an_unknown_scene(tmp_path):
    from contrastgen.resources import clevr_sample_dir
    base = clevr_sample_dir()
    data = json.loads((base / "questions" / "superCLEVR_questions_5.json").read_bytes())
    data["questions"].append(dict(data["questions"][0]))
    twice = _write(tmp_path / "twice.json", data)
    assert_refused(invoke("ood", "superclevr", "--scenes", base / "scenes", "--questions", twice, "--out",
                          tmp_path / "o"), "twice.json", "question id 0 is given twice (question 0, and question ")
    data["questions"] = data["questions"][:1]
    data["questions"][0]["image_filename"] = data["questions"][0]["image"] = "nowhere.png"
    unknown = _write(tmp_path / "unknown.json", data)
    assert_refused(invoke("ood", "superclevr", "--scenes", base / "scenes", "--questions", unknown, "--out",
                          tmp_path / "o"), "unknown.json: record question 0", "'nowhere'")


# --- outputs ----------------------------------------------------------------------------------


def test_evaluate_examples_show_markup_from_the_data_and_never_run_it(tmp_path, generated):
    data = copy_of(generated, tmp_path / "gen")
    lines = (data / "contrast_sets.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["question"] = "<script>alert(1)</script> Is it `red`?"
    lines[0] = json.dumps(first)
    (data / "contrast_sets.jsonl").write_text("\n".join(lines) + "\n")
    # every question answered (a run that asked only some would be scored on those alone), the
    # first original wrongly, so its set is listed among the examples
    answers = {}
    for line in lines:
        rec = json.loads(line)
        answers[rec["question_id"]] = rec["answer"]
        answers.update({p["question_id"]: p["answer"] for p in rec["perturbations"]})
    answers[first["question_id"]] = "no answer at all"
    predictions = _write(tmp_path / "preds.json", answers)
    result = invoke("evaluate", "--contrast", data, "-p", f"m={predictions}", "--examples", "1000", "--n-boot", "0",
                    "--out", tmp_path / "report")
    assert result.exit_code == 0, result.output
    report = (tmp_path / "report" / "report.md").read_text()
    assert "<script>" not in report
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Is it `red`?" in report


def test_a_full_disk_is_one_sentence_and_the_old_result_stays(tmp_path, sample, monkeypatch):
    from contrastgen.files import atomic
    out = tmp_path / "out"
    assert _generate(sample, out).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    monkeypatch.setattr(atomic, "_steps_taken", 0)
    result = _generate(sample, out, env={FAULT_ENV: "3:ENOSPC"})
    assert_refused(result, f"cannot write {out}", "No space left on device", "nothing was changed there")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("step", [2, 3, 4])
def test_augment_on_a_full_disk_leaves_nothing_beside_its_first_output(tmp_path, sample, monkeypatch, step):
    # the version store of augment's file group is made before its first file is written
    from contrastgen.files import atomic
    monkeypatch.setattr(atomic, "_steps_taken", 0)
    out = tmp_path / "out"
    out.mkdir()
    result = invoke("augment", "--questions", sample[0], "--scene-graphs", sample[1], "--out", out / "res.json",
                    env={FAULT_ENV: f"{step}:ENOSPC"})
    assert_refused(result, "No space left on device")
    assert sorted(p.name for p in out.iterdir()) == []


def test_a_folder_that_may_not_be_written_is_one_sentence(tmp_path, sample):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    done = run_as_ordinary_user("generate", "--questions", sample[0], "--scene-graphs", sample[1], "--out",
                                locked / "out", "--no-progress", "--workers", "1")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"contrastgen: error: cannot write {locked / 'out'}: Permission denied; no permission to write there" \
           in done.stderr
    assert list(locked.iterdir()) == []


def test_view_will_not_serve_beyond_loopback_without_insecure(generated):
    for host in ("0.0.0.0", "192.168.1.5", "::"):
        assert_refused(invoke("view", generated, "--host", host), f"refusing to serve the viewer on {host}")


def test_a_killed_run_leaves_what_the_next_command_removes(tmp_path, sample):
    import subprocess
    import sys
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir), FAULT_ENV: "1"}  # killed as it starts writing the output
    done = subprocess.run([sys.executable, "-m", "contrastgen", "generate", "--questions", str(sample[0]),
                           "--scene-graphs", str(sample[1]), "--out", str(tmp_path / "out"), "--no-progress",
                           "--workers", "2"], env=env, capture_output=True)
    assert done.returncode == -9
    left = [p.name for p in tmpdir.iterdir()]
    assert len(left) == 1 and left[0].startswith("contrastgen-"), left  # its inputs and results, spilled
    assert any((tmpdir / left[0]).rglob("*.bin"))
    env.pop(FAULT_ENV)
    assert subprocess.run([sys.executable, "-m", "contrastgen", "match", str(sample[0])], env=env,
                          capture_output=True).returncode == 0
    assert list(tmpdir.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]


def test_a_ray_cluster_that_dies_mid_run_is_one_sentence(monkeypatch):
    """Ray's own errors (a raylet or the GCS gone) end the run with a sentence, not a traceback."""
    import sys
    import types

    from contrastgen.errors import ContrastgenError
    from contrastgen.parallel.ray_session import ray_session

    class RayError(Exception):
        pass

    class LocalRayletDiedError(RayError):
        pass

    fake = types.SimpleNamespace(is_initialized=lambda: True, shutdown=lambda: None,
                                 exceptions=types.SimpleNamespace(RayError=RayError))
    monkeypatch.setitem(sys.modules, "ray", fake)
    with pytest.raises(ContrastgenError, match=r"the Ray cluster failed during the run \(LocalRayletDiedError: "
                                               r"the raylet died\); nothing was written"), ray_session(None):
        raise LocalRayletDiedError("the raylet died\nand a long story")


@pytest.mark.parametrize("lone", ["\\ud800", "\\udc00"])
def test_a_lone_surrogate_in_a_streamed_question_file_is_refused_as_match_refuses_it(tmp_path, sample, lone):
    # the streamed reader used to read a lone high surrogate as "?" and go on; the whole-file
    # reader (match) refuses the same file
    questions = json.loads(sample[0].read_bytes())
    first = next(iter(questions))
    text = json.dumps(questions)
    marker = json.dumps({first: questions[first]})[1:-1]
    bad = tmp_path / "questions.json"
    bad.write_text(text.replace(marker, marker[:-1] + ', "note": "a' + lone + '"}', 1))
    assert_refused(_generate(sample, tmp_path / "out", questions=bad), "questions.json", "lone surrogate")
    assert_refused(invoke("match", bad), "questions.json")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("evidence", [None, {}, {"facts": [{"fact": "object", "id": 3100001}]},
                                      {"facts": [{"fact": "object", "name": "puddle"}]}])
def test_evaluate_refuses_a_contrast_set_whose_proof_verify_would_refuse(tmp_path, generated, evidence):
    lines = (generated / "contrast_sets.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["perturbations"][0]["evidence"] = evidence
    folder = tmp_path / "cs"
    folder.mkdir()
    (folder / "contrast_sets.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    original = json.loads((generated / "original.json").read_bytes())
    predictions = _write(tmp_path / "p.json", {qid: q["answer"] for qid, q in original.items()})
    result = invoke("evaluate", "--contrast", folder, "-p", f"m={predictions}", "--n-boot", "10",
                    "--out", tmp_path / "report")
    assert_refused(result, "contrast_sets.jsonl", first["perturbations"][0]["question_id"])
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize("field,value", [("question_family_index", {}), ("question_family_index", -1e9),
                                         ("question_index", 2**70), ("image_filename", 12345)])
def test_ood_superclevr_refuses_a_question_index_that_is_no_whole_number(tmp_path, field, value):
    sample = Path(__file__).resolve().parents[2] / "contrastgen" / "data" / "sample_clevr"
    data = json.loads((sample / "questions" / "superCLEVR_questions_5.json").read_text())
    data["questions"][0][field] = value
    questions = _write(tmp_path / "q.json", data)
    result = invoke("ood", "superclevr", "--scenes", sample / "scenes", "--questions", questions,
                    "--out", tmp_path / "out")
    assert_refused(result, "q.json", field)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("question", [12345, "", None])
def test_mturk_export_refuses_a_gold_question_that_is_no_text(tmp_path, generated, question):
    record = json.loads((generated / "contrast_sets.jsonl").read_text().splitlines()[0])
    gold = _write(tmp_path / "gold.json", [{"image_id": record["image_id"], "question": question,
                                             "answer": record["answer"]}])
    result = invoke("mturk", "export", "--contrast", generated, "--images-base-url", "https://example.org/i",
                    "--sample", "6", "--gold", gold, "--out", tmp_path / "hits")
    assert_refused(result, "gold.json", "gold item 1", "'question'")
    assert not (tmp_path / "hits").exists()


@pytest.mark.parametrize("entry", [{"question_id": None}, {"question_id": ["1"]}, {"question_id": "1", "question": 7}])
def test_view_refuses_a_review_entry_it_cannot_show(tmp_path, generated, entry):
    review = tmp_path / "review.jsonl"
    review.write_text(json.dumps(entry) + "\n")
    result = invoke("view", generated, "--review", review, "--static", tmp_path / "site")
    assert_refused(result, "review.jsonl", "line 1")
    assert not (tmp_path / "site").exists()
