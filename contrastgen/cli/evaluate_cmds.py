"""`contrastgen evaluate` and `contrastgen baseline`.

Thin wrappers: parsing options, loading files and printing; the metrics live in
`contrastgen.evaluation` so the HTTP service computes exactly the same numbers.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from contrastgen.cli.console import make_console
from contrastgen.cli.options import RNG_SEED, no_progress_option
from contrastgen.errors import InputError, require_extra
from contrastgen.evaluation.bootstrap import MAX_RESAMPLES
from contrastgen.evaluation.contrast import MAX_RANK
from contrastgen.files.atomic import atomic_dir
from contrastgen.jsonio import write_json
from contrastgen.terminal.progress import progress as progress_bar

_GLOB_CHARS = frozenset("*?[")


def expand_pattern(path: Path) -> Path:
    """A path as given, or the one file its glob pattern matches.

    The shell expands no pattern after `NAME=` (`-p m=results/*/x_*.jsonl` reaches us as
    written), and the exported READMEs write the harnesses' dated file names as patterns. A
    pattern matching several files is refused with the matches named: a second match is almost
    always a second run (lmms-eval dates each samples file, VLMEvalKit each run folder), and
    picking one silently would score a run the user did not mean."""
    text = str(path)
    if path.exists() or not _GLOB_CHARS & set(text):
        return path
    matches = sorted(glob.glob(os.path.expanduser(text), recursive=True))
    if not matches:
        raise InputError("file not found (no file matches this pattern)", path=text)
    if len(matches) > 1:
        shown = ", ".join(matches[:5]) + (f" and {len(matches) - 5} more" if len(matches) > 5 else "")
        raise InputError(f"the pattern matches {len(matches)} files ({shown}): two runs? give one "
                         "file, or repeat -p NAME=PATH for each run", path=text)
    return Path(matches[0])


def parse_model_paths(values: tuple[str, ...]) -> dict[str, Path]:
    """`NAME=PATH` or `PATH` (named after the file's stem) -> {name: path}, names unique. PATH may
    be a glob pattern matching one file (`expand_pattern`)."""
    out: dict[str, Path] = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if sep and name and "/" not in name and not Path(value).exists():
            path = expand_pattern(Path(rest))
        else:
            path = expand_pattern(Path(value))
            name = path.stem
        if name in out:
            raise InputError(f"two prediction files are both named {name!r}; name them with "
                             "NAME=PATH", path=str(path))
        out[name] = path
    return out


def load_all_predictions(paths: dict[str, Path]) -> dict[str, dict[str, str]]:
    from contrastgen.evaluation.predictions import load_predictions

    return {name: load_predictions(path) for name, path in paths.items()}


def check_report_dir(out: Path) -> None:
    """Refuse to replace a directory that is not an earlier report: `--out ~/results` must not
    wipe a user's files. A previous report is replaced as a whole (atomically)."""
    if out.is_file():
        raise InputError("--out must be a directory, not a file", path=str(out))
    if out.is_dir() and any(out.iterdir()) and not (out / "report.json").is_file():
        raise InputError("directory exists and is not a contrastgen report; give a new or an "
                         "empty directory for --out", path=str(out))


def _write(report: dict[str, Any], out: Path | None, console: Console) -> None:
    from contrastgen.evaluation.report import render_report, write_report

    if out is not None:
        check_report_dir(out)
    console.print(render_report(report))
    if out is not None:
        with atomic_dir(out) as tmp:
            written = write_report(report, tmp)
        console.print(f"wrote {', '.join(written)} to {out}")


@click.command("evaluate")
@click.option("--contrast", "contrast_dir", type=click.Path(path_type=Path),
              help="Output directory of `contrastgen generate` (or its contrast_sets.jsonl).")
@click.option("--questions", "questions_path", type=click.Path(path_type=Path),
              help="GQA questions file/dir: GQA's standard metrics instead of contrast sets.")
@click.option("--ood", "ood_dir", type=click.Path(path_type=Path),
              help="Output directory of `contrastgen ood`: GQA-OOD / VQA-VS metrics.")
@click.option("--captions", "captions_dir", type=click.Path(path_type=Path),
              help="Output directory of `contrastgen captions generate`: -p is then a similarity file "
                   "(image_id, caption_id, score; CSV, TSV or JSON lines), scored per kind beside the "
                   "two text-only baselines.")
@click.option("--predictions", "-p", "prediction_args", multiple=True, required=True,
              metavar="[NAME=]PATH",
              help="Predictions (GQA submission, {qid: answer}, LXMERT or VQA results; as JSON, JSON lines, "
                   "Parquet, or a folder of Parquet files or a Hugging Face dataset), or what a harness wrote "
                   "for an export: lmms-eval's --log_samples file (<date>_samples_contrast_NAME.jsonl, not "
                   "its _results.json), VLMEvalKit's prediction or MCQ result file (.xlsx, .tsv, .csv, "
                   ".json). PATH may be a quoted glob pattern matching one file. Repeat to compare "
                   "models side by side; a model is named after its file unless NAME= is given. On Super-CLEVR "
                   "variants, name the variant it was trained on: -p nscl@long=PATH (Relative Degrade per factor).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Report directory: report.md, report.json, report.csv and plots (PNG, SVG).")
@click.option("--seed", default=0, show_default=True, type=RNG_SEED, help="Seed of the bootstrap and the examples.")
@click.option("--n-boot", default=1000, show_default=True, type=click.IntRange(0, MAX_RESAMPLES),
              help="Bootstrap resamples (0: no CIs).")
@click.option("--examples", default=0, show_default=True, type=click.IntRange(0),
              help="List N failing contrast sets per model, with their evidence.")
@click.option("--k", "ks", type=click.IntRange(1, MAX_RANK), multiple=True,
              help="k values to report (default 1, 3, 5 up to the largest rank).")
@click.option("--oracle", default=None,
              help="Model whose disagreement with GQA is reported as annotation noise "
                   "(default: a model named 'oracle').")
@click.option("--strict", is_flag=True,
              help="A question without a prediction is an error. Without it, on --contrast a run that leaves "
                   "questions unasked (a --limit'ed harness run, an MCQ file) is partial: scored on the contrast "
                   "sets asked in full, with the unasked count reported; elsewhere it counts as wrong.")
@no_progress_option
def evaluate_cmd(contrast_dir: Path | None, questions_path: Path | None, ood_dir: Path | None,
                 captions_dir: Path | None, prediction_args: tuple[str, ...], out: Path | None, seed: int, n_boot: int,
                 examples: int, ks: tuple[int, ...], oracle: str | None, strict: bool, no_progress: bool) -> None:
    """Score predictions on a contrast set (accuracy, drop, consistency per template and k),
    on GQA questions (GQA's standard metrics) or on OOD splits.

    \b
    Examples:
      contrastgen evaluate --contrast cs -p lxmert=pred.json -p prior.json --out report --examples 20
      contrastgen evaluate --contrast cs -p llava='results/*/*_samples_contrast_gqa.jsonl'
      contrastgen evaluate --questions val_balanced_questions.json -p pred.json
      contrastgen evaluate --ood ood_dir -p pred.json
      contrastgen evaluate --captions captions_dir -p clip=scores.csv
    """
    chosen = [x for x in (contrast_dir, questions_path, ood_dir, captions_dir) if x is not None]
    if len(chosen) != 1:
        raise click.UsageError("give exactly one of --contrast, --questions, --ood, --captions")
    if contrast_dir is None and (examples or ks):
        raise click.UsageError("--examples and --k apply to --contrast only")
    console = make_console()
    if captions_dir is not None:
        _evaluate_captions(captions_dir, prediction_args, out, seed, n_boot, strict, progress=not no_progress)
        return
    if out is not None:  # before the work, so a wrong --out costs nothing
        check_report_dir(out)
    paths = parse_model_paths(prediction_args)
    predictions = load_all_predictions(paths)
    inputs = {"predictions": {name: str(p) for name, p in paths.items()}}
    if contrast_dir is not None:
        from contrastgen.evaluation.contrast import evaluate_contrast
        from contrastgen.records import contrast_file, load_contrast_records

        records = load_contrast_records(contrast_dir)
        report = evaluate_contrast(records, predictions, seed=seed, n_boot=n_boot,
                                   examples=examples, strict=strict, ks=ks or None,
                                   oracle=oracle, path=str(contrast_file(contrast_dir)), proofs=True,
                                   progress=not no_progress)
        report["inputs"] = {"contrast": str(contrast_dir), **inputs}
    elif questions_path is not None:
        from contrastgen.datasets.gqa import load_questions
        from contrastgen.evaluation.gqa_metrics import evaluate_gqa

        report = evaluate_gqa(load_questions(questions_path), predictions, seed=seed,
                              n_boot=n_boot, strict=strict, oracle=oracle,
                              path=str(questions_path), progress=not no_progress)
        report["inputs"] = {"questions": str(questions_path), **inputs}
    else:
        _evaluate_ood(ood_dir, predictions, out, seed, console, progress=not no_progress)
        return
    _write(report, out, console)


def _evaluate_ood(ood_dir: Path, predictions: dict[str, dict[str, str]], out: Path | None,
                  seed: int, console: Console, *, progress: bool) -> None:
    try:
        from contrastgen.ood import evaluate_ood, render_ood_table  # only --ood loads the OOD stack
    except ImportError:
        raise InputError("OOD evaluation is not available in this build "
                         "(contrastgen.ood.evaluate_ood is missing)") from None
    report = evaluate_ood(ood_dir, predictions, out_dir=out, seed=seed, progress=progress)
    console.print(render_ood_table(report))
    if out is not None:
        console.print(f"wrote the OOD report to {out}")


def _evaluate_captions(captions_dir: Path, prediction_args: tuple[str, ...], out: Path | None, seed: int,
                       n_boot: int, strict: bool, *, progress: bool) -> None:
    require_extra("captions", ("sklearn",), "evaluate --captions (its text-only classifier baseline)")
    from contrastgen.evaluation.captions import (
        evaluate_captions,
        read_similarities,
        render_caption_table,
    )
    from contrastgen.records import caption_file, read_caption_records

    reports = {}
    paths = parse_model_paths(prediction_args)
    with progress_bar("evaluating captions", len(paths) * n_boot, enabled=progress and n_boot > 0) as advance:
        for name, path in paths.items():
            report = evaluate_captions(read_caption_records(captions_dir), read_similarities(path), n_boot=n_boot,
                                       seed=seed, strict=strict, path=str(path), advance=advance)
            report["inputs"] = {"captions": str(caption_file(captions_dir)), "similarities": str(path)}
            reports[name] = report
    for name, report in reports.items():  # after the bar: a table printed under a live bar would break it
        click.echo(f"{name}:\n{render_caption_table(report)}")
    if out is not None:
        with atomic_dir(out) as tmp:
            write_json(tmp / "report.json", reports, indent=True)
        click.echo(f"wrote report.json to {out}")


@click.command("baseline")
@click.option("--kind", type=click.Choice(["prior", "oracle", "constant"]), required=True,
              help="prior: most frequent training answer per template; oracle: answers from the "
                   "scene graph; constant: --answer to every question.")
@click.option("--questions", "questions_path", type=click.Path(path_type=Path), required=True,
              help="Questions to answer, GQA format (e.g. DIR/augmented.json of a contrast set).")
@click.option("--scene-graphs", "scene_graphs_path", type=click.Path(path_type=Path),
              help="Scene graphs (required for the oracle).")
@click.option("--train", "train_path", type=click.Path(path_type=Path),
              help="Training questions for the prior (default: --questions, fitted in-sample).")
@click.option("--answer", default=None, help="The constant model's answer (e.g. yes).")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Predictions file to write, GQA submission format.")
@no_progress_option
def baseline_cmd(kind: str, questions_path: Path, scene_graphs_path: Path | None,
                 train_path: Path | None, answer: str | None, out: Path, no_progress: bool) -> None:
    """Write a baseline's predictions, to evaluate like a model's.

    \b
    Examples:
      contrastgen baseline --kind prior --questions cs/augmented.json --train train.json --out prior.json
      contrastgen baseline --kind oracle --questions cs/augmented.json --scene-graphs sg.json --out oracle.json
      contrastgen baseline --kind constant --answer yes --questions cs/augmented.json --out yes.json
    """
    from contrastgen.evaluation.baselines import to_submission
    from contrastgen.evaluation.run_baselines import run_constant, run_oracle, run_prior

    if (answer is not None) != (kind == "constant"):
        raise click.UsageError("--answer goes with --kind constant, and only with it")
    console = make_console(stderr=True)
    if kind == "constant":
        preds, stats = run_constant(questions_path, answer)
    elif kind == "prior":
        preds, stats = run_prior(questions_path, train_path, progress=not no_progress)
        if train_path is None:
            console.print("prior fitted on the questions themselves (no --train): an in-sample "
                          "prior, optimistic on the originals", style="yellow")
    else:
        if scene_graphs_path is None:
            raise click.UsageError("--kind oracle needs --scene-graphs")
        preds, stats = run_oracle(questions_path, scene_graphs_path, progress=not no_progress)
    write_json(out, to_submission(preds))
    summary = ", ".join(f"{k} {v}" for k, v in stats.items())
    console.print(f"{kind}: {len(preds)} predictions ({summary}) -> {out}")


def register(group: click.Group) -> None:
    group.add_command(evaluate_cmd)
    group.add_command(baseline_cmd)
