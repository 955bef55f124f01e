"""`contrastgen export --format lmms-eval`: a task folder lmms-eval runs as it stands.

    python -m lmms_eval --model ... --include_path OUT --tasks contrast_NAME

The folder holds `contrast_NAME.yaml` (the task), `utils.py` (its functions: a copy of
`lmms_eval_task.py` with contrastgen's answer tables written in), `data/test.parquet` (one row per
question) and a README saying how to run it.

Why each choice (the format is described in docs/harnesses.md):
- The task is named `contrast_<name>`: lmms-eval indexes its own tasks first and a local task of
  the same name is silently shadowed; no built-in task starts with `contrast`.
- `data_files` is an absolute path: lmms-eval up to 0.7.2 resolves a relative one against the
  working directory, not the YAML's folder.
- The Parquet file is written with `datasets`' feature metadata, so an embedded image loads as a
  PIL image (plain Arrow bytes would load as a dict). Identical images in a row group are stored
  once (Parquet's dictionary encoding), so embedding does not multiply the file by the number of
  questions per image.
- The metric names in the YAML are exactly the keys `process_results` returns; each metric's
  aggregation rebuilds the contrast sets from explicit ids.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from contrastgen.answers import number_words, vqa_rules_data
from contrastgen.errors import InputError
from contrastgen.export import lmms_eval_task as task_functions
from contrastgen.export.harness import (
    INVARIANCE,
    HarnessExport,
    HarnessQuestion,
    check_name,
    harness_progress,
    harness_questions,
    has_groups,
)
from contrastgen.export.images import ImageSource
from contrastgen.files.atomic import atomic_dir, atomic_file
from contrastgen.jsonio import write_text
from contrastgen.resources import package_resource
from contrastgen.terminal.progress import Advance

TASK_PREFIX = "contrast_"
SPLIT = "test"
DATA_FILE = f"data/{SPLIT}.parquet"
# GQA's prompt in lmms-eval's own `gqa` task: the default, and Qwen-VL's variant.
PROMPTS = {"default": {"pre_prompt": "", "post_prompt": "\nAnswer the question using a single word or phrase."},
           "qwen_vl": {"pre_prompt": "", "post_prompt": " Answer:"}}
GENERATION = {"max_new_tokens": 16, "temperature": 0, "top_p": 1.0, "num_beams": 1, "do_sample": False}
# Rows per batch and Parquet row group, and the image bytes a batch may hold: memory holds one
# batch (its images once per row, as Arrow has them before Parquet's dictionary encoding).
BATCH = 1_000
BATCH_IMAGE_BYTES = 64 << 20
_NUMBERS_LINE = "NUMBER_WORDS: dict[str, str] = {}\n"
_VQA_LINE = "VQA_RULES: dict = {}\n"
_QUOTED_FUNCTION = re.compile(r"!function '(utils\.[A-Za-z_][A-Za-z0-9_]*)'")


class _Function(str):
    """A YAML scalar lmms-eval resolves to a function of the task's utils.py."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Function, lambda dumper, value: dumper.represent_scalar("!function", str(value)))


def _features(embed: bool, groups: bool = False) -> Any:
    try:
        import datasets
    except ImportError:
        raise InputError("--format lmms-eval needs the Hugging Face `datasets` package: "
                         "pip install 'contrastgen[harness]'") from None
    text = datasets.Value("string")
    texts = datasets.Sequence(text) if not hasattr(datasets, "List") else datasets.List(text)
    columns = {"question_id": text, "image_id": text, "dataset": text, "question": text,
               "answer": text, "role": text, "contrast_ids": texts, "templates": texts,
               "question_type": text, "edit_kinds": texts, "rank": datasets.Value("int32"),
               "set_sizes": text}
    if groups:  # `generate --groups`: the two-image groups' cells and ids (harness.py)
        columns.update({"groups": texts, "group_id": text})
    columns["image" if embed else "image_path"] = datasets.Image() if embed else text
    return datasets.Features(columns)


