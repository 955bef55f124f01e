"""`contrastgen match | generate | augment | demo`: the engine's commands."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from contrastgen.cli.backend_option import backend_from, backend_option
from contrastgen.cli.console import make_console
from contrastgen.cli.options import RNG_SEED, SEED, FiniteRange, no_progress_option
from contrastgen.families import FAMILIES, Family
from contrastgen.jsonio import dumps
from contrastgen.resources import sample_dir
from contrastgen.run.pipeline import RunRequest, family_for, family_options


def _engine():
    from contrastgen.engine import Engine
    return Engine.load()


def sample_paths() -> tuple[Path, Path]:
    """The sample dataset that ships inside the package."""
    base = sample_dir()
    return base / "questions.json", base / "scene_graphs.json"


_templates_option = click.option(
    "--templates", "templates", multiple=True, metavar="ID",
    help="Only these template ids (repeat the option, or give a comma-separated list).")


def _split(templates: tuple[str, ...]) -> list[str] | None:
    ids = [t.strip() for group in templates for t in group.split(",") if t.strip()]
    return ids or None


@click.command("match")
@click.argument("questions", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--all", "show_all", is_flag=True, help='Also print unmatched questions ("template": null).')
@_templates_option
def match_cmd(questions: Path, show_all: bool, templates: tuple[str, ...]) -> None:
    """Print one JSONL line per (question, matched template) with its slots and head nouns."""
    from contrastgen.datasets.gqa import load_questions

    engine = _engine()
    chosen = engine.select_templates(_split(templates))
    out = sys.stdout.buffer
    for qid, q in load_questions(questions).items():
        found = engine.match(q["question"], chosen)
        for m in found:
            out.write(dumps({"question_id": qid, "template": m.template.id, "slots": engine.slots_of(m)}))
        if not found and show_all:
            out.write(dumps({"question_id": qid, "template": None, "slots": {}}))


_mode_option = click.option(
    "--mode", type=click.Choice(["templates", "programs", "both"]), default="templates", show_default=True,
    help="templates: the paper's six; programs: edit the program of a question that has one (the "
         "templates for one that has none); both.")


_format_option = click.option(
    "--format", "data_format", type=click.Choice(["auto", *FAMILIES.names()]), default="auto", show_default=True,
    help="The dataset family; auto: CLEVR for {\"questions\": [...]} files, else GQA.")


@click.command("generate")
@click.option("--questions", "question_paths", required=True, multiple=True, type=click.Path(path_type=Path),
              help="GQA questions (one JSON file or a directory of shards), or a CLEVR/Super-CLEVR "
                   "{\"questions\": [...]} file or directory of them; give it again to read several.")
@click.option("--scene-graphs", required=True, type=click.Path(path_type=Path),
              help="GQA scene graphs JSON, or CLEVR scenes: one file or a directory of scene files.")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output directory (replaced atomically).")
@click.option("--max-k", default=5, show_default=True, type=click.IntRange(1, 50),
              help="Perturbations per question and template at most.")
@click.option("--seed", default=0, show_default=True, type=SEED)
@click.option("--workers", default=None, type=click.IntRange(1, 64), help="Worker processes (default: CPUs).")
@no_progress_option
@_templates_option
@_mode_option
@backend_option
@_format_option
@click.option("--images", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="The folder of the images ({image_id}.jpg|jpeg|png): each record names its file "
                   "(`image_file`); a missing image is an error.")
@click.option("--groups", is_flag=True,
              help="Also look for two-image groups: for each pair with programs, another image on which both "
                   "questions are proven and the original's answer differs (docs/groups.md).")
def generate_cmd(question_paths: tuple[Path, ...], scene_graphs: Path, out: Path, max_k: int, seed: int,
                 workers: int | None, no_progress: bool, templates: tuple[str, ...], mode: str,
                 backend: str, address: str | None, data_format: str, images: Path | None, groups: bool) -> None:
    """Generate contrast sets with proven answers; writes OUT atomically."""
    from contrastgen.run.pipeline import run_generate

    questions = _one_or_all(question_paths)
    family = family_for(data_format, questions)
    request = RunRequest(questions, scene_graphs, family.name, max_k=max_k, seed=seed, workers=workers,
                         progress=not no_progress, backend=backend_from(backend, address), groups=groups,
                         options=family_options(family, {"templates": _split(templates), "mode": mode}))
    gen, timings = run_generate(request, out, images=images)
    from contrastgen.results.stats import stats_table
    console = make_console(stderr=True)
    console.print(stats_table(gen.stats))
    if "groups" in gen.stats:
        g = gen.stats["groups"]
        console.print(f"groups: {g['grouped']:,} of {g['pairs']:,} pairs ({g['swap']:,} swaps, {g['differs']:,} "
                      "differs); reasons in stats.json")
    _warn_missing_graphs(gen.stats)
    _warn_family(family, gen.stats, family.options(request.options))
    click.echo("seconds: " + ", ".join(f"{name} {sec:.1f}" for name, sec in timings.items()), err=True)
    console.print(f"wrote {out}")


def _warn_missing_graphs(stats: dict) -> None:
    """Questions whose image has no scene graph are kept unperturbed (`no_scene_graph` in the
    stats); a run where that happens is most likely given the wrong split's graphs."""
    missing = stats.get("images", 0) - stats.get("images_with_scene_graph", stats.get("images", 0))
    if missing:
        click.echo(f"warning: {missing:,} of {stats['images']:,} images have no scene graph; "
                   "their questions are not perturbed", err=True)


