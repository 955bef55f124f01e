"""Predictions as Parquet, JSON lines or a Hugging Face dataset read the same as the JSON file."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.errors import InputError
from contrastgen.evaluation.predictions import load_predictions
from contrastgen.resources import sample_dir

ANSWERS = {"q1": "yes", "q2": "red", "17": "2"}


def _rows(id_key: str, answer_key: str) -> list[dict]:
    return [{id_key: qid, answer_key: a} for qid, a in ANSWERS.items()]


def test_parquet_jsonl_and_hf_folders_give_the_json_answers(tmp_path, monkeypatch):
    pq.write_table(pa.Table.from_pylist(_rows("questionId", "prediction")), tmp_path / "gqa.parquet")
    (tmp_path / "vqa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows("question_id", "answer")))
    folder = tmp_path / "parquet_dir" / "data"
    folder.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(_rows("question_id", "answer")[:2]), folder / "a.parquet")
    pq.write_table(pa.Table.from_pylist(_rows("question_id", "answer")[2:]), folder / "b.parquet")
    for path in (tmp_path / "gqa.parquet", tmp_path / "vqa.jsonl", tmp_path / "parquet_dir"):
        assert load_predictions(path) == ANSWERS, path
    datasets = pytest.importorskip("datasets", reason="the `datasets` package (extra [hf]) is not installed")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    datasets.disable_progress_bars()
    datasets.Dataset.from_list(_rows("questionId", "prediction")).save_to_disk(str(tmp_path / "hf"))
    assert load_predictions(tmp_path / "hf") == ANSWERS
    dd = datasets.DatasetDict({"a": datasets.Dataset.from_list(_rows("question_id", "answer")[:1]),
                               "b": datasets.Dataset.from_list(_rows("question_id", "answer")[1:])})
    dd.save_to_disk(str(tmp_path / "hf_dict"))
    assert load_predictions(tmp_path / "hf_dict") == ANSWERS  # every split


def test_bad_tables_name_the_file_and_what_is_missing(tmp_path):
    pq.write_table(pa.Table.from_pylist([{"id": "q1", "pred": "yes"}]), tmp_path / "p.parquet")
    with pytest.raises(InputError, match=r"p\.parquet.*needs columns .*\['id', 'pred'\]"):
        load_predictions(tmp_path / "p.parquet")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match=r"junk\.parquet.*not a readable parquet"):
        load_predictions(tmp_path / "junk.parquet")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no Hugging Face dataset"):
        load_predictions(tmp_path / "empty")
    (tmp_path / "p.jsonl").write_text('{"question_id": "q1", "answer": "yes"}\n{"question_id": \n')
    with pytest.raises(InputError, match=r"p\.jsonl.*line 2"):
        load_predictions(tmp_path / "p.jsonl")
    pq.write_table(pa.Table.from_pylist([{"questionId": "q1", "prediction": "yes"},
                                         {"questionId": "q1", "prediction": "no"}]), tmp_path / "two.parquet")
    with pytest.raises(InputError, match="question q1.*two different predictions"):
        load_predictions(tmp_path / "two.parquet")


def test_evaluate_scores_a_parquet_file_as_its_json(tmp_path):
    out = tmp_path / "cs"
    runner = CliRunner()
    assert runner.invoke(cli, ["generate", "--questions", str(sample_dir() / "questions.json"), "--scene-graphs",
                               str(sample_dir() / "scene_graphs.json"), "--workers", "1", "--no-progress",
                               "--out", str(out)]).exit_code == 0
    prior = tmp_path / "prior.json"
    assert runner.invoke(cli, ["baseline", "--kind", "prior", "--questions", str(out / "augmented.json"),
                               "--out", str(prior)]).exit_code == 0
    answers = json.loads(prior.read_text())
    rows = answers if isinstance(answers, list) else [{"questionId": k, "prediction": v} for k, v in answers.items()]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "prior.parquet")
    reports = []
    for path in (prior, tmp_path / "prior.parquet"):
        result = runner.invoke(cli, ["evaluate", "--contrast", str(out), "-p", f"prior={path}", "--n-boot", "0",
                                     "--out", str(tmp_path / path.suffix[1:])])
        assert result.exit_code == 0, result.output
        report = json.loads((tmp_path / path.suffix[1:] / "report.json").read_text())
        report.pop("inputs", None)
        reports.append(report)
    assert reports[0] == reports[1] and reports[0]["results"]["prior"]
