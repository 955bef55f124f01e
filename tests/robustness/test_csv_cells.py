"""No CSV the project writes holds a cell a spreadsheet would run as a formula; what it writes,
it reads back as written; the HIT layout shows workers the text as it was."""

from __future__ import annotations

import csv
import io
import json
import re

from hypothesis import given
from hypothesis import strategies as st
from robustness_helpers import copy_of, invoke

from contrastgen.files.csv_cells import neutral, restore

FORMULA_START = tuple("=+-@\t\r")
PAYLOAD = '=HYPERLINK("http://example.org/x","click")'


@given(st.text(alphabet=st.sampled_from(list("=+-@\t\r'a1. e")), max_size=8) | st.text())
def test_a_neutral_cell_never_starts_a_formula_and_restores_to_its_text(text):
    cell = neutral(text)
    assert restore(cell) == text
    if cell.startswith(FORMULA_START):  # only numbers keep their sign
        assert re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", cell)


def test_numbers_and_ordinary_words_are_written_as_they_are():
    for text in ("-0.5", "+3", "1e-05", "yes", "left", "", "a=b"):
        assert neutral(text) == text
    assert neutral(PAYLOAD) == "'" + PAYLOAD
    assert neutral("-1+2") == "'-1+2"
    assert neutral("'=x") == "''=x"


def _rows(path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_a_formula_in_a_question_is_neutral_in_every_crowd_csv_and_read_back_as_written(tmp_path, generated):
    data = copy_of(generated, tmp_path / "gen")
    records = [json.loads(line) for line in (data / "contrast_sets.jsonl").read_text().splitlines()]
    for r in records:
        r["question"] = PAYLOAD + " " + r["question"]
        for p in r["perturbations"]:
            p["question"] = "@SUM(1+1) " + p["question"]
    (data / "contrast_sets.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    hits = tmp_path / "hits"
    assert invoke("mturk", "export", "--contrast", data, "--images-base-url", "https://example.org/i", "--sample",
                  "8", "--out", hits).exit_code == 0
    batch = _rows(hits / "upload" / "batch_input.csv")
    questions = [v for row in batch for k, v in row.items() if k.endswith("_question")]
    assert questions and all(not q.startswith(FORMULA_START) for q in questions)
    assert any(q.startswith("'" + PAYLOAD) for q in questions)
    results = tmp_path / "results.csv"
    assert invoke("mturk", "simulate", hits, "--out", results).exit_code == 0
    # ids that begin like formulas, written as this project writes every CSV cell
    rows = _rows(results)
    for row in rows:
        row["WorkerId"], row["AssignmentId"] = "=" + row["WorkerId"], "-" + row["AssignmentId"]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows({k: neutral(v) for k, v in row.items()} for row in rows)
    results.write_text(buf.getvalue(), encoding="utf-8")
    cells = [v for row in _rows(results) for v in row.values()]
    assert not any(v.startswith(FORMULA_START) for v in cells)
    report = tmp_path / "report"
    assert invoke("mturk", "ingest", "--manifest", hits / "manifest.json", "--results", results, "--out",
                  report).exit_code == 0
    workers = [json.loads(line) for line in (report / "workers.jsonl").read_text().splitlines()]
    assert workers and all(w["worker_id"].startswith("=") for w in workers)  # read back as written


def test_the_hit_layout_shows_the_question_without_the_guarding_apostrophe(tmp_path, generated):
    hits = tmp_path / "hits"
    assert invoke("mturk", "export", "--contrast", generated, "--images-base-url", "https://example.org/i",
                  "--sample", "4", "--out", hits).exit_code == 0
    layout = (hits / "upload" / "hit_layout.html").read_text()
    pattern = re.search(r"nodeValue\.replace\(/(.+?)/, function", layout).group(1)
    shown = re.compile(pattern.replace("\\-", "-"))
    for cell, text in (("1. '" + PAYLOAD, "1. " + PAYLOAD), ("2. ''=x", "2. '=x"), ("3. 'plain", "3. 'plain"),
                       ("4. Is it red?", "4. Is it red?")):
        assert shown.sub(lambda m: m.group(1), cell) == text


def test_the_evaluation_csv_neutralises_model_names_and_keeps_numbers(tmp_path, generated):
    # every question of the set answered: originals and perturbations alike
    answers = {}
    for line in (generated / "contrast_sets.jsonl").read_text().splitlines():
        rec = json.loads(line)
        answers[rec["question_id"]] = rec["answer"]
        answers.update({p["question_id"]: p["answer"] for p in rec["perturbations"]})
    predictions = tmp_path / "p.json"
    predictions.write_text(json.dumps(answers))
    result = invoke("evaluate", "--contrast", generated, "-p", f"@cmd|calc={predictions}", "--n-boot", "0",
                    "--out", tmp_path / "report")
    assert result.exit_code == 0, result.output
    rows = _rows(tmp_path / "report" / "report.csv")
    assert rows and {r["model"] for r in rows} == {"'@cmd|calc"}
    assert not any(v.startswith(FORMULA_START[:1] + FORMULA_START[2:]) for r in rows for v in r.values())
