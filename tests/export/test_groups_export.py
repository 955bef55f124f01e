"""Two-image groups (`generate --groups`) through the harness exports and `evaluate`: the group
cells are rows of their own (role `group cell`, `group_id`), every row names its groups, and
NaturalBench's three accuracies come out of lmms-eval's aggregations, out of `evaluate` on a GQA
submission and out of `evaluate` on lmms-eval's samples log, the same each way. The scene-graph
oracle scores 100% on all of them; always-"yes" scores no group."""

from __future__ import annotations

import json

import orjson
import pandas as pd
import pytest
from lmms_eval_emulation import load_task, run, write_samples

from contrastgen.answers import normalize_answer
from contrastgen.evaluation.contrast import evaluate_contrast
from contrastgen.evaluation.predictions import load_predictions
from contrastgen.export.lmms_eval import export_lmms_eval
from contrastgen.export.vlmevalkit import export_vlmevalkit
from contrastgen.records import load_contrast_records
from contrastgen.resources import sample_dir

GROUP_METRICS = ("group_question_accuracy", "group_image_accuracy", "group_accuracy")


def oracle(doc, text, visuals) -> str:
    return doc["answer"]


def always_yes(doc, text, visuals) -> str:
    return "Yes."


@pytest.fixture(scope="module")
def grouped_output(tmp_path_factory):
    from PIL import Image

    from contrastgen.engine import Engine
    from contrastgen.run.generate import generate
    from contrastgen.writers import write_outputs

    questions = orjson.loads((sample_dir() / "questions.json").read_bytes())
    graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    folder = tmp_path_factory.mktemp("groups_export")
    out = folder / "out"
    write_outputs(generate(questions, graphs, engine=Engine.load(), workers=1, mode="both", groups=True), out)
    images = folder / "images"
    images.mkdir()
    for i, image_id in enumerate(sorted(graphs)):
        Image.new("RGB", (32, 24), (i * 37 % 256, i * 91 % 256, 60)).save(images / f"{image_id}.jpg")
    return out, images


def _groups(out):
    return [p["group"] for r in load_contrast_records(out) for p in r["perturbations"] if "group" in p]


def _expected(groups, answer) -> dict[str, float]:
    """NaturalBench's accuracies of a model answering `answer(question_id, gold)`, counted here."""
    right = [[normalize_answer(answer(c["question_id"], c["answer"])) == normalize_answer(c["answer"])
              for c in g["cells"]] for g in groups]
    return {"group_question_accuracy": sum((r[0] and r[2]) + (r[1] and r[3]) for r in right) / (2 * len(right)),
            "group_image_accuracy": sum((r[0] and r[1]) + (r[2] and r[3]) for r in right) / (2 * len(right)),
            "group_accuracy": sum(all(r) for r in right) / len(right)}


@pytest.fixture(scope="module")
def task(grouped_output, tmp_path_factory):
    pytest.importorskip("datasets", reason="the `datasets` package (extra [harness]) is not installed")
    out, images = grouped_output
    folder = tmp_path_factory.mktemp("groups_task")
    return load_task(export_lmms_eval(out, folder / "task", name="groups", images=images).out, folder / "cache")


