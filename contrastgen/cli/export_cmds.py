"""`contrastgen export`: contrast sets as Parquet, a Hugging Face dataset, flat JSONL, or a
benchmark for an evaluation harness (an lmms-eval task folder, VLMEvalKit TSVs)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from contrastgen.cli.options import no_progress_option
from contrastgen.errors import require_extra
from contrastgen.export.write import FORMATS, IMAGE_FORMATS, SPLIT

HARNESS_FORMATS = ("lmms-eval", "vlmevalkit")


def register(group: click.Group) -> None:
    group.add_command(export_cmd)


def _default_name(out: Path) -> str:
    """A benchmark name from the output folder's name (`out/gqa-val` -> `gqa_val`)."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", out.absolute().name).strip("_") or "contrast"


@click.command("export")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS.names() + HARNESS_FORMATS), required=True,
              help="parquet: data/{split}-00000-of-00001.parquet (the Hub's layout); hf: a `datasets` "
                   "DatasetDict (save_to_disk); jsonl: {split}.jsonl. Each with a dataset card, README.md. "
                   "lmms-eval: a task folder for `--include_path` (task contrast_NAME); vlmevalkit: "
                   "Contrast_NAME_OpenEnded.tsv and Contrast_NAME_MCQ.tsv for $LMUData.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The folder to write (replaced whole).")
@click.option("--split", default=None,
              help=f"parquet, hf, jsonl: the split's name in the dataset (default: {SPLIT}, as every export's).")
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
    if fmt in HARNESS_FORMATS:
        if split is not None or license_id is not None or license_note is not None:
            raise click.UsageError("--split, --license and --license-note apply to --format parquet, hf and jsonl")
        _export_harness(source, fmt, out, name or _default_name(out), images, progress=not no_progress)
        return
    if name is not None:
        raise click.UsageError("--name applies to --format lmms-eval and vlmevalkit")
    if images is not None and fmt not in IMAGE_FORMATS:
        raise click.UsageError(f"--images applies to --format {', '.join(IMAGE_FORMATS + HARNESS_FORMATS)}")
    if fmt == "hf" or images is not None:
        require_extra("hf", ("datasets",), f"`contrastgen export --format {fmt}{' --images' if images else ''}`")
        import datasets

        datasets.disable_progress_bars()
    from contrastgen.export.write import export

    result = export(source, out, fmt=fmt, split=split or SPLIT, license=license_id,
                    license_note=license_note, images=images, progress=not no_progress)
    click.echo(f"wrote {result.rows:,} perturbations of {result.sets:,} contrast sets to {result.out}: "
               + ", ".join(result.files))


def _export_harness(source: Path, fmt: str, out: Path, name: str, images: Path | None, *, progress: bool) -> None:
    if fmt == "lmms-eval":
        from contrastgen.export.lmms_eval import export_lmms_eval as export
    else:
        from contrastgen.export.vlmevalkit import export_vlmevalkit as export
    result = export(source, out, name=name, images=images, progress=progress)
    click.echo(f"wrote {result.questions:,} questions of {result.sets:,} contrast sets to {result.out}: "
               + ", ".join(result.files))
    click.echo(f"run: {', '.join(result.names)} (see {result.out / 'README.md'})")