class _Tally:
    """What the YAML's metric list and the README need, counted as rows stream past."""

    def __init__(self) -> None:
        self.questions = 0
        self.sets: set[str] = set()
        self.values: dict[str, set[str]] = {dimension: set() for dimension in task_functions.DIMENSIONS}
        self.invariance = False
        self.groups: set[str] = set()

    def add(self, q: HarnessQuestion, row: dict[str, Any]) -> None:
        self.questions += 1
        self.sets.update(q.contrast_ids)
        self.invariance |= q.role == INVARIANCE
        self.groups.update(g.rpartition(":")[0] for g in q.groups)
        for dimension, value in task_functions.breakdowns(row):
            self.values[dimension].add(value)


def _row(q: HarnessQuestion, images: ImageSource, groups: bool) -> dict[str, Any]:
    path = images.path(q.image_id, q.image_file, q.question_id)
    row: dict[str, Any] = {
        "question_id": q.question_id, "image_id": q.image_id, "dataset": q.dataset,
        "question": q.question, "answer": q.answer, "role": q.role,
        "contrast_ids": list(q.contrast_ids), "templates": list(q.templates),
        "question_type": q.question_type, "edit_kinds": list(q.edit_kinds), "rank": q.rank,
        "set_sizes": q.set_sizes}
    if groups:
        row.update({"groups": list(q.groups), "group_id": q.group_id})
    if images.embeds:
        row["image"] = {"bytes": images.read(path, q.question_id), "path": path.name}
    else:
        images.check(path, q.question_id)
        row["image_path"] = str(path)
    return row


def _batches(source: Path, images: ImageSource, tally: _Tally, groups: bool,
             advance: Advance) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    held = 0
    for q in harness_questions(source, advance):
        row = _row(q, images, groups)
        tally.add(q, row)
        batch.append(row)
        held += len(row["image"]["bytes"]) if "image" in row else 0
        if len(batch) == BATCH or held >= BATCH_IMAGE_BYTES:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def _write_parquet(batches: Iterator[list[dict[str, Any]]], features: Any, file: Path) -> None:
    schema = features.arrow_schema  # carries the `huggingface` metadata: images decode to PIL
    with atomic_file(file) as fh, pq.ParquetWriter(fh, schema, compression="zstd") as writer:
        for batch in batches:
            encoded = features.encode_batch({name: [row[name] for row in batch] for name in features})
            writer.write_table(pa.Table.from_pydict(encoded, schema=schema), row_group_size=len(batch))


def metric_list(tally: _Tally) -> list[dict[str, Any]]:
    """The YAML's metrics: the overall ones, then one per breakdown value; each name is a key
    `process_results` returns, each aggregation the function of that name in utils.py."""
    def entry(name: str, function: str) -> dict[str, Any]:
        return {"metric": name, "aggregation": _Function(f"utils.{function}"),
                "higher_is_better": function != "drop"}

    out = [entry(m, m) for m in task_functions.OVERALL_METRICS]
    if tally.invariance:
        out += [entry(m, m) for m in task_functions.INVARIANCE_METRICS]
    if tally.groups:
        out += [entry(m, m) for m in task_functions.GROUP_METRICS]
    for dimension in task_functions.DIMENSIONS:
        slugs: dict[str, str] = {}
        for value in sorted(tally.values[dimension]):
            slug = task_functions.metric_slug(value)
            if slugs.setdefault(slug, value) != value:
                raise InputError(f"the {dimension}s {slugs[slug]!r} and {value!r} would share the "
                                 f"metric name suffix {slug!r}")
            out += [entry(f"{m}_{dimension}_{slug}", m) for m in task_functions.BREAKDOWN_METRICS]
    return out


def task_config(task: str, data_file: Path, tally: _Tally) -> dict[str, Any]:
    return {
        "task": task,
        "dataset_path": "parquet",
        "dataset_kwargs": {"data_files": {SPLIT: str(data_file)}},
        "test_split": SPLIT,
        "output_type": "generate_until",
        "doc_to_visual": _Function("utils.doc_to_visual"),
        "doc_to_text": _Function("utils.doc_to_text"),
        "doc_to_target": "answer",
        "process_results": _Function("utils.process_results"),
        "generation_kwargs": dict(GENERATION),
        "metric_list": metric_list(tally),
        "lmms_eval_specific_kwargs": {key: dict(value) for key, value in PROMPTS.items()},
        "metadata": {"version": 1.0},
    }


