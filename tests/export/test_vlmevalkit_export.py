"""`export --format vlmevalkit`: the TSVs read, built and scored the way VLMEvalKit reads, builds
and scores a custom dataset (tests/export/vlmevalkit_emulation.py), on the bundled GQA sample
(images by path), the bundled Super-CLEVR sample and ../shared's renders (embedded base64)."""

from __future__ import annotations

import json

import orjson
import pandas as pd
import pytest
from PIL import Image
from vlmevalkit_emulation import (
    build_dataset,
    dataset_type,
    exact_matching,
    prediction_frame,
    report_acc,
)

from contrastgen.answers import normalize_answer
from contrastgen.errors import InputError
from contrastgen.export.vlmevalkit import dataset_names, export_vlmevalkit, mcq_options
from contrastgen.records import load_contrast_records
from contrastgen.resources import clevr_sample_dir, rules_file


@pytest.fixture(scope="module")
def gqa_tsv(gqa_with_image_files, tmp_path_factory):
    out = tmp_path_factory.mktemp("gqa_vlm") / "lmu"
    return export_vlmevalkit(gqa_with_image_files, out, name="gqa_sample"), gqa_with_image_files


@pytest.fixture(scope="module")
def clevr_tsv(clevr_output, tmp_path_factory):
    out = tmp_path_factory.mktemp("clevr_vlm") / "lmu"
    return export_vlmevalkit(clevr_output, out, name="clevr_sample", images=clevr_sample_dir() / "images"), clevr_output


@pytest.fixture(scope="module")
def shared_clevr_tsv(shared_clevr_output, shared_clevr_images, tmp_path_factory):
    out = tmp_path_factory.mktemp("shared_vlm") / "lmu"
    return (export_vlmevalkit(shared_clevr_output, out, name="superclevr", images=shared_clevr_images),
            shared_clevr_output)


EXPORTS = ("gqa_tsv", "clevr_tsv", "shared_clevr_tsv")


def questions(source):
    """question id -> (question, normalised gold answer, dataset), from the records."""
    out = {}
    for rec in load_contrast_records(source):
        dataset = rec.get("dataset") or "gqa"
        out[str(rec["question_id"])] = (rec["question"], normalize_answer(rec["answer"]), dataset)
        for p in rec["perturbations"]:
            out[str(p["question_id"])] = (p["question"], normalize_answer(p["answer"]), dataset)
    return out


@pytest.mark.parametrize("fixture", EXPORTS)
def test_vlmevalkit_builds_a_vqa_and_an_mcq_dataset(fixture, request):
    result, _ = request.getfixturevalue(fixture)
    vqa_name, mcq_name = result.names
    assert set(result.files) == {"README.md", f"{mcq_name}.tsv", f"{vqa_name}.tsv"}
    vqa, mcq = build_dataset(result.out, vqa_name), build_dataset(result.out, mcq_name)
    assert vqa.kind == "CustomVQADataset" and "A" not in vqa.data and dataset_type(vqa_name) == "VQA"
    assert mcq.kind == "CustomMCQDataset" and dataset_type(mcq_name) == "MCQ"
    for dataset in (vqa, mcq):
        index = list(dataset.data["index"])
        assert len(index) == len(set(index)) and all(isinstance(i, int) for i in index)
        assert not any(word in dataset.name.lower() for word in ("circular", "mmbench", "ccbench", "mmcr"))
    assert set(mcq.data["index"]) <= set(vqa.data["index"])


@pytest.mark.parametrize("fixture", EXPORTS)
def test_every_question_is_a_vqa_row_with_gqa_s_prompt_line(fixture, request):
    result, source = request.getfixturevalue(fixture)
    vqa = build_dataset(result.out, result.names[0])
    expected = questions(source)
    rows = vqa.rows()
    assert {r["question_key"][2:] for r in rows} == set(expected) and len(rows) == len(expected) == result.questions
    for row in rows:
        question, answer, _ = expected[row["question_key"][2:]]
        assert vqa.prompt(row) == question + "\nAnswer the question using a single word or phrase."
        assert normalize_answer(row["answer"]) == answer


