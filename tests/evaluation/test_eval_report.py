"""Report files: present, parseable, byte-identical across runs; terminal tables render."""

from __future__ import annotations

import csv
import io
import json

from evaluation_cases import MODEL, records
from rich.console import Console

from contrastgen.evaluation.contrast import evaluate_contrast
from contrastgen.evaluation.gqa_metrics import evaluate_gqa
from contrastgen.evaluation.report import (
    render_csv,
    render_markdown,
    render_report,
    render_table,
    write_report,
)

FILES = {"report.json", "report.csv", "report.md", "accuracy_by_template.png",
         "accuracy_by_template.svg", "consistency_by_k.png", "consistency_by_k.svg"}


def contrast_report(**kwargs):
    gold = {r["question_id"]: r["answer"] for r in records()}
    gold.update({p["question_id"]: p["answer"] for r in records() for p in r["perturbations"]})
    return evaluate_contrast(records(), {"m": MODEL, "oracle": gold}, n_boot=50, **kwargs)


def test_files_are_written_and_byte_identical(tmp_path):
    report = contrast_report(examples=2)
    assert set(write_report(report, tmp_path / "a")) == FILES
    write_report(contrast_report(examples=2), tmp_path / "b")
    for name in FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert json.loads((tmp_path / "a" / "report.json").read_text()) == report


def test_csv_long_format_has_a_row_per_model_k_group_metric():
    report = contrast_report()
    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    # per model and k: overall + 2 templates + question types + kinds + directions, 4 metrics each
    k3 = report["results"]["m"]["3"]
    assert k3["by_question_type"]  # the test records carry no types: one group, "unknown"
    groups = 1 + sum(len(k3[b]) for b in ("by_template", "by_question_type", "by_kind", "by_direction"))
    assert sum(r["model"] == "m" and r["k"] == "3" for r in rows) == 4 * groups
    cons = next(r for r in rows if (r["model"], r["k"], r["breakdown"], r["metric"])
                == ("m", "3", "overall", "consistency"))
    assert abs(float(cons["value"]) - 1 / 3) < 1e-6 and cons["n"] == "3"


def test_markdown_has_paper_tables_oracle_and_examples():
    md = render_markdown(contrast_report(examples=1))
    for needle in ("Tables 2 and 4", "Table 3", "Table 9", "By change kind", "yes->no",
                   "Annotation noise", "Failing contrast sets: m", "evidence:"):
        assert needle in md, needle


def test_terminal_tables_show_every_model_and_template():
    console = Console(record=True, width=160)
    console.print(render_report(contrast_report(examples=1)))
    text = console.export_text()
    for needle in ("m", "oracle", "near", "color", "overall", "33.3", "Oracle 'oracle'",
                   "Failing contrast sets: m (1 sampled)", "object: a -> b"):
        assert needle in text, needle
    assert render_table(contrast_report()).row_count == 3  # two templates + overall


def test_gqa_report_files(tmp_path):
    questions = {"1": {"question": "Is it red?", "answer": "yes", "imageId": "1",
                       "types": {"structural": "verify", "semantic": "attr"}}}
    report = evaluate_gqa(questions, {"m": {"1": "yes"}}, n_boot=10)
    assert set(write_report(report, tmp_path)) == {
        "report.json", "report.csv", "report.md", "gqa_accuracy_by_type.png",
        "gqa_accuracy_by_type.svg"}
    console = Console(record=True, width=120)
    console.print(render_table(report))
    assert "verify" in console.export_text()