def _one_or_all(paths: tuple[Path, ...]) -> Path | tuple[Path, ...]:
    """`--questions` given once is that path; given several times, all of them, read in order."""
    return paths[0] if len(paths) == 1 else paths


def _warn_family(family: Family, stats: dict, options: object) -> None:
    """The family's own warnings about what its input left undone (GQA: no program to edit)."""
    for warning in family.warnings(stats, options):
        click.echo(f"warning: {warning}", err=True)


@click.command("augment")
@click.option("--questions", "question_paths", required=True, multiple=True, type=click.Path(path_type=Path),
              help="Training questions (GQA or CLEVR-family); give it again to read several.")
@click.option("--scene-graphs", required=True, type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output JSON file (GQA format).")
@click.option("--max-k", default=5, show_default=True, type=click.IntRange(1, 50))
@click.option("--seed", default=0, show_default=True, type=SEED)
@click.option("--replace", is_flag=True, help="Drop as many originals as perturbations added (same size).")
@click.option("--replace-share", default=0.5, show_default=True, type=FiniteRange(0, 1, min_open=True),
              help="With --replace: the share of the originals that may be replaced at most; the "
                   "perturbations beyond it (the highest ranks first) are left out.")
@click.option("--lxmert-out", type=click.Path(path_type=Path),
              help="The same questions in LXMERT's format [default: OUT with .lxmert before its suffix].")
@click.option("--workers", default=None, type=click.IntRange(1, 64))
@no_progress_option
@_templates_option
@_mode_option
@backend_option
@_format_option
def augment_cmd(question_paths: tuple[Path, ...], scene_graphs: Path, out: Path, max_k: int, seed: int,
                replace: bool, replace_share: float, lxmert_out: Path | None, workers: int | None, no_progress: bool,
                templates: tuple[str, ...], mode: str,
                backend: str, address: str | None, data_format: str) -> None:
    """Write training questions plus their perturbations, in GQA format and in LXMERT's.

    CLEVR-family input gives the same file keyed by question id, each entry a CLEVR question record
    with its program (the originals' recovered, the perturbations' edited)."""
    from contrastgen.run.pipeline import run_augment
    from contrastgen.writers.augmented import lxmert_path

    questions = _one_or_all(question_paths)
    lxmert = lxmert_out or lxmert_path(out)
    family = family_for(data_format, questions)
    request = RunRequest(questions, scene_graphs, family.name, max_k=max_k, seed=seed, workers=workers,
                         progress=not no_progress, backend=backend_from(backend, address),
                         options=family_options(family, {"templates": _split(templates), "mode": mode}))
    gen, counts = run_augment(request, out, lxmert_file=lxmert, replace=replace, replace_share=replace_share)
    _warn_family(family, gen.stats, family.options(request.options))
    _warn_missing_graphs(gen.stats)
    click.echo(f"wrote {out} and {lxmert}: {counts['original']} originals + {counts['added']} perturbations"
               f" - {counts['dropped']} dropped = {counts['total']} questions", err=True)
    if replace:
        click.echo(f"--replace: {counts['dropped']} of {counts['original']} originals "
                   f"({100 * counts['dropped'] / max(counts['original'], 1):.1f}%) replaced by as many perturbations",
                   err=True)
        if counts["left_out"]:
            click.echo(f"--replace: {counts['left_out']} perturbations left out: at most "
                       f"{replace_share:.0%} of the originals may be replaced (--replace-share)", err=True)


@click.command("demo")
@click.option("--out", default="out/demo", show_default=True, type=click.Path(path_type=Path))
@click.option("--seed", default=0, show_default=True, type=RNG_SEED)
def demo_cmd(out: Path, seed: int) -> None:
    """The whole loop on the bundled sample data: generate, verify, baselines, evaluation."""
    from contrastgen.evaluation.demo import DemoRejected, run_demo

    try:
        run_demo(out, seed=seed, show=make_console().print)
    except DemoRejected as exc:
        raise click.ClickException(str(exc)) from None


def register(group: click.Group) -> None:
    for cmd in (match_cmd, generate_cmd, augment_cmd, demo_cmd):
        group.add_command(cmd)