@pytest.mark.parametrize("fixture", EXPORTS)
def test_the_two_option_questions_are_mcq_rows_whose_letter_is_the_gold_answer(fixture, request):
    result, source = request.getfixturevalue(fixture)
    mcq = build_dataset(result.out, result.names[1])
    expected = questions(source)
    rows = {r["question_key"][2:]: r for r in mcq.rows()}
    two_option = {qid for qid, (q, a, d) in expected.items() if mcq_options(q, a, d) is not None}
    assert set(rows) == two_option
    yes_no = {qid for qid, (_, a, _) in expected.items() if a in ("yes", "no")}
    assert yes_no <= two_option and len(yes_no) > 10
    for qid, row in rows.items():
        question, answer, _ = expected[qid]
        assert row["answer"] in ("A", "B") and str(row[row["answer"]]) == answer
        assert str(row["A"]) != str(row["B"])
        assert mcq.prompt(row) == (f"Question: {question}\nOptions:\nA. {row['A']}\nB. {row['B']}\n"
                                   "Please select the correct answer from the options above. \n")
        kinds = {"original", "invariance", "object", "attribute", "relation"}
        assert row["l2-category"] in kinds and row["category"]
        assert (row["l2-category"] == row["role"]) == (row["role"] != "perturbation")


@pytest.mark.parametrize("fixture", EXPORTS)
def test_every_image_decodes_to_the_file_it_came_from(fixture, request, tmp_path):
    result, source = request.getfixturevalue(fixture)
    files = {"gqa_tsv": None, "clevr_tsv": clevr_sample_dir() / "images",
             "shared_clevr_tsv": request.getfixturevalue("shared_clevr_images") if fixture == "shared_clevr_tsv" else None}[fixture]
    for name in result.names:
        dataset = build_dataset(result.out, name)
        dataset.img_root = tmp_path / name
        first = {}
        for row in dataset.rows():
            first.setdefault(str(row["image_id"]), row)
        for image_id, row in first.items():
            shown = dataset.image_files(row)
            if files is None:  # by path: the record's own file, opened as it is
                assert dataset.meta_only and "image" not in dataset.data
                assert shown.is_absolute() and shown.stem == image_id
                continue
            source_file = next(files.glob(f"{image_id}.*"))
            with Image.open(shown) as a, Image.open(source_file) as b:
                assert a.convert("RGB").tobytes() == b.convert("RGB").tobytes()
        if files is not None:  # each image's base64 is in the file once
            raw = pd.read_csv(result.out / f"{name}.tsv", sep="\t")
            assert (raw["image"].str.len() > 64).sum() == len(first) < len(raw)


def test_the_oracle_hits_every_mcq_row_and_always_a_hits_the_a_rows(clevr_tsv, tmp_path):
    result, _ = clevr_tsv
    mcq = build_dataset(result.out, result.names[1])
    gold = dict(zip(mcq.data["index"], mcq.data["answer"], strict=True))
    oracle = report_acc(exact_matching(prediction_frame(mcq, gold)))
    assert set(oracle.values()) == {1.0}
    assert "original" in oracle and "comparison" in oracle
    always_a = report_acc(exact_matching(prediction_frame(mcq, dict.fromkeys(gold, "A"))))
    assert always_a["Overall"] == pytest.approx(sum(a == "A" for a in gold.values()) / len(gold))
    assert 0 < always_a["Overall"] < 1


def test_two_option_answers_of_clevr_are_its_two_valued_attributes():
    metadata = json.loads(rules_file("clevr", "metadata_superclevr.json").read_text())["types"]
    two_valued = {tuple(v) for v in metadata.values() if isinstance(v, list) and len(v) == 2}
    from contrastgen.export.vlmevalkit import two_option_answers

    assert {(a, b) for d, a, b in two_option_answers() if d == "clevr"} == two_valued


