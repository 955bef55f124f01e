"""`contrastgen captions generate|export|baselines`: image-text hard negatives proven false on the
scene graphs (docs/captions.md). `contrastgen verify OUT --scene-graphs SG` re-proves a caption
set as it does a contrast set; `contrastgen evaluate --captions OUT -p scores.csv` scores a model.
"""

from __future__ import annotations

from pathlib import Path

import click

from contrastgen.captions.candidates import ADD_FORMS, KINDS
from contrastgen.captions.generate import CaptionOptions, generate_captions
from contrastgen.cli.options import RNG_SEED, SEED, comma_list, no_progress_option
from contrastgen.errors import require_extra
from contrastgen.export.exporters import ExportOptions, formats, run_export
from contrastgen.files.manifest import CAPTION_SET
from contrastgen.jsonio import dumps


def register(group: click.Group) -> None:
    group.add_command(captions)


@click.group("captions")
def captions() -> None:
    """Image-text hard negatives: true captions, negatives proven false, balanced against text-only models."""


@captions.command("generate")
@click.option("--scene-graphs", "scene_graphs", required=True, type=click.Path(exists=True, path_type=Path),
              help="GQA scene graphs (a JSON file keyed by image id, or a directory of them), or CLEVR / "
                   "Super-CLEVR scenes (a {\"scenes\": [...]} file or a directory of scene files).")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output directory: captions.jsonl and stats.json (replaced whole).")
@click.option("--kinds", callback=comma_list(KINDS), help=f"Comma-separated subset of {','.join(KINDS)} [default: all].")
@click.option("--per-image", default=1, show_default=True, type=click.IntRange(1, 8),
              help="Pairs per kind and image.")
@click.option("--candidates", default=3, show_default=True, type=click.IntRange(1, 32),
              help="Candidate pairs per kind and image the balancing chooses among.")
@click.option("--unbalanced", is_flag=True,
              help="Draw each image's pair from its candidates at random (to measure what balancing does).")
@click.option("--add-form", type=click.Choice(ADD_FORMS),
              help="add_obj / add_att pairs. matched: the caption is the base plus a true addition, the "
                   "negative the base plus a false one, as long as each other. sugarcrepe: SugarCrepe's "
                   "definition, the caption is the base itself (a text-only classifier picks it by its "
                   "length). [default: matched; sugarcrepe with --unbalanced]")
@click.option("--seed", default=0, show_default=True, type=SEED)
@click.option("--workers", type=click.IntRange(1, 64), help="Processes [default: the CPUs, at most 8].")
@no_progress_option
def generate_cmd(scene_graphs: Path, out: Path, kinds: tuple[str, ...], per_image: int, candidates: int,
                 unbalanced: bool, add_form: str | None, seed: int, workers: int | None, no_progress: bool) -> None:
    """Write OUT/captions.jsonl: per image, true captions each with its negatives and their proofs."""
    options = CaptionOptions(per_image=per_image, candidates=max(candidates, per_image),
                             balanced=not unbalanced, seed=seed, kinds=kinds,
                             add_form=add_form)
    stats = generate_captions(scene_graphs, out, options, workers=workers, progress=not no_progress)
    summary = stats.as_dict(options)
    click.echo(f"{stats.images} images, {stats.records} captions, {sum(stats.pairs.values())} negatives "
               f"({'balanced' if options.balanced else 'unbalanced'}; add kinds {options.adds})")
    for kind, row in summary["kinds"].items():
        scorer = row["scorer_picks_positive"]
        click.echo(f"  {kind:<14} {row['pairs']:>7} pairs, {row['images_without']:>6} images without one"
                   + ("" if scorer is None else f", plausibility scorer picks the positive {100 * scorer:.1f}%"))
    for kind, row in summary["kinds"].items():
        check = row["blind_check"]
        if check and check["left_out"] and not check["refused"]:
            click.echo(f"  {kind}: {check['left_out']} of {check['pairs_before']} pairs left out so that "
                       f"no blind model picks the true caption in more than {100 * summary['blind_check']['target']:.0f}%")
    for message in summary["blind_check"]["refused"]:
        click.echo(message, err=True)
    click.echo(f"wrote {out}/captions.jsonl, stats.json")


@captions.command("export")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", required=True, type=click.Choice(formats(CAPTION_SET)),
              help="sugarcrepe: the seven {kind}.json; aro: visual_genome_relation.json and "
                   "visual_genome_attribution.json; hf: a Hugging Face dataset (save_to_disk) with its card; "
                   "negclip: NegCLIP's tab-separated training file, train_neg_clip.tsv.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output directory, replaced whole.")
@click.option("--images", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Folder of {image_id}.jpg|jpeg|png: linked as the loader's image folder (sugarcrepe, aro), "
                   "embedded (hf), or named by absolute path (negclip).")
@click.option("--seed", default=0, show_default=True, type=RNG_SEED, help="Seed of NegCLIP's hard negative images.")
@no_progress_option
def export_cmd(source: Path, fmt: str, out: Path, images: Path | None, seed: int, no_progress: bool) -> None:
    """Write a caption set as a benchmark's own files, read by its loader unchanged."""
    options = ExportOptions(images=images, seed=seed, progress=not no_progress)
    for line in run_export(CAPTION_SET, fmt, source, out, options).lines:
        click.echo(line)


@captions.command("baselines")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option("--seed", default=0, show_default=True, type=RNG_SEED)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
@no_progress_option
def baselines_cmd(source: Path, seed: int, as_json: bool, no_progress: bool) -> None:
    """How often the text alone picks the true caption, per kind: a TF-IDF + logistic regression
    classifier cross-validated over images, and the corpus n-gram plausibility scorer (50% is chance)."""
    require_extra("captions", ("sklearn",), "the text-only classifier")
    from contrastgen.evaluation.caption_baselines import FOLDS, blind_baselines, by_kind, pairs_of
    from contrastgen.records import read_caption_records
    from contrastgen.terminal.progress import progress as progress_bar

    pairs = pairs_of(read_caption_records(source))
    with progress_bar("cross-validating", lambda: len(by_kind(pairs)) * FOLDS, enabled=not no_progress) as advance:
        figures = blind_baselines(pairs, seed=seed, advance=advance)
    if as_json:
        click.echo(dumps(figures, indent=True).decode())
        return
    click.echo(f"{'kind':<14} {'pairs':>7} {'classifier':>11} {'plausibility':>13}")
    for kind, row in figures.items():
        clf = "-" if row["classifier"] is None else f"{100 * row['classifier']:.1f}%"
        click.echo(f"{kind:<14} {row['pairs']:>7} {clf:>11} {100 * row['plausibility']:>12.1f}%")
