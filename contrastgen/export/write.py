"""Write an export directory: the rows in one format, and the card beside them.

Rows stream from the contrast file to the output in batches, so memory holds one batch (and, for
a Hugging Face dataset, the Arrow table `datasets` saves), not every record. Everything is built
in a temporary sibling and renamed into place (`jsonio.atomic_dir`), so a failed export leaves no
half-written dataset for a training job to pick up.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from contrastgen.errors import InputError
from contrastgen.export.card import CardFacts, Tally, license_for, render
from contrastgen.export.rows import SCHEMA, rows
from contrastgen.files.atomic import atomic_dir, atomic_file
from contrastgen.jsonio import dumps, read_json, write_text
from contrastgen.records import contrast_file, iter_contrast_sets, read_contrast_records
from contrastgen.registry import Registry

# An export format: how the rows become files in the output folder (split: the dataset split's name).
RowWriter = Callable[[Iterator[list[dict[str, Any]]], Path, str], None]
FORMATS: Registry[RowWriter] = Registry("export format")
KS = (1, 3, 5)
# Rows per batch and Parquet row group: a reader can skip to a part of a large file, and the
# writer holds this many rows as Python objects at a time.
BATCH = 20_000


@dataclass(frozen=True)
class ExportResult:
    out: Path
    files: tuple[str, ...]  # paths written, relative to `out`
    rows: int
    sets: int


def _stats(source: Path) -> dict[str, Any]:
    """The run's stats.json beside the contrast file, if any (the card states its seed and k)."""
    stats = contrast_file(source).with_name("stats.json")
    return read_json(stats) if stats.is_file() else {}


def _batches(source: Path, tally: Tally, counter: list[int]) -> Iterator[list[dict[str, Any]]]:
    """The rows of `source`, validated as they are read, in lists of BATCH."""
    def counted():
        for cs in iter_contrast_sets(read_contrast_records(source), path=str(contrast_file(source))):
            counter[0] += 1
            yield cs

    stream = rows(counted())
    while batch := list(itertools.islice(stream, BATCH)):
        for row in batch:
            tally.add(row)
        yield batch


def _write_parquet(batches: Iterator[list[dict[str, Any]]], file: Path) -> None:
    with atomic_file(file) as fh, pq.ParquetWriter(fh, SCHEMA, compression="zstd") as writer:
        for batch in batches:
            writer.write_batch(pa.RecordBatch.from_pylist(batch, schema=SCHEMA), row_group_size=BATCH)


def _write_jsonl(batches: Iterator[list[dict[str, Any]]], file: Path) -> None:
    with atomic_file(file) as fh:
        for batch in batches:
            fh.writelines(dumps(r) for r in batch)


def _write_hf(batches: Iterator[list[dict[str, Any]]], out: Path, split: str) -> None:
    try:
        from datasets import Dataset, DatasetDict, Features
        from datasets.table import InMemoryTable
    except ImportError:
        raise InputError("--format hf needs the Hugging Face `datasets` package: "
                         "pip install 'contrastgen[hf]'") from None
    digest = hashlib.sha256()
    arrow: list[pa.RecordBatch] = []
    for batch in batches:
        digest.update(b"".join(dumps(r) for r in batch))
        arrow.append(pa.RecordBatch.from_pylist(batch, schema=SCHEMA))
    features = Features.from_arrow_schema(SCHEMA)
    table = pa.Table.from_batches(arrow, schema=SCHEMA).cast(features.arrow_schema)
    # A fingerprint from the rows, not a random one, so the same input writes the same files.
    ds = Dataset(InMemoryTable(table), split=split, fingerprint=digest.hexdigest()[:16])
    DatasetDict({split: ds}).save_to_disk(str(out))


def export(source: str | os.PathLike[str], out: str | os.PathLike[str], *, fmt: str,
           split: str = "validation", license: str | None = None, license_note: str | None = None
           ) -> ExportResult:
    """Export the contrast sets of `source` (a `generate` output directory or contrast file)."""
    write_rows = FORMATS[fmt]  # an unknown name: an InputError naming the choices
    if not split.replace("_", "").isalnum():
        raise InputError(f"split name {split!r} must be letters, digits and underscores")
    source = Path(source)
    stats = _stats(source)  # fails on a missing contrast file before anything is created
    tally, n_sets = Tally(KS), [0]
    batches = _batches(source, tally, n_sets)
    out = Path(out)
    with atomic_dir(out) as tmp:
        write_rows(batches, tmp, split)
        datasets = tuple(sorted(tally.datasets))
        ident, note = license_for(datasets, license, license_note)
        facts = CardFacts(rows=tally.rows, sets=n_sets[0], datasets=datasets, per_template=tally.per_template(),
                          ks=KS, stats=stats, license=ident, license_note=note, split=split, layout=fmt)
        write_text(tmp / "README.md", render(facts))
        files = tuple(sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file()))
    return ExportResult(out=out, files=files, rows=tally.rows, sets=n_sets[0])


@FORMATS.register("parquet")
def _parquet_layout(batches: Iterator[list[dict[str, Any]]], out: Path, split: str) -> None:
    """data/{split}-00000-of-00001.parquet: the Hugging Face Hub's layout."""
    (out / "data").mkdir()
    _write_parquet(batches, out / "data" / f"{split}-00000-of-00001.parquet")


@FORMATS.register("hf")
def _hf_layout(batches: Iterator[list[dict[str, Any]]], out: Path, split: str) -> None:
    _write_hf(batches, out, split)


@FORMATS.register("jsonl")
def _jsonl_layout(batches: Iterator[list[dict[str, Any]]], out: Path, split: str) -> None:
    _write_jsonl(batches, out / f"{split}.jsonl")