def test_a_question_naming_its_choices_gets_them_as_options():
    assert mcq_options("Is the cup red or white?", "white", "gqa") == ("red", "white")
    assert mcq_options("Is the cup red or white?", "red", "gqa") == ("red", "white")
    assert mcq_options("Who is taller, the man or the woman?", "woman", "gqa") == ("man", "woman")
    assert mcq_options("On which side is the cup?", "left", "gqa") == ("left", "right")
    assert mcq_options("What color is the cup?", "red", "gqa") is None
    assert mcq_options("What material is the bus?", "metal", "gqa") is None
    assert mcq_options("What material is the bus?", "metal", "clevr") == ("rubber", "metal")


@pytest.mark.parametrize("name", ["MMBench_x", "my_circular", "xCCBENCH", "MMMU", "hMMT", "openended"])
def test_names_vlmevalkit_treats_specially_are_refused(name):
    with pytest.raises(InputError, match="VLMEvalKit"):
        dataset_names(name)


def test_an_answer_pandas_reads_as_missing_is_refused_naming_the_question(gqa_with_image_files, tmp_path):
    lines = [orjson.loads(line) for line in gqa_with_image_files.read_bytes().splitlines()]
    victim = lines[3]["perturbations"][0]
    victim["answer"] = "null"
    source = tmp_path / "contrast_sets.jsonl"
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in lines))
    with pytest.raises(InputError) as err:
        export_vlmevalkit(source, tmp_path / "lmu", name="x")
    assert f"q:{victim['question_id']}" in str(err.value) and "missing" in str(err.value)
    assert not (tmp_path / "lmu").exists()


def test_a_missing_image_names_the_question(gqa_output, tmp_path):
    (tmp_path / "images").mkdir()
    with pytest.raises(InputError, match="question .*has no file"):
        export_vlmevalkit(gqa_output, tmp_path / "lmu", name="x", images=tmp_path / "images")
    assert not (tmp_path / "lmu").exists()


def test_the_same_input_writes_the_same_bytes(clevr_output, tmp_path):
    images = clevr_sample_dir() / "images"
    a = export_vlmevalkit(clevr_output, tmp_path / "a", name="x", images=images)
    b = export_vlmevalkit(clevr_output, tmp_path / "b", name="x", images=images)
    for name in a.files:
        if name.endswith(".tsv"):
            assert (a.out / name).read_bytes() == (b.out / name).read_bytes(), name


def test_the_command_line_writes_both_harness_formats_and_refuses_what_does_not_apply(gqa_with_image_files, tmp_path):
    from click.testing import CliRunner

    from contrastgen.cli import cli

    records = [orjson.loads(line) for line in gqa_with_image_files.read_bytes().splitlines()]
    questions = {r["question_id"] for r in records} | {p["question_id"] for r in records for p in r["perturbations"]}
    said = f"{len(questions):,} questions of {len(records):,} contrast sets"
    runner = CliRunner()
    for fmt, written in (("vlmevalkit", "Contrast_gqa_cli_MCQ.tsv"), ("lmms-eval", "contrast_gqa_cli.yaml")):
        done = runner.invoke(cli, ["export", str(gqa_with_image_files), "--format", fmt,
                                   "--out", str(tmp_path / fmt / "gqa_cli")])
        assert done.exit_code == 0, done.output
        assert (tmp_path / fmt / "gqa_cli" / written).is_file() and said in done.output, done.output
    refused = runner.invoke(cli, ["export", str(gqa_with_image_files), "--format", "jsonl", "--images",
                                  str(tmp_path), "--out", str(tmp_path / "p")])
    assert refused.exit_code == 2 and "--images applies to" in refused.output
    refused = runner.invoke(cli, ["export", str(gqa_with_image_files), "--format", "parquet", "--name", "x",
                                  "--out", str(tmp_path / "p")])
    assert refused.exit_code == 2 and "--name applies to" in refused.output
    refused = runner.invoke(cli, ["export", str(gqa_with_image_files), "--format", "vlmevalkit", "--split", "test",
                                  "--out", str(tmp_path / "v")])
    assert refused.exit_code == 2 and "--split" in refused.output
    (tmp_path / "empty").mkdir()
    missing = runner.invoke(cli, ["export", str(gqa_with_image_files), "--format", "lmms-eval", "--images",
                                  str(tmp_path / "empty"), "--out", str(tmp_path / "m")])
    assert missing.exit_code == 2 and "error:" in missing.output and "record question" in missing.output
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("fixture", ("gqa_tsv", "clevr_tsv"))
def test_the_option_order_does_not_tell_the_answer(fixture, request):
    """With "yes" always A, always-"B" scored the share of "no" answers (57.8% on a real export).
    Each answer text now sits at A for about half its questions, and the row records the order."""
    from contrastgen.export.vlmevalkit import option_swapped

    result, source = request.getfixturevalue(fixture)
    rows = list(build_dataset(result.out, result.names[1]).rows())
    expected = questions(source)
    by_answer: dict[str, list[bool]] = {}
    for row in rows:
        qid = row["question_key"][2:]
        question, answer, dataset = expected[qid]
        canonical = mcq_options(question, answer, dataset)
        swapped = option_swapped(qid)
        assert row["option_order"] == ("swapped" if swapped else "kept")
        assert (str(row["A"]), str(row["B"])) == (canonical[::-1] if swapped else canonical)
        by_answer.setdefault(answer, []).append(row["answer"] == "A")
    for answer in ("yes", "no"):
        at_a = by_answer.get(answer, [])
        if len(at_a) >= 40:
            assert 0.3 < sum(at_a) / len(at_a) < 0.7, answer
    assert sum(len(v) for v in by_answer.values()) == len(rows)


