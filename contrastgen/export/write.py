"""Write an export directory: the rows in one format, and the card beside them.

Rows stream from the contrast file to the output in batches, so memory holds one batch, not every
record: a Hugging Face dataset is first written batch by batch to an Arrow file in scratch, which
`datasets` maps from disk and saves. With `--images DIR` (parquet, hf) each row carries its image
(`datasets.Image`; in Parquet the Hub's struct {bytes, path} with `datasets`' feature metadata, so
`load_dataset` decodes it), found and checked by `images.ImageSource` as the harness exports do,
and a batch also ends at BATCH_IMAGE_BYTES of image bytes. Everything is built in a temporary
sibling and renamed into place (`jsonio.atomic_dir`), so a failed export leaves no half-written
dataset for a training job to pick up.
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

from contrastgen.errors import InputError, require_extra
from contrastgen.export.card import DESCRIPTION, CardFacts, Tally, info_fields, license_for, render
from contrastgen.export.images import ImageSource
from contrastgen.export.rows import SCHEMA, rows
from contrastgen.files import scratch
from contrastgen.files.atomic import atomic_dir, atomic_file
from contrastgen.jsonio import dumps, read_json, write_text
from contrastgen.records import contrast_file, iter_contrast_sets, read_contrast_records
from contrastgen.registry import Registry
from contrastgen.terminal.progress import Advance, line_count, noop
from contrastgen.terminal.progress import progress as progress_bar

# The default split of every export (here, the lmms-eval task and the caption dataset): a contrast
# set is held-out evaluation data whatever split its questions came from, and lmms-eval's task
# reads a `test_split`.
SPLIT = "test"
KS = (1, 3, 5)
# Rows per batch and Parquet row group: a reader can skip to a part of a large file, and the
# writer holds this many rows as Python objects at a time; with images, a batch also ends once it
# holds this many image bytes (a set's rows share one image object in Python, but Arrow copies it
# per row).
BATCH = 20_000
BATCH_IMAGE_BYTES = 64 << 20
IMAGE = pa.struct([pa.field("bytes", pa.binary()), pa.field("path", pa.string())])
IMAGE_SCHEMA = SCHEMA.append(pa.field("image", IMAGE))
IMAGE_FORMATS = ("parquet", "hf")


@dataclass(frozen=True)
class Layout:
    """How rows become files in the output folder: `schema` is the Arrow schema the rows are
    written under (`datasets`' feature metadata where the rows carry images)."""

    out: Path
    split: str
    schema: pa.Schema
    info: Callable[[], dict[str, str]]  # DatasetInfo's description, citation, homepage, licence, once all rows are read


RowWriter = Callable[[Iterator[list[dict[str, Any]]], Layout], None]
# How each row export lays its rows out (the exports themselves are `exporters.EXPORTS`).
LAYOUTS: Registry[RowWriter] = Registry("row layout")


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


def _batches(source: Path, tally: Tally, counter: list[int], images: ImageSource | None,
             advance: Advance = noop) -> Iterator[list[dict[str, Any]]]:
    """The rows of `source`, validated as they are read, in lists of BATCH (or fewer, once a
    batch holds BATCH_IMAGE_BYTES of images); with `images`, each row with its image. `advance(1)`
    per contrast set read (a progress bar's)."""
    def counted():
        for cs in iter_contrast_sets(read_contrast_records(source), path=str(contrast_file(source))):
            counter[0] += 1
            advance(1)
            yield cs

    stream = rows(counted())
    if images is None:
        while batch := list(itertools.islice(stream, BATCH)):
            for row in batch:
                tally.add(row)
            yield batch
        return
    batch, held = [], 0
    for row in stream:
        path = images.path(row["image_id"], None, row["question_id"])
        row["image"] = {"bytes": images.read(path, row["question_id"]), "path": path.name}
        tally.add(row)
        batch.append(row)
        held += len(row["image"]["bytes"])
        if len(batch) == BATCH or held >= BATCH_IMAGE_BYTES:
            yield batch
            batch, held = [], 0
    if batch:
        yield batch


def _image_schema() -> pa.Schema:
    """IMAGE_SCHEMA as `datasets` writes it: its feature metadata makes `image` an Image (a PIL
    image when loaded), not a dict of bytes."""
    require_extra("hf", ("datasets",), "an export with --images")
    from datasets import Features, Image

    features = Features.from_arrow_schema(SCHEMA)
    features["image"] = Image()
    return features.arrow_schema


def _record_batch(batch: list[dict[str, Any]], schema: pa.Schema) -> pa.RecordBatch:
    if schema is SCHEMA:
        return pa.RecordBatch.from_pylist(batch, schema=SCHEMA)
    built = pa.Table.from_pylist(batch, schema=IMAGE_SCHEMA).cast(schema)
    return built.combine_chunks().to_batches()[0]


def _write_parquet(batches: Iterator[list[dict[str, Any]]], file: Path, schema: pa.Schema) -> None:
    with atomic_file(file) as fh, pq.ParquetWriter(fh, schema, compression="zstd") as writer:
        for batch in batches:
            writer.write_batch(_record_batch(batch, schema), row_group_size=BATCH)


def _write_jsonl(batches: Iterator[list[dict[str, Any]]], file: Path) -> None:
    with atomic_file(file) as fh:
        for batch in batches:
            fh.writelines(dumps(r) for r in batch)


def _digest_row(digest: Any, row: dict[str, Any]) -> None:
    image = row.pop("image", None)
    digest.update(dumps(row))
    if image is not None:
        row["image"] = image
        digest.update(image["path"].encode() + b"\0" + image["bytes"])


def _write_hf(batches: Iterator[list[dict[str, Any]]], layout: Layout) -> None:
    try:
        from datasets import Dataset, DatasetDict, DatasetInfo, Features
        from datasets.table import MemoryMappedTable
    except ImportError:
        raise InputError("--format hf needs the Hugging Face `datasets` package: "
                         "pip install 'contrastgen[hf]'") from None
    digest = hashlib.sha256()
    features = Features.from_arrow_schema(layout.schema)
    schema = features.arrow_schema
    with scratch.folder("export-hf-") as folder:
        rows_file = folder / "rows.arrow"
        # The rows go to disk batch by batch and `datasets` maps them from there: memory holds one
        # batch, not the table (nor, with images, every row's copy of its image).
        with pa.OSFile(str(rows_file), "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
            for batch in batches:
                for row in batch:
                    _digest_row(digest, row)
                writer.write_table(pa.Table.from_batches([_record_batch(batch, layout.schema)]).cast(schema))
        # A fingerprint from the rows, not a random one, so the same input writes the same files.
        ds = Dataset(MemoryMappedTable.from_file(str(rows_file)), info=DatasetInfo(features=features, **layout.info()),
                     split=layout.split, fingerprint=digest.hexdigest()[:16])
        DatasetDict({layout.split: ds}).save_to_disk(str(layout.out))
        del ds


def export(source: str | os.PathLike[str], out: str | os.PathLike[str], *, fmt: str,
           split: str = SPLIT, license: str | None = None, license_note: str | None = None,
           images: str | os.PathLike[str] | None = None, progress: bool = False) -> ExportResult:
    """Export the contrast sets of `source` (a `generate` output directory or contrast file);
    with `images` (a folder of `{image_id}.jpg|jpeg|png`; parquet and hf), each row's image.
    `progress`: a bar on a terminal, per contrast set read."""
    write_rows = LAYOUTS[fmt]  # an unknown name: an InputError naming the choices
    if not split.replace("_", "").isalnum():
        raise InputError(f"split name {split!r} must be letters, digits and underscores")
    if images is not None and fmt not in IMAGE_FORMATS:
        raise InputError(f"--images embeds images in --format {' and '.join(IMAGE_FORMATS)}, not {fmt}")
    if fmt == "hf" or images is not None:
        require_extra("hf", ("datasets",), f"`contrastgen export --format {fmt}{' --images' if images else ''}`")
        import datasets

        datasets.disable_progress_bars()  # the export's own bar (`progress`) is the one shown
    require_extra("hf", ("huggingface_hub",), "the dataset card of `contrastgen export`")
    source = Path(source)
    stats = _stats(source)  # fails on a missing contrast file before anything is created
    image_source = None if images is None else ImageSource(images)
    schema = SCHEMA if image_source is None else _image_schema()
    tally, n_sets = Tally(KS), [0]

    def info() -> dict[str, str]:  # asked once every row has been read
        datasets = tuple(sorted(tally.datasets))
        return info_fields(datasets, license_for(datasets, license, license_note)[0], DESCRIPTION)

    out = Path(out)
    with (atomic_dir(out) as tmp,
          progress_bar("exporting", line_count(contrast_file(source)), enabled=progress) as advance):
        write_rows(_batches(source, tally, n_sets, image_source, advance), Layout(tmp, split, schema, info))
        datasets = tuple(sorted(tally.datasets))
        ident, note = license_for(datasets, license, license_note)
        facts = CardFacts(rows=tally.rows, sets=n_sets[0], datasets=datasets, per_template=tally.per_template(),
                          ks=KS, stats=stats, license=ident, license_note=note, split=split, layout=fmt,
                          images=image_source is not None)
        write_text(tmp / "README.md", render(facts))
        files = tuple(sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file()))
    return ExportResult(out=out, files=files, rows=tally.rows, sets=n_sets[0])


@LAYOUTS.register("parquet")
def _parquet_layout(batches: Iterator[list[dict[str, Any]]], layout: Layout) -> None:
    """data/{split}-00000-of-00001.parquet: the Hugging Face Hub's layout."""
    (layout.out / "data").mkdir()
    _write_parquet(batches, layout.out / "data" / f"{layout.split}-00000-of-00001.parquet", layout.schema)


@LAYOUTS.register("hf")
def _hf_layout(batches: Iterator[list[dict[str, Any]]], layout: Layout) -> None:
    _write_hf(batches, layout)


@LAYOUTS.register("jsonl")
def _jsonl_layout(batches: Iterator[list[dict[str, Any]]], layout: Layout) -> None:
    _write_jsonl(batches, layout.out / f"{layout.split}.jsonl")