def utils_source() -> str:
    """`lmms_eval_task.py` as the task's utils.py, with contrastgen's number words and VQA's
    normalisation tables written in."""
    source = package_resource("contrastgen.export", "lmms_eval_task.py").read_text(encoding="utf-8")
    if source.count(_NUMBERS_LINE) != 1 or source.count(_VQA_LINE) != 1:
        raise RuntimeError("lmms_eval_task.py must define NUMBER_WORDS and VQA_RULES empty, once each")
    source = source.replace(_NUMBERS_LINE, f"NUMBER_WORDS: dict[str, str] = {number_words()!r}\n")
    return source.replace(_VQA_LINE, f"VQA_RULES: dict = {vqa_rules_data()!r}\n")


def task_yaml(config: dict[str, Any]) -> str:
    """The YAML text, with `!function utils.x` unquoted as lmms-eval's own tasks write it (PyYAML
    quotes a tagged scalar; the names are identifiers, so unquoting changes nothing it reads)."""
    text = yaml.dump(config, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1000)
    return _QUOTED_FUNCTION.sub(r"!function \1", text)


# Under filelock 4, lmms-eval 0.7.3's import chain asks for `filelock._api`, which filelock 4 no
# longer has; the run exits 0 with no results, so the README says it before a user meets it.
FILELOCK_NOTE = ("lmms-eval 0.7.3 needs `filelock<4` in its environment: under filelock 4 the run "
                 "prints `No module named 'filelock._api'` and exits 0 with no results "
                 "(`pip install 'filelock<4'`).")


def _readme(task: str, out: Path, tally: _Tally, embed: bool, source: Path) -> str:
    images = ("embedded in the Parquet file" if embed
              else "referenced by absolute path (`image_path`); they must be readable where lmms-eval runs")
    return f"""# {task}: a contrastgen contrast set as an lmms-eval task

{tally.questions:,} questions of {len(tally.sets):,} contrast sets{_groups_said(tally)}; images {images}.

```bash
python -m lmms_eval --model MODEL --model_args ... \\
    --include_path {out} --tasks {task} \\
    --output_path results/ --log_samples
contrastgen evaluate --contrast {shlex.quote(str(source))} -p model='results/*/*_samples_{task}.jsonl'
```

{FILELOCK_NOTE}

`results/*/` is the folder lmms-eval names after the model. Quote the pattern: `evaluate` expands
it, and refuses it when it matches several files (two runs: name the one to score). A `--limit`ed
run is scored on the contrast sets it asked in full, as lmms-eval scores it, and `evaluate` says
how many questions were not asked.

`data/test.parquet` is read from its absolute path ({out / DATA_FILE}); after moving this folder,
re-export it or edit `dataset_kwargs.data_files` in `{task}.yaml`. The metrics and the columns are
described in contrastgen's docs/harnesses.md.
"""


def _groups_said(tally: _Tally) -> str:
    return f" and {len(tally.groups):,} two-image groups" if tally.groups else ""


def export_lmms_eval(source: str | os.PathLike[str], out: str | os.PathLike[str], *, name: str,
                     images: str | os.PathLike[str] | None = None, progress: bool = False) -> HarnessExport:
    """Write the task folder for the contrast sets of `source` to `out` (replaced whole).
    `progress`: a bar on a terminal, per contrast set read."""
    task = TASK_PREFIX + check_name(name)
    image_source = ImageSource(images)
    groups = has_groups(source)
    features = _features(image_source.embeds, groups)
    out = Path(out).absolute()
    tally = _Tally()
    with atomic_dir(out) as tmp, harness_progress(source, enabled=progress) as advance:
        (tmp / "data").mkdir()
        _write_parquet(_batches(Path(source), image_source, tally, groups, advance), features, tmp / DATA_FILE)
        config = task_config(task, out / DATA_FILE, tally)
        write_text(tmp / f"{task}.yaml", task_yaml(config))
        write_text(tmp / "utils.py", utils_source())
        write_text(tmp / "README.md", _readme(task, out, tally, image_source.embeds, Path(source).absolute()))
        files = tuple(sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file()))
    return HarnessExport(out=out, files=files, questions=tally.questions, sets=len(tally.sets), names=(task,))