def test_another_seed_orders_the_options_otherwise():
    from contrastgen.export.vlmevalkit import option_swapped

    ids = [f"q{i}" for i in range(200)]
    assert [option_swapped(q) for q in ids] == [option_swapped(q, 0) for q in ids]
    assert [option_swapped(q, 0) for q in ids] != [option_swapped(q, 1) for q in ids]
    assert 60 < sum(option_swapped(q) for q in ids) < 140


def test_an_mcq_file_scores_the_oracle_100_percent_as_a_partial_run(gqa_tsv, tmp_path):
    """The MCQ file holds only the questions with two options: the headline used to count the
    rest wrong (the oracle at 66%); it is a partial run, scored on the sets it holds in full."""
    from contrastgen.evaluation.contrast import evaluate_contrast
    from contrastgen.evaluation.predictions import load_predictions

    result, source = gqa_tsv
    mcq = build_dataset(result.out, result.names[1])
    gold = dict(zip(mcq.data["index"], mcq.data["answer"], strict=True))
    path = tmp_path / f"oracle_{mcq.name}_exact_matching_result.xlsx"
    exact_matching(prediction_frame(mcq, gold)).to_excel(path, index=False)
    report = evaluate_contrast(load_contrast_records(source), {"oracle": load_predictions(path)}, n_boot=0)
    overall = report["results"]["oracle"][str(max(report["settings"]["ks"]))]["overall"]
    assert overall["consistency"]["value"] == overall["original_accuracy"]["value"] == 1.0
    cov = report["coverage"]["oracle"]
    assert cov["partial"] and cov["missing"] > 0 and 0 < cov["sets_scored"] < cov["sets"]
    assert overall["n_sets"] == cov["sets_scored"]


def test_the_readmes_name_the_source_and_quote_the_patterns(gqa_with_image_files, tmp_path):
    from contrastgen.export.lmms_eval import export_lmms_eval

    pytest.importorskip("datasets")
    for export in (export_lmms_eval, export_vlmevalkit):
        out = export(gqa_with_image_files, tmp_path / export.__name__, name="gqa_sample").out
        text = (out / "README.md").read_text()
        assert "CONTRAST_DIR" not in text and f"--contrast {gqa_with_image_files.absolute()}" in text
        assert "-p model='results/*/" in text or "-p vqa='outputs/MODEL/T*/" in text
    assert "filelock<4" in (tmp_path / "export_lmms_eval" / "README.md").read_text()
