"""`contrastgen export`: contrast sets as Parquet, a Hugging Face dataset, flat JSONL, or a
benchmark for an evaluation harness (an lmms-eval task folder, VLMEvalKit TSVs). The exports
themselves are `contrastgen.export.exporters`' (the ones that read a contrast set)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from contrastgen.cli.options import no_progress_option
from contrastgen.export.exporters import (
    IMAGES,
    LICENSE,
    NAME,
    SPLIT,
    ExportOptions,
    exporter,
    formats,
    taking,
)
from contrastgen.export.write import SPLIT as DEFAULT_SPLIT
from contrastgen.files.manifest import CONTRAST_SET


def register(group: click.Group) -> None:
    group.add_command(export_cmd)


def _default_name(out: Path) -> str:
    """A benchmark name from the output folder's name (`out/gqa-val` -> `gqa_val`)."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", out.absolute().name).strip("_") or "contrast"


def _listed(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


@click.command("export")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(formats(CONTRAST_SET)), required=True,
              help="parquet: data/{split}-00000-of-00001.parquet (the Hub's layout); hf: a `datasets` "
                   "DatasetDict (save_to_disk); jsonl: {split}.jsonl. Each with a dataset card, README.md. "
                   "lmms-eval: a task folder for `--include_path` (task contrast_NAME); vlmevalkit: "
                   "Contrast_NAME_OpenEnded.tsv and Contrast_NAME_MCQ.tsv for $LMUData.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The folder to write (replaced whole).")
@click.option("--split", default=None,
              help=f"parquet, hf, jsonl: the split's name in the dataset (default: {DEFAULT_SPLIT}, as every export's).")
@click.option("--license", "license_id", default=None,
              help="Licence identifier for the card (default: the inputs', CC BY 4.0 for GQA and CLEVR).")
@click.option("--license-note", default=None, help="A sentence on the licence, for the card.")
@click.option("--name", default=None,
              help="lmms-eval, vlmevalkit: the benchmark's NAME (letters, digits, _; default: from --out).")
@click.option("--images", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="The folder of the images ({image_id}.jpg|jpeg|png), embedded in the export: "
                   "parquet and hf as an `image` column (datasets.Image); lmms-eval and vlmevalkit "
                   "likewise, and without it there each record's image file (`generate --images`) is "
                   "referenced by its path. Without it, parquet and hf have no image column.")
@no_progress_option
def export_cmd(source: Path, fmt: str, out: Path, split: str | None, license_id: str | None,
               license_note: str | None, name: str | None, images: Path | None, no_progress: bool) -> None:
    """Write SOURCE's contrast sets (`generate`'s output folder, or a contrast_sets.jsonl) one row
    per perturbation, with the original, the change, the answer and the evidence as nested
    columns; or, for an evaluation harness, one row per question to ask a model.

    \b
    Examples:
      contrastgen export out/cs --format parquet --out out/cs-parquet
      contrastgen export out/cs --format hf --out out/cs-hf --images images/   # load_from_disk(...)
      contrastgen export out/cs --format lmms-eval --out out/cs-lmms --images images/
      contrastgen export out/cs --format vlmevalkit --out out/cs-vlm --images images/
    """
    chosen = exporter(CONTRAST_SET, fmt)
    if SPLIT not in chosen.takes and (split is not None or license_id is not None or license_note is not None):
        raise click.UsageError(f"--split, --license and --license-note apply to --format "
                               f"{_listed(taking(CONTRAST_SET, LICENSE))}")
    if NAME not in chosen.takes and name is not None:
        raise click.UsageError(f"--name applies to --format {_listed(taking(CONTRAST_SET, NAME))}")
    if IMAGES not in chosen.takes and images is not None:
        raise click.UsageError(f"--images applies to --format {', '.join(taking(CONTRAST_SET, IMAGES))}")
    options = ExportOptions(split=split, license=license_id, license_note=license_note, images=images,
                            name=name or _default_name(out) if NAME in chosen.takes else None,
                            progress=not no_progress)
    for line in chosen.run(source, out, options).lines:
        click.echo(line)