def test_group_cells_are_rows_with_their_group(task, grouped_output):
    groups = _groups(grouped_output[0])
    rows = task.rows
    cells = [r for r in rows if r["role"] == "group cell"]
    assert len(cells) == 2 * len(groups) > 100
    assert {r["group_id"] for r in cells} == {g["id"] for g in groups}
    by_id = {r["question_id"]: r for r in rows}
    for g in groups:
        for n, c in enumerate(g["cells"]):
            assert f"{g['id']}:{n}" in by_id[c["question_id"]]["groups"]
            assert by_id[c["question_id"]]["image_id"] == str(g["images"][n // 2])
    assert {m["metric"] for m in task.config["metric_list"]} >= set(GROUP_METRICS)


def test_the_oracle_scores_every_group_and_always_yes_none(task, grouped_output):
    groups = _groups(grouped_output[0])
    perfect = run(task, oracle, visuals=False).scores
    assert perfect.pop("drop") == 0.0
    assert all(v == 1.0 for v in perfect.values()), {k: v for k, v in perfect.items() if v != 1.0}
    yes = run(task, always_yes, visuals=False).scores
    assert yes["group_accuracy"] == 0.0
    want = _expected(groups, lambda qid, gold: "yes")
    assert {m: yes[m] for m in GROUP_METRICS} == pytest.approx(want)
    yes_no = [g for g in groups if {normalize_answer(c["answer"]) for c in g["cells"]} <= {"yes", "no"}]
    assert len(yes_no) > 20 and _expected(yes_no, lambda qid, gold: "yes")["group_accuracy"] == 0.0


def test_evaluate_reports_the_same_figures_from_a_submission_and_from_the_samples_log(task, grouped_output,
                                                                                      tmp_path):
    out = grouped_output[0]
    records = load_contrast_records(out)
    groups = _groups(out)
    lmms = run(task, always_yes, visuals=False)
    answers = {s["doc"]["question_id"]: s["answer"] for s in lmms.samples}
    submission = tmp_path / "submission.json"
    submission.write_text(json.dumps([{"questionId": q, "prediction": a} for q, a in answers.items()]))
    log = write_samples(tmp_path / "20260101_000000_samples_contrast_groups.jsonl", lmms, "0.7")
    gold = {c["question_id"]: c["answer"] for g in groups for c in g["cells"]}
    gold.update({p["question_id"]: p["answer"] for r in records for p in r["perturbations"]})
    gold.update({r["question_id"]: r["answer"] for r in records})
    report = evaluate_contrast(records, {"gqa": load_predictions(submission), "lmms": load_predictions(log),
                                         "oracle": gold}, n_boot=10)
    for name in ("gqa", "lmms"):
        figures = report["groups"][name]["overall"]
        assert figures["groups"] == len(groups) and report["groups"][name]["missing_cells"] == 0
        assert [figures[m] for m in ("question_accuracy", "image_accuracy", "group_accuracy")] == \
            pytest.approx([lmms.scores[m] for m in GROUP_METRICS])
    best = report["groups"]["oracle"]["overall"]
    assert (best["question_accuracy"], best["image_accuracy"], best["group_accuracy"]) == (1.0, 1.0, 1.0)
    assert set(report["groups"]["oracle"]["by_kind"]) == {g["kind"] for g in groups}


def test_the_vlmevalkit_tsv_carries_the_cells_and_their_groups(grouped_output, tmp_path):
    out, images = grouped_output
    tsvs = export_vlmevalkit(out, tmp_path / "lmu", name="groups", images=images)
    frame = pd.read_csv(tsvs.out / f"{tsvs.names[0]}.tsv", sep="\t")
    cells = frame[frame["role"] == "group cell"]
    assert len(cells) == 2 * len(_groups(out))
    assert all(json.loads(g) and gid for g, gid in zip(cells["groups"], cells["group_id"], strict=True))


def test_an_export_without_groups_has_no_group_columns(grouped_output, tmp_path):
    """The exports of a run without --groups are what they were: no new column, row or metric."""
    pytest.importorskip("datasets", reason="the `datasets` package (extra [harness]) is not installed")
    import pyarrow.parquet as pq

    from contrastgen.engine import Engine
    from contrastgen.run.generate import generate
    from contrastgen.writers import write_outputs

    questions = orjson.loads((sample_dir() / "questions.json").read_bytes())
    graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    write_outputs(generate(questions, graphs, engine=Engine.load(), workers=1, mode="both"), tmp_path / "out")
    images = grouped_output[1]
    task = export_lmms_eval(tmp_path / "out", tmp_path / "task", name="plain", images=images).out
    schema = pq.read_schema(task / "data" / "test.parquet")
    assert "groups" not in schema.names and "group_id" not in schema.names
    assert "group_accuracy" not in (task / "contrast_plain.yaml").read_text()
    tsvs = export_vlmevalkit(tmp_path / "out", tmp_path / "lmu", name="plain", images=images)
    frame = pd.read_csv(tsvs.out / f"{tsvs.names[0]}.tsv", sep="\t")
    assert "groups" not in frame.columns and "group cell" not in set(frame["role"])


def test_a_malformed_group_is_named_not_a_traceback(grouped_output):
    from contrastgen.errors import InputError

    records = load_contrast_records(grouped_output[0])
    rec = next(r for r in records if any("group" in p for p in r["perturbations"]))
    p = next(p for p in rec["perturbations"] if "group" in p)
    p["group"]["cells"] = p["group"]["cells"][:3]
    with pytest.raises(InputError, match="group") as caught:
        answers = {q: "yes" for q in [rec["question_id"], *(x["question_id"] for x in rec["perturbations"])]}
        evaluate_contrast([rec], {"m": answers}, n_boot=10)
    assert p["question_id"] in str(caught.value)


@pytest.mark.parametrize("limit", [120, 250])
def test_a_limited_run_scores_the_complete_groups_as_the_task_does(task, grouped_output, tmp_path, limit):
    """A group with a cell not asked (`--limit`) is left out by the task and by `evaluate`, which
    counts its unasked cells; it used to count them wrong."""
    records = load_contrast_records(grouped_output[0])
    lmms = run(task, always_yes, list(range(limit)), visuals=False)
    log = write_samples(tmp_path / "20260101_000000_samples_contrast_groups.jsonl", lmms, "0.7")
    report = evaluate_contrast(records, {"lmms": load_predictions(log)}, n_boot=0)
    groups = report["groups"]["lmms"]
    assert groups["missing_cells"] > 0
    asked = {s["doc"]["question_id"] for s in lmms.samples}
    complete = [g for g in _groups(grouped_output[0]) if all(c["question_id"] in asked for c in g["cells"])]
    assert groups["overall"]["groups"] == len(complete) > 0
    assert [groups["overall"][m] for m in ("question_accuracy", "image_accuracy", "group_accuracy")] == \
        pytest.approx([lmms.scores[m] for m in GROUP_METRICS])
