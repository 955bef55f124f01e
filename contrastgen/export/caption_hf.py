"""A caption set as a Hugging Face dataset: one row per (caption, negative), for MTEB-style pair
classification and for training.

Columns: `image` (the image itself, `datasets.Image`, with `--images DIR`; else its file name
`<image_id>.jpg`, a string), `caption`, `negative_caption`, `kind`, `image_id`, `caption_id`,
`negative_id`, `dataset`, `region` (x, y, w, h of the caption's objects) and `evidence` (the
negative's proof and facts as a JSON string: its facts differ in shape by proof, which an Arrow
column could hold only as a union). Written with `save_to_disk`; `datasets.load_from_disk(OUT)`
reads it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from contrastgen.errors import require_extra
from contrastgen.export.caption_benchmarks import CaptionExport, pairs
from contrastgen.export.images import ImageSource
from contrastgen.files.atomic import atomic_dir
from contrastgen.jsonio import dumps
from contrastgen.records import read_caption_records

SPLIT = "test"


def _rows(source: str | os.PathLike[str], images: ImageSource | None) -> Iterator[dict[str, Any]]:
    for record, negative in pairs(read_caption_records(source)):
        image: Any = f"{record['image_id']}.jpg"
        if images is not None:
            path = images.path(record["image_id"], None, record["id"])
            image = {"bytes": images.read(path, record["id"]), "path": path.name}
        yield {"image": image, "caption": record["caption"], "negative_caption": negative["caption"],
               "kind": negative["kind"], "image_id": record["image_id"], "caption_id": record["id"],
               "negative_id": negative["id"], "dataset": record.get("dataset", ""), "region": record["region"],
               "evidence": dumps(negative["evidence"]).decode("utf-8")}


def export_caption_hf(source: str | os.PathLike[str], out: str | os.PathLike[str], *,
                      images: str | os.PathLike[str] | None = None, split: str = SPLIT) -> CaptionExport:
    require_extra("hf", ("datasets",), "a Hugging Face caption export")
    from datasets import Dataset, DatasetDict, Features, Image, Sequence, Value

    source_images = ImageSource(images) if images is not None else None
    rows = list(_rows(source, source_images))
    features = Features({
        "image": Image() if source_images is not None else Value("string"),
        **{name: Value("string") for name in ("caption", "negative_caption", "kind", "image_id", "caption_id",
                                              "negative_id", "dataset")},
        "region": Sequence(Value("int64")), "evidence": Value("string")})
    columns = {name: [r[name] for r in rows] for name in features}
    # a fingerprint from the rows, not a random one, so the same input writes the same files
    digest = hashlib.sha256(b"".join(dumps({k: v for k, v in r.items() if k != "image"}) for r in rows))
    ds = Dataset.from_dict(columns, features=features, split=split)
    ds._fingerprint = digest.hexdigest()[:16]
    with atomic_dir(out) as tmp:
        DatasetDict({split: ds}).save_to_disk(str(tmp))
        files = tuple(sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file()))
    return CaptionExport(Path(out), files, len(rows))
