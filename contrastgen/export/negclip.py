"""Hard-negative training data in NegCLIP's file shape (the open_clip fork ARO trains with,
vinid/neg_clip `training/data.py`).

The fork reads a tab-separated file with pandas (`--csv-separator` defaults to a tab, though ARO
calls the files `.csv`) and these columns: a first unnamed index column, `title` (the caption),
`filepath` (the image, opened as written), `neg_caption` (a Python-literal list of hard negative
captions, read with `ast.literal_eval`) and `neg_image` (a Python-literal list of row positions in
the same file, whose images are the row's hard negative images). Each training step draws one of
each, so both lists are never empty.

One row per true caption: its negatives of every kind are its `neg_caption`. Its `neg_image` rows
are other images' captions that name one of its nouns (the images a text query would confuse),
filled up from other images at random, seeded, `NEG_IMAGES` of them. Text cells are written
formula-safe (`files.csv_cells`): captions never start with `=`, `+`, `-` or `@`, so no cell of
a generated caption changes, but image paths are the user's.

The file is written as `train_neg_clip.tsv` inside the output folder, as every export writes a
folder; the fork is pointed at the file (`--train-data OUT/train_neg_clip.tsv`).
"""

from __future__ import annotations

import csv
import io
import os
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contrastgen.errors import InputError
from contrastgen.export.caption_benchmarks import CaptionExport, ImageNames
from contrastgen.files.atomic import atomic_dir
from contrastgen.files.csv_cells import neutral
from contrastgen.records import read_caption_records
from contrastgen.terminal.progress import Advance, counted, noop

NEGCLIP_FILE = "train_neg_clip.tsv"
NEG_IMAGES = 3
COLUMNS = ("", "title", "filepath", "neg_caption", "neg_image")


def _nouns(record: Mapping[str, Any]) -> list[str]:
    return [p["noun"] for p in record["evidence"]["reading"]["phrases"]]


def hard_negative_images(rows: list[tuple[str, list[str]]], *, seed: int = 0, k: int = NEG_IMAGES,
                         advance: Advance = noop) -> list[list[int]]:
    """For each (image id, nouns) row, `k` rows of other images: those sharing a noun first (in a
    seeded order), then any other image's. `advance(1)` per row."""
    by_noun: dict[str, list[int]] = {}
    for i, (_, nouns) in enumerate(rows):
        for noun in dict.fromkeys(nouns):
            by_noun.setdefault(noun, []).append(i)
    out = []
    for i, (image, nouns) in enumerate(rows):
        rng = random.Random(f"{seed}:{i}")
        sharing = sorted({j for n in nouns for j in by_noun[n] if rows[j][0] != image})
        picked = rng.sample(sharing, min(k, len(sharing)))
        start = rng.randrange(len(rows))
        for step in range(len(rows)):  # from a seeded place onwards: stops after k, rarely far
            if len(picked) >= k:
                break
            j = (start + step) % len(rows)
            if rows[j][0] != image and j not in picked:
                picked.append(j)
        out.append(picked)
        advance(1)
    return out


def export_negclip(source: str | os.PathLike[str], out: str | os.PathLike[str], *,
                   images: str | os.PathLike[str] | None = None, seed: int = 0,
                   advance: Advance = noop) -> CaptionExport:
    """`advance(1)` per caption record read, then per record given its negative images (twice the
    records in all: a record without negatives is counted done when read)."""
    names = ImageNames(images)
    read = list(counted(read_caption_records(source), advance))
    records = [r for r in read if r["negatives"]]
    advance(len(read) - len(records))
    if len({r["image_id"] for r in records}) < 2:
        raise InputError("NegCLIP's hard negative images need captions of at least two images", path=str(source))
    negatives = hard_negative_images([(r["image_id"], _nouns(r)) for r in records], seed=seed, advance=advance)
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(COLUMNS)
    for i, (record, neg_images) in enumerate(zip(records, negatives, strict=True)):
        writer.writerow([i, neutral(record["caption"]), neutral(names.path(record["image_id"], record["id"])),
                         repr([n["caption"] for n in record["negatives"]]), repr(neg_images)])
    out = Path(out)
    with atomic_dir(out) as tmp:
        (tmp / NEGCLIP_FILE).write_bytes(buffer.getvalue().encode("utf-8"))
    return CaptionExport(out, (NEGCLIP_FILE,), len(records))
