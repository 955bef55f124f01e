"""`contrastgen export`: every perturbation becomes one row that Parquet, `datasets` and JSONL
readers load back with the record's values; the card states what the rows say."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.records import load_contrast_records


def _export(source: Path, out: Path, fmt: str, *extra: str) -> None:
    result = CliRunner().invoke(cli, ["export", str(source), "--format", fmt, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output


def _expected(source: Path) -> dict[str, dict]:
    """What each perturbation's row must hold, read straight from contrast_sets.jsonl."""
    out = {}
    for rec in load_contrast_records(source):
        for p in rec["perturbations"]:
            out[p["question_id"]] = {"original": rec, "p": p}
    return out


def _check_row(row: dict, want: dict) -> None:
    rec, p = want["original"], want["p"]
    assert (row["question"], row["answer"], row["rank"]) == (p["question"], p["answer"], p["rank"])
    assert row["kind"] == p.get("kind", "contrast")
    assert row["original"] == {"question_id": rec["question_id"], "question": rec["question"],
                               "answer": rec["answer"]}
    assert (row["template"], row["image_id"]) == (rec["template"], rec["image_id"])
    assert {k: row["change"][k] for k in p["change"]} == p["change"]
    ev = p["evidence"]
    assert row["evidence"]["answer"] == ev["answer"] and row["evidence"]["version"] == ev["version"]
    assert len(row["evidence"]["facts"]) == len(ev["facts"])
    for got, fact in zip(row["evidence"]["facts"], ev["facts"], strict=True):
        for key, value in fact.items():  # every key of every fact, in its column
            assert got[key] == value, (key, got, fact)
        assert got["other"] is None
    query = dict(row["evidence"]["query"])
    if query["name_options"] is not None:  # exists_any's one name list per option
        query["names"] = query["name_options"]
    assert {k: query[k] for k in ev["query"]} == ev["query"] and query["other"] is None
    if "trace" in ev:
        assert json.loads(row["evidence"]["trace"]) == ev["trace"]
    if "semantic" in p:
        assert row["semantic"] == p["semantic"]
    if "program" in p:
        assert row["program"] == p["program"]
        assert row["original_program"] == rec["program"]


@pytest.mark.parametrize("which", ["gqa_output", "clevr_output"])
def test_parquet_round_trips_through_load_dataset(which, request, tmp_path, hf_offline):
    source = request.getfixturevalue(which)
    _export(source, tmp_path / "pq", "parquet")
    files = sorted((tmp_path / "pq" / "data").glob("*.parquet"))
    assert [f.name for f in files] == ["test-00000-of-00001.parquet"]
    ds = hf_offline.load_dataset("parquet", data_files={"test": [str(f) for f in files]},
                                 cache_dir=str(tmp_path / "cache"))["test"]
    want = _expected(source)
    assert len(ds) == len(want) and sorted(ds["question_id"]) == sorted(want)
    for row in ds:
        _check_row(row, want[row["question_id"]])


def test_hf_dataset_round_trips_through_load_from_disk(gqa_output, tmp_path, hf_offline):
    _export(gqa_output, tmp_path / "hf", "hf", "--split", "dev")
    loaded = hf_offline.load_from_disk(str(tmp_path / "hf"))
    assert list(loaded) == ["dev"]
    want = _expected(gqa_output)
    assert loaded["dev"].num_rows == len(want)
    for row in loaded["dev"]:
        _check_row(row, want[row["question_id"]])
    kinds = Counter(loaded["dev"]["kind"])
    assert kinds["contrast"] and kinds["invariance"]  # both modes' perturbations are there


def test_jsonl_rows_equal_the_parquet_rows(clevr_output, tmp_path):
    _export(clevr_output, tmp_path / "pq", "parquet")
    _export(clevr_output, tmp_path / "jl", "jsonl")
    table = pq.read_table(tmp_path / "pq" / "data" / "test-00000-of-00001.parquet")
    lines = [json.loads(line) for line in (tmp_path / "jl" / "test.jsonl").read_text().splitlines()]
    assert table.to_pylist() == lines


def test_same_input_writes_the_same_bytes(gqa_output, tmp_path, hf_offline):
    for fmt in ("parquet", "hf", "jsonl"):
        _export(gqa_output, tmp_path / f"{fmt}1", fmt)
        _export(gqa_output, tmp_path / f"{fmt}2", fmt)
        one = {p.relative_to(tmp_path / f"{fmt}1"): p.read_bytes() for p in (tmp_path / f"{fmt}1").rglob("*") if p.is_file()}
        two = {p.relative_to(tmp_path / f"{fmt}2"): p.read_bytes() for p in (tmp_path / f"{fmt}2").rglob("*") if p.is_file()}
        assert one == two, fmt


def _card(folder: Path) -> tuple[dict, str]:
    text = (folder / "README.md").read_text()
    _, meta, body = text.split("---\n", 2)
    return yaml.safe_load(meta), body


