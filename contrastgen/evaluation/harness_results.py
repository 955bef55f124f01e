"""Predictions from the files lmms-eval and VLMEvalKit write, for `contrastgen evaluate -p`.

A model run through a harness should be scored without glue code. Both harnesses run the tasks
`contrastgen export` writes, and both write the exported question id back out:

- lmms-eval's `--log_samples` file, `<date>_samples_<task>.jsonl`: one line per question; the
  model's answer is `filtered_resps` and the question id is in every metric value our task's
  `process_results` returns (the line holds the doc itself only up to lmms-eval 0.3). The answer's
  shape changed over versions: `[[str]]` or `[str]` up to 0.6, a plain string from 0.7.
- VLMEvalKit's prediction file `<model>_<dataset>.xlsx` (or `.tsv`, `.json`, as `PRED_FORMAT`
  says) and the MCQ result file `<model>_<dataset>_<judge>_result.xlsx`: the exported TSV's
  columns plus `prediction` (and, after judging, `hit`). The id is `question_key`. A two-option
  row's answer is its option's text: the option VLMEvalKit's judge chose when the file has `hit`,
  else the option letter (or option text) the prediction names.

Answers are returned raw, as `predictions.load_predictions` returns every format's; the
evaluator normalises them. A question answered twice with two different answers is refused. A
request the harness gave up on (lmms-eval's `[LMMS_EVAL_REQUEST_FAILED ...]`, VLMEvalKit's
`Failed to obtain answer`) was asked and not answered: it is read as an empty answer, which the
evaluator counts wrong and reports as `empty`, as the exported lmms-eval task counts it (a
question the file does not hold at all was not asked: a partial run). A judged MCQ row whose
reply names no option is read as an empty answer too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from contrastgen.answers import normalize_answer
from contrastgen.errors import InputError
from contrastgen.files.csv_reading import csv_rows

KEY_PREFIX = "q:"  # the VLMEvalKit export's `question_key`: "q:" and the question id
VLMEVALKIT_SUFFIXES = (".xlsx", ".tsv", ".csv")
LMMS_EVAL_FAILED = "[LMMS_EVAL_REQUEST_FAILED"
VLMEVALKIT_FAILED = "Failed to obtain answer"
_OPTION_SPLIT = re.compile(r"[\s.()\[\],:;!*#{}]+")


def is_lmms_eval_sample(record: Any) -> bool:
    """Whether a JSON line is a line of lmms-eval's `--log_samples` file."""
    return isinstance(record, Mapping) and "doc_id" in record and "filtered_resps" in record


def is_lmms_eval_results(data: Any) -> bool:
    """Whether a JSON document is lmms-eval's aggregated `<date>_results.json` (per-task
    figures, no answers), which users pass by mistake for the samples file beside it."""
    return isinstance(data, Mapping) and "results" in data and ("configs" in data or "versions" in data)


LMMS_EVAL_RESULTS_HINT = (
    "this is lmms-eval's results file (the task's figures, not the model's answers); give the "
    "samples file written beside it with --log_samples: <date>_samples_<task>.jsonl, e.g. "
    "-p NAME='results/*/*_samples_contrast_NAME.jsonl'")


def is_vlmevalkit_record(record: Any) -> bool:
    """Whether a row (a dict) comes from a VLMEvalKit prediction of a contrastgen export."""
    return isinstance(record, Mapping) and "question_key" in record and "prediction" in record


def _add(out: dict[str, str], where: dict[str, str], qid: str, answer: str, place: str,
         path: str) -> None:
    if qid in out and out[qid] != answer:
        raise InputError(f"question answered twice, {out[qid]!r} ({where[qid]}) and {answer!r} "
                         f"({place}): are two runs in one file?", path=path, record=f"question {qid}")
    out[qid], where[qid] = answer, place


def _response(value: Any, *, path: str, record: str) -> str:
    """The model's answer from `filtered_resps`: a string (0.7 on), `[str]` (0.4 to 0.6) or
    `[[str]]`; a question asked several times (`repeats`) is scored on its first answer, as the
    task's `process_results` scores it."""
    while isinstance(value, list):
        if not value:
            return ""
        value = value[0]
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError("'filtered_resps' is not a model's text answer", path=path, record=record)
    return value


def _sample_question_id(sample: Mapping[str, Any]) -> str | None:
    """The exported question id: in each metric value our task returns, or in the doc (0.3)."""
    for value in sample.values():
        if isinstance(value, Mapping) and "question_id" in value and "contrast_ids" in value:
            return str(value["question_id"])
    doc = sample.get("doc")
    if isinstance(doc, Mapping) and "question_id" in doc:
        return str(doc["question_id"])
    return None


def lmms_eval_samples(samples: Iterable[Any], *, path: str) -> dict[str, str]:
    """Raw answers by question id from the lines of an lmms-eval samples file."""
    out: dict[str, str] = {}
    where: dict[str, str] = {}
    seen_docs: set[Any] = set()
    for line, sample in enumerate(samples, 1):
        record = f"line {line}"
        if not is_lmms_eval_sample(sample):
            raise InputError("not a line of lmms-eval's --log_samples file (no 'doc_id' and "
                             "'filtered_resps')", path=path, record=record)
        doc_id = sample["doc_id"]
        if isinstance(doc_id, (list, dict)) or doc_id in seen_docs:
            raise InputError(f"doc {doc_id!r} appears twice: are two runs in one file?", path=path,
                             record=record)
        seen_docs.add(doc_id)
        qid = _sample_question_id(sample)
        if qid is None:
            raise InputError("the line names no question id: is this the samples file of a task "
                             "`contrastgen export --format lmms-eval` wrote?", path=path, record=record)
        answer = _response(sample["filtered_resps"], path=path, record=record)
        _add(out, where, qid, "" if answer.startswith(LMMS_EVAL_FAILED) else answer, f"doc {doc_id}", path)
    if not out:
        raise InputError("no samples found", path=path)
    return out


