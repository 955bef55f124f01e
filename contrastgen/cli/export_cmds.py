"""`contrastgen export`: contrast sets as Parquet, a Hugging Face dataset or flat JSONL."""

from __future__ import annotations

from pathlib import Path

import click

from contrastgen.errors import require_extra
from contrastgen.export.write import FORMATS


def register(group: click.Group) -> None:
    group.add_command(export_cmd)


@click.command("export")
@click.argument("out_dir", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True,
              help="parquet: data/{split}-00000-of-00001.parquet (the Hub's layout); hf: a `datasets` "
                   "DatasetDict (save_to_disk); jsonl: {split}.jsonl. Each with a dataset card, README.md.")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="The folder to write (replaced whole).")
@click.option("--split", default="validation", show_default=True, help="The split's name in the dataset.")
@click.option("--license", "license_id", default=None,
              help="Licence identifier for the card (default: the inputs', CC BY 4.0 for GQA and CLEVR).")
@click.option("--license-note", default=None, help="A sentence on the licence, for the card.")
def export_cmd(out_dir: Path, fmt: str, out: Path, split: str, license_id: str | None,
               license_note: str | None) -> None:
    """Write OUT_DIR's contrast sets (`generate`'s output, or a contrast_sets.jsonl) one row per
    perturbation, with the original, the change, the answer and the evidence as nested columns.

    \b
    Examples:
      contrastgen export out/cs --format parquet --out out/cs-parquet
      contrastgen export out/cs --format hf --out out/cs-hf      # datasets.load_from_disk(...)
    """
    if fmt == "hf":
        require_extra("hf", ("datasets",), "`contrastgen export --format hf`")
        import datasets

        datasets.disable_progress_bars()
    from contrastgen.export.write import export

    result = export(out_dir, out, fmt=fmt, split=split, license=license_id, license_note=license_note)
    click.echo(f"wrote {result.rows:,} perturbations of {result.sets:,} contrast sets to {result.out}: "
               + ", ".join(result.files))
