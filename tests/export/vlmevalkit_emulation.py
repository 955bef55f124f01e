"""VLMEvalKit's handling of a custom TSV, re-enacted without VLMEvalKit (read at commit e8e78f05:
`vlmeval/dataset/__init__.py` build_dataset and DATASET_TYPE, `image_base.py` ImageBaseDataset,
`image_mcq.py` ImageMCQDataset, `utils/multiple_choice.py` report_acc, `smp/file.py` dump):

- `$LMUData/<name>.tsv` is read with pandas' defaults; a `question` column is required; columns
  `A` and `B` with an image column make it CustomMCQDataset, else CustomVQADataset;
- `index` is read as text; an `image` of at most 64 characters is another row's index, whose
  image must be longer; images are decoded to `$LMUData/images/<name>/<image_path>` (or
  `<index>.png`), and without an `image` column `image_path` is opened as it is;
- the prediction file holds every column but `image`, plus `prediction`; the MCQ result file
  lower-cases every column but the option letters and adds `hit` and `log`.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from PIL import Image

REFERENCE_MAX = 64


def dataset_type(name: str) -> str:
    return "VQA" if "openended" in name.lower() else "MCQ"


@dataclass
class Dataset:
    name: str
    kind: str  # CustomMCQDataset | CustomVQADataset
    data: pd.DataFrame
    meta_only: bool
    img_root: Path

    def image_files(self, row: dict[str, Any]) -> Path:
        """The file the model is shown, decoded from base64 the first time (dump_image)."""
        if self.meta_only:
            path = Path(str(row["image_path"]))
            assert path.is_file(), path
            return path
        name = row["image_path"] if "image_path" in row and isinstance(row["image_path"], str) else f"{row['index']}.png"
        target = self.img_root / name
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            image = Image.open(io.BytesIO(base64.b64decode(row["image"])))
            if image.mode in ("RGBA", "P", "LA"):
                image = image.convert("RGB")
            image.save(target)
        return target

    def prompt(self, row: dict[str, Any]) -> str:
        if self.kind == "CustomVQADataset":
            return row["question"]
        options = {c: row[c] for c in string.ascii_uppercase if c in row and not pd.isna(row[c])}
        text = f"Question: {row['question']}\nOptions:\n"
        text += "".join(f"{key}. {value}\n" for key, value in options.items())
        return text + "Please select the correct answer from the options above. \n"

    def rows(self) -> list[dict[str, Any]]:
        return self.data.to_dict("records")


def build_dataset(root: Path, name: str) -> Dataset:
    file = root / f"{name}.tsv"
    data = pd.read_csv(file, sep="\t")
    assert "question" in [c.lower() for c in data.columns]
    has_image = "image" in data or "image_path" in data
    kind = "CustomMCQDataset" if "A" in data and "B" in data and has_image else "CustomVQADataset"
    data = data[~pd.isna(data["image"])] if "image" in data else data
    data["index"] = [str(x) for x in data["index"]]
    meta_only = True
    if "image" in data:
        images = {i: str(v) for i, v in zip(data["index"], data["image"], strict=True)}
        for key, value in list(images.items()):
            if 0 < len(value) <= REFERENCE_MAX:
                assert value in images and len(images[value]) > REFERENCE_MAX, (key, value)
                images[key] = images[value]
        data["image"] = [images[i] for i in data["index"]]
        meta_only = False
    if all(i.lstrip("-").isdigit() for i in data["index"]):
        data["index"] = [int(i) for i in data["index"]]
    return Dataset(name, kind, data, meta_only, root / "images" / name)


def prediction_frame(dataset: Dataset, answers: dict[Any, str]) -> pd.DataFrame:
    """The prediction file's rows: the TSV's columns but `image`, plus `prediction`."""
    frame = dataset.data.drop(columns=[c for c in ("image",) if c in dataset.data])
    frame = frame.copy()
    frame["prediction"] = [str(answers[i]) for i in frame["index"]]
    return frame


def exact_matching(frame: pd.DataFrame) -> pd.DataFrame:
    """`mcq_vanilla_eval` without a judge: the option a prediction names (one option letter among
    its words, else an option's text), compared with the gold letter; the columns lower-cased
    but the option letters, as the result file has them."""
    out = frame.sort_values(by="index").copy()
    hits, logs = [], []
    for _, row in out.iterrows():
        options = {c: str(row[c]) for c in ("A", "B") if c in row and not pd.isna(row[c])}
        words = str(row["prediction"]).translate({ord(c): " " for c in ".()[],:;!*#{}"}).split()
        named = {w for w in words if w in options}
        if len(named) != 1:
            named = {k for k, v in options.items() if v.lower() == str(row["prediction"]).strip().lower()}
        hit = int(len(named) == 1 and named.pop() == row["answer"])
        hits.append(hit)
        logs.append(f"Prefetch succeed. The answer is {'right' if hit else 'wrong'}.")
    out["hit"], out["log"] = hits, logs
    out.columns = [c if c in string.ascii_uppercase else c.lower() for c in out.columns]
    return out


def report_acc(result: pd.DataFrame) -> dict[str, float]:
    out = {"Overall": float(result["hit"].mean())}
    for group in ("l2-category", "category"):
        for value in sorted(set(result[group])):
            out[value] = float(result[result[group] == value]["hit"].mean())
    return out


def dump(frame: pd.DataFrame, path: Path) -> Path:
    """VLMEvalKit's `dump` for a table: .xlsx, .tsv (every field quoted) or .json (records)."""
    if path.suffix == ".xlsx":
        frame.to_excel(path, index=False)
    elif path.suffix == ".tsv":
        frame.to_csv(path, sep="\t", index=False, quoting=csv.QUOTE_ALL)
    else:
        path.write_text(json.dumps(frame.to_dict("records"), indent=4, ensure_ascii=False, default=str))
    return path