def test_card_counts_fields_and_licence(gqa_output, clevr_output, tmp_path):
    _export(gqa_output, tmp_path / "g", "parquet")
    meta, body = _card(tmp_path / "g")
    assert meta["license"] == "cc-by-4.0" and "GQA" in body
    assert meta["configs"][0]["data_files"][0] == {"split": "test", "path": "data/test-*.parquet"}
    records = load_contrast_records(gqa_output)
    per_template: dict[str, Counter] = {}
    for rec in records:
        for p in rec["perturbations"]:
            c = per_template.setdefault(rec["template"], Counter())
            c[p.get("kind", "contrast")] += 1
            for k in (1, 3, 5):
                c[k] += p["rank"] <= k
    for template, c in per_template.items():
        row = f"| {template} | {c[1]:,} | {c[3]:,} | {c[5]:,} | {c['contrast']:,} | {c['invariance']:,} |"
        assert row in body, row
    stats = json.loads((gqa_output / "stats.json").read_text())
    assert f"seed {stats['seed']}" in body and f"{stats['questions']:,} questions" in body
    for column in ("question_id", "original", "change", "evidence", "semantic", "program"):
        assert f"| `{column}` |" in body
    _export(clevr_output, tmp_path / "c", "hf", "--license", "cc-by-sa-4.0", "--license-note", "Mine.")
    meta, body = _card(tmp_path / "c")
    assert meta["license"] == "cc-by-sa-4.0" and "Mine." in body and "configs" not in meta
    assert "load_from_disk" in body and "clevr" in meta["tags"]


def test_a_fact_key_the_schema_does_not_name_is_kept_in_other(gqa_output, tmp_path):
    lines = (gqa_output / "contrast_sets.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["perturbations"][0]["evidence"]["facts"][0]["confidence"] = 0.5
    (tmp_path / "contrast_sets.jsonl").write_text(json.dumps(rec) + "\n")
    _export(tmp_path / "contrast_sets.jsonl", tmp_path / "out", "jsonl")
    row = json.loads((tmp_path / "out" / "test.jsonl").read_text().splitlines()[0])
    assert json.loads(row["evidence"]["facts"][0]["other"]) == {"confidence": 0.5}


@pytest.mark.parametrize("content, message", [
    ("", "empty"),
    ('{"question_id": "1"\n', "malformed JSON"),
    ('{"question_id": "1", "image_id": "2"}\n', "missing field"),
])
def test_bad_input_names_the_file_and_writes_nothing(content, message, tmp_path):
    bad = tmp_path / "contrast_sets.jsonl"
    bad.write_text(content)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["export", str(bad), "--format", "parquet", "--out", str(out)])
    assert result.exit_code == 2 and message in result.output and str(bad) in result.output
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["contrast_sets.jsonl"]


def _no_evidence(p):
    p["evidence"] = None


def _fact_id_null(p):
    p["evidence"]["facts"][0]["id"] = None


def _fact_id_integer(p):
    p["evidence"]["facts"][0]["id"] = 3100093


def _question_id_integer(p):
    p["question_id"] = 12345


@pytest.mark.parametrize(("spoil", "message"), [
    (_no_evidence, "no 'evidence' object"),
    (_fact_id_null, "evidence fact 1: field 'id' must be an object id"),
    (_fact_id_integer, "evidence fact 1: field 'id' must be an object id"),
    (_question_id_integer, "field 'question_id' has the wrong type"),
])
@pytest.mark.parametrize("command", [["export", "{src}", "--format", "jsonl", "--out", "{out}"],
                                     ["export", "{src}", "--format", "parquet", "--out", "{out}"],
                                     ["view", "{src}", "--static", "{out}"]])
def test_a_record_verify_refuses_is_refused_by_every_reader_that_shows_it(gqa_output, tmp_path, spoil,
                                                                         message, command):
    # a proof that is null or names no object must not reach a dataset or a page looking proven
    lines = (gqa_output / "contrast_sets.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    spoil(rec["perturbations"][0])
    bad = tmp_path / "contrast_sets.jsonl"
    bad.write_text("\n".join([lines[1], json.dumps(rec)]) + "\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, [a.format(src=bad, out=out) for a in command])
    assert result.exit_code == 2, result.output
    assert message in result.output and str(bad) in result.output
    assert not out.exists()


def test_a_failed_export_keeps_the_previous_one(gqa_output, tmp_path):
    out = tmp_path / "out"
    _export(gqa_output, out, "jsonl")
    before = (out / "test.jsonl").read_bytes()
    (tmp_path / "empty.jsonl").write_text("")
    result = CliRunner().invoke(cli, ["export", str(tmp_path / "empty.jsonl"), "--format", "jsonl", "--out", str(out)])
    assert result.exit_code == 2 and (out / "test.jsonl").read_bytes() == before


def test_template_rows_carry_the_originals_program(gqa_output, tmp_path):
    """A template perturbation's row holds its edited program and the original's, as a program
    edit's does: a reader comparing the two needs both, whichever path made the row."""
    _export(gqa_output, tmp_path / "rows", "jsonl")
    rows = [json.loads(line) for f in sorted((tmp_path / "rows").rglob("*.jsonl")) for line in f.open()]
    questions = json.loads((Path(__file__).resolve().parents[2] / "contrastgen" / "data" / "sample"
                            / "questions.json").read_text())
    template_rows = [r for r in rows if r["template"] != "program" and r["semantic"]]
    assert template_rows
    for r in template_rows:
        want = questions[r["original"]["question_id"]]["semantic"]
        assert [s["operation"] for s in r["original_semantic"]] == [s["operation"] for s in want]
        assert [s["argument"] for s in r["original_semantic"]] == [s["argument"] for s in want]
