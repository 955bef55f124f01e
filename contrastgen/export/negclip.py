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
import itertools
import os
import random
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, overload

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
    seeded order), then any other image's. `advance(1)` per row.

    The rows sharing a noun are drawn from as the sorted list of them, but never listed: a common
    noun is shared by a share of all rows, so listing them for each row was quadratic (7 of 12
    seconds on 8,760 records). `_Sharing` answers `random.sample`'s questions (how many, which is
    the i-th) from each noun's sorted rows, so the draws, and so the rows, are the same."""
    by_noun: dict[str, list[int]] = {}
    by_pair: dict[tuple[str, str], list[int]] = {}  # rows saying both nouns (a row says one or two)
    by_image: dict[str, list[int]] = {}
    for i, (image, nouns) in enumerate(rows):
        said = list(dict.fromkeys(nouns))
        for noun in said:
            by_noun.setdefault(noun, []).append(i)
        for pair in itertools.combinations(sorted(said), 2):
            by_pair.setdefault(pair, []).append(i)
        by_image.setdefault(image, []).append(i)
    out = []
    for i, (image, nouns) in enumerate(rows):
        rng = random.Random(f"{seed}:{i}")
        said = sorted(set(nouns))
        own = [j for j in by_image[image] if not set(rows[j][1]).isdisjoint(said)]
        if len(said) <= 2:  # the rows of either noun, less those of both (counted twice) and this image's
            both = [by_pair[said[0], said[1]]] if len(said) == 2 else []
            sharing: Sequence[int] = _Sharing([by_noun[n] for n in said], [*both, own])
        else:  # no caption has three phrases; listed as the rule says
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


class _Sharing(Sequence[int]):
    """The sorted union of some sorted lists of rows less some of its members (each list given
    once), without listing it: its length, and its i-th row by bisection on the rows' values."""

    def __init__(self, union: list[list[int]], less: list[list[int]]):
        self._union, self._less = union, less
        self._size = sum(map(len, union)) - sum(map(len, less))

    def __len__(self) -> int:
        return self._size

    def _up_to(self, row: int) -> int:
        """How many members are at most `row`."""
        return sum(bisect_right(u, row) for u in self._union) - sum(bisect_right(x, row) for x in self._less)

    @overload
    def __getitem__(self, i: int) -> int: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...

    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._size))]
        if i < 0:
            i += self._size
        if not 0 <= i < self._size:
            raise IndexError(i)
        lo, hi = 0, max(u[-1] for u in self._union if u)  # the least row with i + 1 members at most it
        while lo < hi:
            mid = (lo + hi) // 2
            if self._up_to(mid) > i:
                hi = mid
            else:
                lo = mid + 1
        return lo


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
