"""Reading model predictions in the formats VQA code bases actually write.

Researchers evaluate checkpoints from different code bases: GQA's leaderboard wants
`[{"questionId", "prediction"}]`, LXMERT's `dump_result` writes that for GQA and
`[{"question_id", "answer"}]` for VQA, and quick scripts write a plain `{question_id: answer}` map.
Accepting all of them, and telling a user exactly which record is malformed, saves converting
files by hand (and the silent mistakes that come with it). Answers are returned raw; scorers
normalise them with `contrastgen.answers.normalize_answer` so the file stays what the model said.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contrastgen.errors import InputError
from contrastgen.jsonio import read_json, read_jsonl

# (id key, answer key) pairs of the list formats, in the order they are tried.
_LIST_FORMATS: tuple[tuple[str, str], ...] = (
    ("questionId", "prediction"),  # GQA submission / LXMERT on GQA
    ("question_id", "answer"),  # VQA results / LXMERT on VQA
    ("question_id", "prediction"),
    ("questionId", "answer"),
)


def _as_id(value: Any, *, path: str, record: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputError("question id is not a string or an integer", path=path, record=record)
    return str(value)


def _as_answer(value: Any, *, path: str, record: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError("answer is not a string", path=path, record=record)
    return str(value)


def _from_list(rows: list[Any], path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for i, row in enumerate(rows):
        where = f"entry {i}"
        if not isinstance(row, Mapping):
            raise InputError("prediction entry is not an object", path=path, record=where)
        keys = next(((k, a) for k, a in _LIST_FORMATS if k in row and a in row), None)
        if keys is None:
            raise InputError(
                "prediction entry needs 'questionId' and 'prediction' (GQA) or "
                "'question_id' and 'answer' (VQA/LXMERT)", path=path, record=where)
        qid = _as_id(row[keys[0]], path=path, record=where)
        where = f"question {qid}"
        answer = _as_answer(row[keys[1]], path=path, record=where)
        if qid in out and out[qid] != answer:
            raise InputError("question has two different predictions", path=path, record=where)
        out[qid] = answer
    return out


def _from_map(data: Mapping[str, Any], path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for qid, value in data.items():
        where = f"question {qid}"
        if isinstance(value, Mapping):  # {qid: {"answer": ...}} as some LXMERT forks write
            key = next((k for k in ("prediction", "answer") if k in value), None)
            if key is None:
                raise InputError("prediction object has no 'prediction' or 'answer'", path=path,
                                 record=where)
            value = value[key]
        out[str(qid)] = _as_answer(value, path=path, record=where)
    return out


def parse_predictions(data: Any, *, path: str = "<predictions>") -> dict[str, str]:
    """Turn an already-parsed predictions document into raw answers by question id."""
    if isinstance(data, list):
        out = _from_list(data, path)
    elif isinstance(data, Mapping):
        out = _from_map(data, path)
    else:
        raise InputError("expected a JSON list or object of predictions", path=path)
    if not out:
        raise InputError("no predictions found", path=path)
    return out


def _table_rows(tables: list[Any], path: str) -> list[dict[str, Any]]:
    """The id and answer columns of Arrow tables as rows, for `_from_list`'s column matching."""
    names = set(tables[0].column_names) if tables else set()
    keys = next(((k, a) for k, a in _LIST_FORMATS if k in names and a in names), None)
    if keys is None:
        raise InputError("predictions table needs columns 'questionId' and 'prediction' (GQA) or "
                         f"'question_id' and 'answer' (VQA/LXMERT); it has {sorted(names)}", path=path)
    rows: list[dict[str, Any]] = []
    for t in tables:
        rows.extend(t.select(list(keys)).to_pylist())
    return rows


def _arrow_files(folder: Path) -> list[Path]:
    """A Hugging Face `save_to_disk` folder's Arrow shards (every split), or a folder's Parquet."""
    return sorted(folder.rglob("*.arrow")) or sorted(folder.rglob("*.parquet"))


def _read_table(file: Path) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if file.suffix == ".parquet":
            return pq.read_table(file)
        with pa.memory_map(str(file)) as source:  # `datasets` writes Arrow's streaming format
            return pa.ipc.open_stream(source).read_all()
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"not a readable {file.suffix[1:]} file ({exc})", path=str(file)) from None


def load_predictions(path: str | os.PathLike[str]) -> dict[str, str]:
    """Load predictions from a file or folder: a JSON document (GQA submission, `{qid: answer}`,
    LXMERT or VQA results), JSON lines of the list formats' entries, a Parquet file, or a folder
    holding a Hugging Face dataset (`save_to_disk`) or Parquet files, with the same column names
    as the list formats (`contrastgen export` writes all three shapes); or what a harness wrote
    for a task `contrastgen export` made: lmms-eval's samples log (JSON lines), VLMEvalKit's
    prediction or result file (.xlsx, .tsv, .csv, .json)."""
    from contrastgen.evaluation import harness_results as harness

    p = Path(path)
    if p.suffix in harness.VLMEVALKIT_SUFFIXES:
        return harness.load_vlmevalkit_predictions(p)
    if p.is_dir():
        files = _arrow_files(p)
        if not files:
            raise InputError("folder holds no Hugging Face dataset (*.arrow) or Parquet files", path=str(p))
        return parse_predictions(_table_rows([_read_table(f) for f in files], str(p)), path=str(p))
    if p.suffix == ".parquet":
        if not p.is_file():
            raise InputError("file not found", path=str(p))
        return parse_predictions(_table_rows([_read_table(p)], str(p)), path=str(p))
    if p.suffix == ".jsonl":
        lines = list(read_jsonl(p))
        if lines and harness.is_lmms_eval_sample(lines[0]):
            return harness.lmms_eval_samples(lines, path=str(p))
        return parse_predictions(lines, path=str(p))
    data = read_json(path)
    if harness.is_lmms_eval_results(data):
        raise InputError(harness.LMMS_EVAL_RESULTS_HINT, path=str(p))
    if isinstance(data, list) and data and harness.is_vlmevalkit_record(data[0]):
        return harness.vlmevalkit_rows(data, path=str(p))
    return parse_predictions(data, path=str(p))