def _text(value: Any) -> str:
    """A cell as text: empty for a missing cell (pandas' NaN, None)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def option_letter(prediction: str, options: Mapping[str, str]) -> str | None:
    """The option a free-text prediction names: the one option letter among its words, else the
    one option whose text it is; None when it names none or several."""
    letters = {word for word in _OPTION_SPLIT.split(prediction.strip()) if word in options}
    if len(letters) == 1:
        return letters.pop()
    said = normalize_answer(prediction)
    by_text = [letter for letter, text in options.items() if normalize_answer(text) == said]
    return by_text[0] if len(by_text) == 1 else None


def _mcq_answer(row: Mapping[str, Any], *, path: str, record: str) -> str:
    """A two-option row's answer as the option's text (empty when no option can be read)."""
    options = {letter: _text(row.get(letter)) for letter in ("A", "B") if _text(row.get(letter))}
    gold = _text(row.get("answer")).strip()
    prediction = _text(row.get("prediction"))
    chosen = option_letter(prediction, options)
    if "hit" in row and _text(row.get("hit")) != "":
        try:
            hit = float(_text(row["hit"]))
        except ValueError:
            hit = -1.0
        if hit not in (0.0, 1.0):
            raise InputError(f"'hit' is {row['hit']!r}, not 0 or 1", path=path, record=record)
        if gold not in options:
            raise InputError(f"'answer' is {gold!r}, not one of the options {sorted(options)}",
                             path=path, record=record)
        if hit == 1.0:  # the judge's verdict stands, whatever the text looks like
            return options[gold]
        return options[chosen] if chosen is not None and chosen != gold else ""
    return options[chosen] if chosen is not None else prediction


def vlmevalkit_rows(rows: Iterable[Mapping[str, Any]], *, path: str) -> dict[str, str]:
    """Raw answers by question id from the rows of a VLMEvalKit prediction or result file."""
    out: dict[str, str] = {}
    where: dict[str, str] = {}
    for i, row in enumerate(rows):
        record = f"row {i + 1}"
        if not is_vlmevalkit_record(row):
            raise InputError("row has no 'question_key' and 'prediction': is this VLMEvalKit's "
                             "prediction file of a `contrastgen export --format vlmevalkit` dataset?",
                             path=path, record=record)
        key = _text(row["question_key"])
        if not key.startswith(KEY_PREFIX):
            raise InputError(f"'question_key' {key!r} does not start with {KEY_PREFIX!r}", path=path,
                             record=record)
        qid = key[len(KEY_PREFIX):]
        is_mcq = _text(row.get("A")) != "" and _text(row.get("B")) != ""
        if VLMEVALKIT_FAILED in _text(row["prediction"]):
            answer = ""
        elif is_mcq:
            answer = _mcq_answer(row, path=path, record=f"question {qid}")
        else:
            answer = _text(row["prediction"])
        _add(out, where, qid, answer, record, path)
    if not out:
        raise InputError("no predictions found", path=path)
    return out


def _lower_columns(columns: Iterable[str]) -> list[str]:
    # VLMEvalKit's result file lower-cases every column but the option letters
    return [c if len(c) == 1 and c.isupper() else c.lower() for c in map(str, columns)]


def _text_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a .tsv or .csv, through the project's CSV reader. Why not pandas here: it fills
    the missing cells of a row cut short with empty text, so a file cut in half would score its
    last question as answered with nothing; a row with fewer or more cells than the header is
    refused instead."""
    if not path.is_file():
        raise InputError("file not found", path=str(path))
    with csv_rows(path, delimiter="\t" if path.suffix == ".tsv" else ",") as reader:
        columns = _lower_columns(reader.fieldnames or ())
        for row in reader:
            cells = list(row.values())
            if None in row or None in cells:
                raise InputError(f"row has {'more' if None in row else 'fewer'} cells than the header "
                                 "(is the file cut short or hand-edited?)", path=str(path),
                                 record=f"line {reader.line_num}")
            yield dict(zip(columns, cells, strict=True))


def _frame_rows(path: Path) -> Iterator[dict[str, Any]]:
    if path.suffix != ".xlsx":
        return _text_rows(path)
    try:
        import pandas as pd
    except ImportError:
        raise InputError("reading VLMEvalKit's files needs pandas: pip install 'contrastgen[harness]'") from None
    try:
        frame = pd.read_excel(path, dtype=str, keep_default_na=False)
    except ImportError as exc:
        raise InputError(f"reading .xlsx needs openpyxl ({exc}): pip install 'contrastgen[harness]'",
                         path=str(path)) from None
    except FileNotFoundError:
        raise InputError("file not found", path=str(path)) from None
    except (ValueError, OSError) as exc:  # pandas' parser errors are ValueErrors
        raise InputError(f"not a readable {path.suffix[1:]} table ({exc})", path=str(path)) from None
    frame.columns = _lower_columns(frame.columns)
    return iter(frame.to_dict("records"))


def load_vlmevalkit_predictions(path: str | os.PathLike[str]) -> dict[str, str]:
    """Raw answers by question id from a VLMEvalKit .xlsx, .tsv or .csv prediction/result file."""
    p = Path(path)
    return vlmevalkit_rows(_frame_rows(p), path=str(p))
