"""`contrastgen evaluate` on what the harnesses write after running an export: lmms-eval's
`--log_samples` file (the line shapes of 0.3, 0.4 to 0.6, and 0.7 on) and VLMEvalKit's prediction
and MCQ result files (.xlsx, .tsv, .json), each giving the figures a GQA submission of the same
answers gives."""

from __future__ import annotations

import hashlib
import json

import pytest
from click.testing import CliRunner
from lmms_eval_emulation import load_task, run, sample_line, write_samples
from vlmevalkit_emulation import build_dataset, dump, exact_matching, prediction_frame

from contrastgen.cli import cli
from contrastgen.errors import InputError
from contrastgen.evaluation.contrast import evaluate_contrast
from contrastgen.evaluation.harness_results import lmms_eval_samples, option_letter, vlmevalkit_rows
from contrastgen.evaluation.predictions import load_predictions
from contrastgen.export.lmms_eval import export_lmms_eval
from contrastgen.export.vlmevalkit import export_vlmevalkit
from contrastgen.records import load_contrast_records

VERSIONS = ("0.3", "0.4", "0.7")


def roll(question_id: str) -> int:
    return int(hashlib.sha256(question_id.encode()).hexdigest(), 16) % 5


def model(doc, text, visuals) -> str:
    """Right three times in five (in a harness's wording), else "yes" or a colour."""
    return {0: "Yes", 1: "red"}.get(roll(doc["question_id"]), f"The {doc['answer']}.")


@pytest.fixture(scope="module")
def harness_runs(gqa_with_image_files, tmp_path_factory):
    pytest.importorskip("datasets", reason="the `datasets` package (extra [harness]) is not installed")
    folder = tmp_path_factory.mktemp("harness_runs")
    task = load_task(export_lmms_eval(gqa_with_image_files, folder / "task", name="gqa").out, folder / "cache")
    lmms = run(task, model, visuals=False)
    answers = {s["doc"]["question_id"]: s["answer"] for s in lmms.samples}
    files = {"gqa": folder / "submission.json"}
    files["gqa"].write_text(json.dumps([{"questionId": q, "prediction": a} for q, a in answers.items()]))
    for version in VERSIONS:
        files[f"lmms-{version}"] = write_samples(folder / f"20260101_000000_samples_contrast_gqa_{version}.jsonl",
                                                 lmms, version)
    tsvs = export_vlmevalkit(gqa_with_image_files, folder / "lmu", name="gqa")
    vqa = build_dataset(tsvs.out, tsvs.names[0])
    by_index = {row["index"]: answers[row["question_key"][2:]] for row in vqa.rows()}
    for suffix in ("xlsx", "tsv", "json"):
        files[f"vlm-{suffix}"] = dump(prediction_frame(vqa, by_index), folder / f"fake-vlm_{vqa.name}.{suffix}")
    return files, answers, gqa_with_image_files, tsvs


def test_every_harness_file_gives_the_answers_of_the_run(harness_runs):
    files, answers, _, _ = harness_runs
    for name, path in files.items():
        assert load_predictions(path) == answers, name


def test_evaluate_reports_the_same_figures_as_from_a_gqa_submission(harness_runs):
    files, _, source, _ = harness_runs
    records = load_contrast_records(source)
    predictions = {name: load_predictions(path) for name, path in files.items()}
    report = evaluate_contrast(records, predictions, n_boot=200, seed=1)
    base = report["results"]["gqa"]
    assert base["1"]["overall"]["consistency"]["value"] < 1
    for name in files:
        assert report["results"][name] == base, name
        assert report["coverage"][name] == report["coverage"]["gqa"]
        assert report["invariance"][name] == report["invariance"]["gqa"]


