"""`contrastgen mturk export | preview | ingest`: crowd verification on Mechanical Turk.

Thin wrappers over `contrastgen.mturk`; heavy imports (pandas, crowd-kit, statsmodels) happen
inside the commands so `contrastgen --help` stays fast. They are the `contrastgen[crowd]` extra:
each command first checks that what it imports is installed, and names the extra if not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from contrastgen.cli.console import make_console
from contrastgen.cli.options import CROWD_COUNT, RNG_SEED, FiniteRange, no_progress_option
from contrastgen.errors import require_extra

# What the commands import: the HIT layout (export, preview, simulate), and the scoring (ingest).
LAYOUT_MODULES = ("jinja2",)
SCORING_MODULES = ("jinja2", "pandas", "crowdkit", "sklearn", "statsmodels")


def _require_crowd(command: str, modules: tuple[str, ...] = LAYOUT_MODULES) -> None:
    require_extra("crowd", modules, f"`contrastgen mturk {command}`")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _ci(ci: list[float | None]) -> str:
    lo, hi = ci
    return "" if lo is None or hi is None else f"[{100 * lo:.1f}, {100 * hi:.1f}]"


@click.group("mturk")
def mturk_group() -> None:
    """Crowd verification: export blinded HITs, preview them, score the results."""


@mturk_group.command("export")
@click.option("--contrast", "contrast", required=True, type=click.Path(path_type=Path),
              help="Output directory of `contrastgen generate` (or its contrast_sets.jsonl).")
@click.option("--images-base-url", default=None,
              help="Where workers' browsers fetch images: {URL}/{image_id}.jpg, or the file --images finds "
                   "(use https for MTurk). Default with --images: that folder as a file:// URL (previews).")
@click.option("--images", "images", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="The folder of the real images ({image_id}.jpg|jpeg|png, e.g. Super-CLEVR's PNGs): URLs name "
                   "each image's own file, and a sampled image without one is an error.")
@click.option("--sample", required=True, type=CROWD_COUNT, help="Number of images; each gives an original and a perturbed question.")
@click.option("--seed", default=0, show_default=True, type=RNG_SEED, help="Seed of sampling, shuffling and item tokens.")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path), help="HIT directory to write (replaced atomically).")
@click.option("--assignments", default=3, show_default=True, type=CROWD_COUNT, help="Workers per HIT.")
# a worker's page shows every item of its HIT; past a hundred the page (and its layout, made for
# every slot) is no task, and 10**8 ran on for minutes building it
@click.option("--items-per-hit", default=10, show_default=True, type=click.IntRange(1, 100), help="Questions per HIT (gold included).")
@click.option("--reward", default="0.10", show_default=True, help="Reward per assignment in US dollars.")
@click.option("--gold", "gold", type=click.Path(path_type=Path), default=None,
              help="Gold items (JSON list or JSONL of {id?, image_id, question, answer|answers, image_url?}).")
@click.option("--gold-per-hit", default=1, show_default=True, type=CROWD_COUNT, help="Gold items per HIT when --gold is given.")
@click.option("--title", default=None, help="HIT title shown to workers.")
@no_progress_option
def export_cmd(contrast: Path, images_base_url: str | None, images: Path | None, sample: int, seed: int, out: Path,
               assignments: int, items_per_hit: int, reward: str, gold: Path | None, gold_per_hit: int,
               title: str | None, no_progress: bool) -> None:
    """Sample images stratified by template and write a blinded MTurk batch to OUT.

    OUT/upload/ holds what goes to MTurk (batch_input.csv, hit_layout.html, question.xml,
    hit_properties.json, api_hits.jsonl); OUT/manifest.json is private and maps items back.
    """
    _require_crowd("export")
    from contrastgen.mturk import export_hits, load_gold
    from contrastgen.mturk.export import image_files
    from contrastgen.mturk.layout import DEFAULT_TITLE
    from contrastgen.records import contrast_file, read_contrast_records
    from contrastgen.terminal.progress import line_count
    from contrastgen.terminal.progress import progress as progress_bar

    if images_base_url is None and images is None:
        raise click.UsageError("give --images-base-url, --images, or both")
    files = image_files(images) if images is not None else None
    base_url = images_base_url or images.resolve().as_uri()  # type: ignore[union-attr]
    lines = line_count(contrast_file(contrast))
    gold_items = load_gold(gold) if gold is not None else None
    # the records stream unvalidated into the library call, which validates each once
    with progress_bar("reading contrast sets", lines, enabled=not no_progress) as advance:
        summary = export_hits(read_contrast_records(contrast), images_base_url=base_url, sample=sample, seed=seed, files_by_image=files,
                              assignments=assignments, items_per_hit=items_per_hit, reward=reward,
                              gold=gold_items, out_dir=out, gold_per_hit=gold_per_hit,
                              title=title or DEFAULT_TITLE, source=str(contrast_file(contrast)), advance=advance)
    console = make_console()
    table = Table(title=f"MTurk batch in {out}")
    table.add_column("template")
    table.add_column("images", justify="right")
    for template, n in summary.per_template.items():
        table.add_row(template, str(n))
    table.add_row("[b]total[/b]", f"[b]{summary.n_images}[/b]")
    console.print(table)
    console.print(f"{summary.n_hits} HITs x {summary.assignments} assignments, {summary.n_items} item slots "
                  f"({summary.n_gold_slots} gold, {summary.n_padding_slots} padding); reward ${summary.reward} "
                  f"per assignment, ${summary.cost_estimate} before MTurk fees.")
    for warning in summary.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    console.print(f"upload: {out / 'upload'}   private (do not upload): {out / 'manifest.json'}")


@mturk_group.command("preview")
@click.argument("hit_dir", type=click.Path(path_type=Path))
@click.option("--hits", "n_hits", default=3, show_default=True, type=CROWD_COUNT, help="How many HITs to show.")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None, help="Page to write (default HIT_DIR/preview.html).")
def preview_cmd(hit_dir: Path, n_hits: int, out: Path | None) -> None:
    """Write a self-contained offline page showing the first HITs as workers will see them."""
    _require_crowd("preview")
    from contrastgen.mturk import render_preview

    path = render_preview(hit_dir, n_hits=n_hits, out=out)
    click.echo(f"wrote {path}; open it in a browser (file://{path.resolve()})")


def _print_report(report: dict[str, Any], console: Console) -> None:
    table = Table(title="Human accuracy (crowd majority vs computed answer)")
    for col in ("questions", "items", "majority acc.", "95% CI", "rating acc.", "95% CI"):
        table.add_column(col, justify="right" if col != "questions" else "left")
    for role in ("original", "perturbed"):
        a = report["accuracy"][role]
        table.add_row(role, str(a["items"]), _pct(a["majority_accuracy"]), _ci(a["majority_accuracy_ci95"]),
                      _pct(a["rating_accuracy"]), _ci(a["rating_accuracy_ci95"]))
    console.print(table)
    ag = report["agreement"]["all"]

    def fmt(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    console.print(f"Fleiss' kappa {fmt(ag['fleiss_kappa'])} ({ag['fleiss_items']} items x {ag['fleiss_raters']} raters), "
                  f"Cohen's kappa {fmt(ag['cohen_kappa'])} ({ag['cohen_items']} items), "
                  f"Krippendorff's alpha {fmt(ag['krippendorff_alpha'])}")
    gap = report["gap"]
    console.print(f"gap original - perturbed: {_pct(gap['original_minus_perturbed'])} {_ci(gap['ci95'])} "
                  f"over {gap['pairs']} pairs; {report['review_counts']['perturbed']} perturbations to review; "
                  f"{len(report['workers']['flagged'])} workers flagged by gold")


@mturk_group.command("ingest")
@click.option("--manifest", "manifest", required=True, type=click.Path(path_type=Path),
              help="HIT_DIR/manifest.json written by `contrastgen mturk export`.")
@click.option("--results", "results", required=True, multiple=True, type=click.Path(path_type=Path),
              help="MTurk batch results CSV (Batch_*_batch_results.csv); repeat for several.")
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="Report directory: report.json, report.md, items.jsonl, review.jsonl, workers.jsonl.")
@click.option("--min-gold-accuracy", default=0.7, show_default=True, type=FiniteRange(0, 1),
              help="Workers below this accuracy on gold items are flagged.")
@click.option("--exclude-flagged", is_flag=True, help="Drop flagged workers' answers before scoring.")
@click.option("--aggregator", type=click.Choice(["majority", "dawid-skene"]), default="majority",
              show_default=True, help="How answers per item are aggregated (crowd-kit).")
@click.option("--seed", default=0, show_default=True, type=RNG_SEED, help="Seed of the bootstrap intervals.")
def ingest_cmd(manifest: Path, results: tuple[Path, ...], out: Path, min_gold_accuracy: float,
               exclude_flagged: bool, aggregator: str, seed: int) -> None:
    """Score MTurk results: accuracy on originals vs perturbations, agreement, items to review."""
    _require_crowd("ingest", SCORING_MODULES)
    from contrastgen.mturk import ingest_results

    report = ingest_results(manifest, list(results), out=out, min_gold_accuracy=min_gold_accuracy,
                            exclude_flagged=exclude_flagged, aggregator=aggregator, seed=seed)
    console = make_console()
    _print_report(report, console)
    console.print(f"wrote report.md, report.json, items.jsonl, review.jsonl, workers.jsonl to {out}")


@mturk_group.command("simulate")
@click.argument("hit_dir", type=click.Path(path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(path_type=Path), help="Results CSV to write.")
@click.option("--seed", default=0, show_default=True, type=RNG_SEED)
@click.option("--accuracy-original", default=0.85, show_default=True, type=FiniteRange(0, 1))
@click.option("--accuracy-perturbed", default=0.8, show_default=True, type=FiniteRange(0, 1))
@click.option("--rejected-rate", default=0.0, show_default=True, type=FiniteRange(0, 1), help="Share of assignments marked Rejected.")
@click.option("--workers", default=12, show_default=True, type=CROWD_COUNT, help="Size of the simulated worker pool.")
def simulate_cmd(hit_dir: Path, out: Path, seed: int, accuracy_original: float, accuracy_perturbed: float,
                 rejected_rate: float, workers: int) -> None:
    """Dry run: write a results CSV in MTurk's layout from a simulated crowd (no real answers)."""
    _require_crowd("simulate")
    from contrastgen.mturk.simulate import CrowdModel, simulate_results

    model = CrowdModel(accuracy_original=accuracy_original, accuracy_perturbed=accuracy_perturbed,
                       rejected_rate=rejected_rate, workers=workers)
    path = simulate_results(hit_dir, out=out, seed=seed, model=model)
    click.echo(f"wrote simulated results to {path} (a dry run: not real workers' answers)")


def register(group: click.Group) -> None:
    group.add_command(mturk_group)
