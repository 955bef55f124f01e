"""lmms-eval's handling of a local task, re-enacted without lmms-eval (which needs torch).

What it does, as lmms-eval 0.7 does it (`lmms_eval/utils.py`, `api/task.py`, `evaluator.py`,
`loggers/evaluation_tracker.py`; docs/harnesses.md names the versions):
- the YAML is parsed with a `!function` constructor that loads `<yaml dir>/<module>.py` by its
  path, as a module of its own, and returns the attribute;
- the split is `datasets.load_dataset(dataset_path, data_files=...)[test_split]`;
- the prompt kwargs for a model the YAML does not name are the `default` entry;
- each doc goes through `doc_to_visual`, `doc_to_text(doc, kwargs)`, the model, then
  `process_results(doc, [answer.strip()])`; each returned key's value is appended to that metric's
  items, and a metric listed in `metric_list` is aggregated with its `aggregation`;
- `--log_samples` lines are written in the shape of the version asked for.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

Model = Callable[[dict, str, list], str]  # (doc, prompt text, visuals) -> answer


def _function_loader(folder: Path) -> type[yaml.SafeLoader]:
    class Loader(yaml.SafeLoader):
        pass

    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> Callable:
        module_name, attribute = loader.construct_scalar(node).rsplit(".", 1)
        spec = importlib.util.spec_from_file_location(module_name, folder / f"{module_name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, attribute)

    Loader.add_constructor("!function", construct)
    return Loader


@dataclass
class LoadedTask:
    folder: Path
    config: dict[str, Any]
    docs: Any  # a datasets.Dataset

    @functools.cached_property
    def rows(self) -> list[dict[str, Any]]:
        """The docs without their images (decoding every image is slow and tells nothing here)."""
        columns = [c for c in self.docs.column_names if c != "image"]
        return self.docs.select_columns(columns).to_list()

    @property
    def metrics(self) -> dict[str, Callable]:
        return {m["metric"]: m["aggregation"] for m in self.config["metric_list"]}

    def prompt_kwargs(self) -> dict[str, Any]:
        kwargs = dict(self.config["lmms_eval_specific_kwargs"])
        kwargs.update(kwargs["default"])
        return kwargs


def load_task(folder: Path, cache_dir: Path) -> LoadedTask:
    import datasets

    (yaml_file,) = sorted(folder.glob("*.yaml"))
    config = yaml.load(yaml_file.read_text(encoding="utf-8"), Loader=_function_loader(folder))
    assert config["task"] == yaml_file.stem
    loaded = datasets.load_dataset(config["dataset_path"], data_files=config["dataset_kwargs"]["data_files"],
                                   cache_dir=str(cache_dir))
    return LoadedTask(folder, config, loaded[config["test_split"]])


@dataclass
class Run:
    samples: list[dict[str, Any]]  # one per doc: doc_id, the doc, prompt, answer, metric values
    items: dict[str, list]  # metric -> per-doc values, in doc order
    scores: dict[str, float]  # metric -> aggregate


def run(task: LoadedTask, model: Model, order: list[int] | None = None, *, visuals: bool = True) -> Run:
    """Drive the task's functions over its docs (in `order`, default file order). Without
    `visuals`, `doc_to_visual` is left out (the scripted models do not look at the image)."""
    cfg = task.config
    kwargs = task.prompt_kwargs()
    samples, items = [], {}
    docs = task.docs if visuals else task.rows
    for doc_id in order if order is not None else range(len(docs)):
        doc = docs[doc_id]
        images = cfg["doc_to_visual"](doc) if visuals else []
        text = cfg["doc_to_text"](doc, kwargs)
        answer = model(doc, text, images).strip()
        metrics = cfg["process_results"](doc, [answer])
        for name, value in metrics.items():
            items.setdefault(name, []).append(value)
        samples.append({"doc_id": doc_id, "doc": doc, "input": text, "answer": answer,
                        "target": doc[cfg["doc_to_target"]], "metrics": metrics})
    scores = {name: agg(items[name]) for name, agg in task.metrics.items() if name in items}
    return Run(samples, items, scores)


def _saved_doc(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "image"}  # images are dropped from the log


def sample_line(sample: dict[str, Any], version: str) -> dict[str, Any]:
    """A `--log_samples` line of lmms-eval `version` ("0.3", "0.4" for 0.4 to 0.6, "0.7")."""
    doc = _saved_doc(sample["doc"])
    doc_hash = hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()
    line: dict[str, Any] = {"doc_id": sample["doc_id"], "target": str(sample["target"])}
    if version == "0.3":
        line.update({"doc": doc, "arguments": {"gen_args_0": {"arg_0": sample["input"], "arg_1": {}}},
                     "resps": [[sample["answer"]]], "filtered_resps": [sample["answer"]],
                     "doc_hash": doc_hash, "input": sample["input"]})
    elif version == "0.4":
        line.update({"filtered_resps": [sample["answer"]], "doc_hash": doc_hash, "input": sample["input"]})
    else:
        line.update({"input": sample["input"], "filtered_resps": sample["answer"],
                     "token_counts": [None], "doc_hash": doc_hash})
    line.update(sample["metrics"])
    return line


def write_samples(path: Path, run_: Run, version: str) -> Path:
    with path.open("a", encoding="utf-8") as fh:  # lmms-eval appends
        for sample in run_.samples:
            fh.write(json.dumps(sample_line(sample, version), ensure_ascii=False, default=str) + "\n")
    return path