def test_the_command_line_reads_them_side_by_side(harness_runs, tmp_path):
    files, _, source, _ = harness_runs
    args = ["evaluate", "--contrast", str(source), "--n-boot", "0", "--out", str(tmp_path / "report")]
    for name in ("gqa", "lmms-0.7", "vlm-xlsx"):
        args += ["-p", f"{name}={files[name]}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["results"]["lmms-0.7"] == report["results"]["gqa"] == report["results"]["vlm-xlsx"]


def test_an_mcq_result_file_scores_the_option_the_judge_chose(harness_runs, tmp_path):
    files, _, source, tsvs = harness_runs
    mcq = build_dataset(tsvs.out, tsvs.names[1])
    letters, chosen = {}, {}
    for row in mcq.rows():
        gold = row["answer"]
        other = "B" if gold == "A" else "A"
        said = {0: other, 1: f"The answer is ({other})."}.get(roll(row["question_key"]), f"{gold}. {row[gold]}")
        letters[row["index"]] = said
        chosen[row["question_key"][2:]] = str(row[gold] if roll(row["question_key"]) > 1 else row[other])
    predictions = prediction_frame(mcq, letters)
    result = dump(exact_matching(predictions), tmp_path / f"fake-vlm_{mcq.name}_exact_matching_result.xlsx")
    raw = dump(predictions, tmp_path / f"fake-vlm_{mcq.name}.xlsx")
    assert load_predictions(result) == chosen == load_predictions(raw)
    submission = tmp_path / "mcq_submission.json"
    submission.write_text(json.dumps(chosen))
    records = load_contrast_records(source)
    report = evaluate_contrast(records, {"gqa": load_predictions(submission), "mcq": load_predictions(result)},
                               n_boot=0)
    assert report["results"]["mcq"] == report["results"]["gqa"]


def test_the_judge_s_hit_stands_over_the_prediction_s_words():
    row = {"question_key": "q:7", "prediction": "I would say B", "A": "yes", "B": "no", "answer": "A", "hit": "1"}
    assert vlmevalkit_rows([row], path="r.xlsx") == {"7": "yes"}
    assert vlmevalkit_rows([{**row, "hit": "0.0", "prediction": "A"}], path="r.xlsx") == {"7": ""}
    assert vlmevalkit_rows([{**row, "hit": 0, "prediction": "B"}], path="r.xlsx") == {"7": "no"}
    with pytest.raises(InputError, match="'hit'"):
        vlmevalkit_rows([{**row, "hit": "yes"}], path="r.xlsx")


def test_option_letters_are_read_as_vlmevalkit_s_heuristics_read_them():
    options = {"A": "left", "B": "right"}
    assert option_letter("B", options) == "B"
    assert option_letter("(A) left", options) == "A"
    assert option_letter("Right.", options) == "B"
    assert option_letter("A or B", options) is None
    assert option_letter("up", options) is None


@pytest.mark.parametrize("version", VERSIONS)
def test_each_version_s_line_shape_is_read(version):
    sample = {"doc_id": 4, "doc": {"question_id": "q1"}, "input": "Is it?", "answer": " no ", "target": "no",
              "metrics": {"consistency": {"question_id": "q1", "role": "original", "contrast_ids": ["q1:t"],
                                          "prediction": "no", "correct": 1}}}
    line = sample_line(sample, version)
    assert lmms_eval_samples([line], path="s.jsonl") == {"q1": " no "}
    if version != "0.3":
        assert "doc" not in line


@pytest.mark.parametrize("value,answer", [("yes", "yes"), (["yes"], "yes"), ([["yes", "no"]], "yes"),
                                           ([], ""), (None, "")])
def test_filtered_resps_of_any_shape_give_the_first_answer(value, answer):
    line = {"doc_id": 0, "filtered_resps": value, "doc": {"question_id": "q"}}
    assert lmms_eval_samples([line], path="s.jsonl") == {"q": answer}


def test_two_runs_in_one_samples_file_are_refused(harness_runs):
    files, _, _, _ = harness_runs
    lines = [json.loads(line) for line in files["lmms-0.7"].read_text().splitlines()]
    with pytest.raises(InputError, match="doc 0 appears twice"):
        lmms_eval_samples(lines + lines[:1], path="s.jsonl")


def test_a_samples_line_of_another_task_is_refused_naming_the_line():
    with pytest.raises(InputError, match="line 2.*names no question id"):
        lmms_eval_samples([{"doc_id": 0, "filtered_resps": "a", "doc": {"question_id": "q"}},
                           {"doc_id": 1, "filtered_resps": "b", "exact_match": 1.0}], path="s.jsonl")


def test_a_question_answered_twice_differently_is_refused():
    rows = [{"question_key": "q:9", "prediction": "yes"}, {"question_key": "q:9", "prediction": "no"}]
    with pytest.raises(InputError, match="question 9.*answered twice"):
        vlmevalkit_rows(rows, path="p.tsv")
    with pytest.raises(InputError, match="does not start with 'q:'"):
        vlmevalkit_rows([{"question_key": "9", "prediction": "yes"}], path="p.tsv")


def test_an_unreadable_prediction_table_is_a_sentence(tmp_path):
    bad = tmp_path / "p.xlsx"
    bad.write_bytes(b"not a workbook")
    with pytest.raises(InputError, match="not a readable xlsx"):
        load_predictions(bad)
    with pytest.raises(InputError, match="file not found"):
        load_predictions(tmp_path / "absent.tsv")


@pytest.mark.parametrize("cut", [0.5, 0.9])
def test_a_prediction_table_cut_short_is_refused_naming_the_line(harness_runs, tmp_path, cut):
    # a copy that stopped part-way: its last row must not be read as an empty answer
    files, _, _, _ = harness_runs
    text = files["vlm-tsv"].read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    last = lines[-1].rstrip("\n")
    tabs = [i for i, ch in enumerate(last) if ch == "\t"]
    cut_at = tabs[int(len(tabs) * cut) - 1]  # between two cells, so the row just has fewer of them
    short = tmp_path / files["vlm-tsv"].name
    short.write_text("".join(lines[:-1]) + last[:cut_at] + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"record line {len(lines)}: row has fewer cells than the header"):
        load_predictions(short)


def test_a_request_the_harness_gave_up_on_is_no_answer(tmp_path):
    """Asked and not answered: an empty answer, which evaluate counts wrong (not a question left
    unasked, which would make the run partial); and in the task, two failures are not an answer
    kept."""
    failed = "[LMMS_EVAL_REQUEST_FAILED after 5 retries] Connection error."
    lines = [{"doc_id": 0, "filtered_resps": failed, "doc": {"question_id": "a"}},
             {"doc_id": 1, "filtered_resps": "yes", "doc": {"question_id": "b"}}]
    assert lmms_eval_samples(lines, path="s.jsonl") == {"a": "", "b": "yes"}
    rows = [{"question_key": "q:a", "prediction": "Failed to obtain answer via API. "},
            {"question_key": "q:b", "prediction": "no"}]
    assert vlmevalkit_rows(rows, path="p.xlsx") == {"a": "", "b": "no"}
    from contrastgen.export import lmms_eval_task as utils

    doc = {"question_id": "a", "role": "original", "contrast_ids": ["a:t"], "answer": "yes",
           "templates": [], "edit_kinds": [], "question_type": "t"}
    original = utils.process_results(doc, [failed])["invariance_consistency"]
    invariance = utils.process_results({**doc, "question_id": "a_p1", "role": "invariance"}, [failed])
    assert original["correct"] == 0 and original["prediction"] is None
    assert utils.invariance_consistency([original, invariance["invariance_consistency"]]) == 0.0


def test_a_quoted_pattern_after_name_is_expanded_as_the_readmes_write_it(harness_runs, tmp_path):
    """`-p m='results/*/x_*.jsonl'`: the shell expands no pattern after `NAME=`; evaluate does."""
    files, _, source, _ = harness_runs
    run_dir = tmp_path / "results" / "llava__model"
    run_dir.mkdir(parents=True)
    (run_dir / files["lmms-0.7"].name).write_bytes(files["lmms-0.7"].read_bytes())
    pattern = f"{tmp_path}/results/*/*_samples_contrast_gqa_*.jsonl"
    args = ["evaluate", "--contrast", str(source), "--n-boot", "0", "--out", str(tmp_path / "report"),
            "-p", f"m={pattern}", "-p", f"gqa={files['gqa']}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["inputs"]["predictions"]["m"] == str(run_dir / files["lmms-0.7"].name)
    assert report["results"]["m"] == report["results"]["gqa"]
    # a second run beside the first: refused, both named, rather than one picked
    (run_dir / "20260102_000000_samples_contrast_gqa_0.7.jsonl").write_bytes(files["lmms-0.7"].read_bytes())
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and "matches 2 files" in result.output
    assert "20260102_000000_samples" in result.output and files["lmms-0.7"].name in result.output
    result = CliRunner().invoke(cli, [*args[:-4], "-p", f"m={tmp_path}/nowhere/*.jsonl"])
    assert result.exit_code == 2 and "no file matches this pattern" in result.output


def test_lmms_eval_s_results_file_is_refused_naming_the_samples_file(tmp_path):
    results = tmp_path / "20260101_000000_results.json"
    results.write_text(json.dumps({"results": {"contrast_gqa": {"alias": "contrast_gqa", "consistency,none": 0.5}},
                                   "configs": {}, "versions": {"contrast_gqa": 1.0}, "n-shot": {}}))
    with pytest.raises(InputError, match=r"lmms-eval's results file.*_samples_<task>\.jsonl"):
        load_predictions(results)


def test_evaluate_help_names_the_harness_files():
    result = CliRunner().invoke(cli, ["evaluate", "--help"], terminal_width=200)
    text = " ".join(result.output.split())
    assert "--log_samples" in text and "VLMEvalKit" in text and "_results.json" in text
    assert "glob" in text and "partial" in text
