"""`contrastgen verify OUT_DIR --scene-graphs SG`: re-check a generated contrast set.

Exit codes are the interface for scripts and CI: 0 every perturbation holds, 1 at least one
check failed, 2 the input could not be read (the CLI group turns InputError into 2).
"""

from __future__ import annotations

from pathlib import Path

import click

from contrastgen.cli.backend_option import backend_from, backend_option
from contrastgen.cli.options import no_progress_option
from contrastgen.files import scratch
from contrastgen.files.manifest import (
    CAPTION_SET,
    GQA_REDUNDANCY_LADDER,
    OOD_SUPERCLEVR,
    artifact_kind,
)
from contrastgen.jsonio import dumps
from contrastgen.parallel.backend import default_workers
from contrastgen.records import (
    VerifyReport,
    caption_file,
    contrast_file,
    read_caption_records,
    read_contrast_lines,
)
from contrastgen.terminal.progress import counted, line_count, progress
from contrastgen.verify.rules import load_rules
from contrastgen.verify.sharded import graphs_on_disk, verify_contrast_file


def register(group: click.Group) -> None:
    group.add_command(verify_cmd)


@click.command("verify")
@click.argument("out_dir", type=click.Path(path_type=Path))
@click.option("--scene-graphs", "scene_graphs", required=True, type=click.Path(path_type=Path),
              help="GQA scene graphs (a JSON file keyed by image id, or a directory of them), or CLEVR "
                   "scenes (a {\"scenes\": [...]} file or a directory of scene files).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--show", default=10, show_default=True, type=click.IntRange(min=0),
              help="How many failures to list in the text summary.")
@click.option("--workers", default=None, type=click.IntRange(1, 64),
              help="Worker processes checking the shards of a contrast set (default: CPUs); the report is the same.")
@backend_option
@no_progress_option
def verify_cmd(out_dir: Path, scene_graphs: Path, as_json: bool, show: int, workers: int | None, backend: str,
               address: str | None, no_progress: bool) -> None:
    """Re-check every perturbation in OUT_DIR/contrast_sets.jsonl from its evidence and the graphs.

    OUT_DIR may also be a contrast_sets.jsonl file itself (e.g. a filtered copy), a GQA
    redundancy ladder (`ood gqa-redundancy`), each rung re-proven against the level below it, the
    redundancy splits of `ood superclevr` (rd-, rd, rd+: each question's words read back to its
    program, its answer re-run, each added or dropped relation re-proven to change nothing), or
    the output of `contrastgen captions generate` (or its captions.jsonl): every caption re-read
    and re-proven true, every negative re-proven false, from the graphs.

    The checker shares no code with the generator: it re-runs each evidence query with its own
    executor, checks each fact against the scene graph, and checks presuppositions (unambiguous
    references, no absence of unannotated-prone objects, consistent ranks and ids).
    """
    from contrastgen.verify.gqa_redundancy import verify_ladder_dir
    from contrastgen.verify.superclevr_redundancy import verify_redundancy_dir

    kind = artifact_kind(out_dir)  # the directory's manifest (or an older output's layout) says
    if kind == GQA_REDUNDANCY_LADDER:  # `ood gqa-redundancy`: each rung against the level below it
        report = verify_ladder_dir(out_dir, scene_graphs, progress=not no_progress)
        _report(report, out_dir, load_rules().unannotated_prone_source, as_json, show, "perturbations")
        return
    if kind == OOD_SUPERCLEVR:  # `ood superclevr`: rd-, rd, rd+ read back and re-run
        report = verify_redundancy_dir(out_dir, scene_graphs, progress=not no_progress)
        _report(report, out_dir, load_rules().unannotated_prone_source, as_json, show, "questions")
        return
    if kind == CAPTION_SET:  # `captions generate`: captions true, negatives false
        from contrastgen.verify.captions import verify_captions

        path = caption_file(out_dir)
        captions = read_caption_records(path)  # fails on a missing or empty file before the graph load
        with scratch.folder("verify-") as folder:  # the graphs on disk, each parsed when its captions come
            graphs = graphs_on_disk(scene_graphs, folder)
            with progress("verifying captions", line_count(path), enabled=not no_progress) as advance:
                report = verify_captions(counted(captions, advance), graphs)
        _report(report, path, load_rules().unannotated_prone_source, as_json, show, "captions and negatives")
        return
    path = contrast_file(out_dir)
    records = read_contrast_lines(path)  # fails on a missing or empty file before the slow graph load
    rules = load_rules()
    with progress("verifying", line_count(path), enabled=not no_progress) as advance:
        report = verify_contrast_file(records, path, scene_graphs, rules=rules, backend=backend_from(backend, address),
                                      workers=workers or default_workers(), advance=advance)
    _report(report, path, rules.unannotated_prone_source, as_json, show, "perturbations")


def _report(report: VerifyReport, path: Path, prone_source: str | None, as_json: bool, show: int,
            what: str) -> None:
    if as_json:
        click.echo(dumps(report.as_dict(unannotated_prone_rules=prone_source, file=str(path))).decode(), nl=False)
    else:
        _print_summary(report, path, prone_source, show, what)
    if not report.ok:
        click.get_current_context().exit(1)


def _print_summary(report: VerifyReport, path: Path, prone_source: str | None, show: int, what: str) -> None:
    if prone_source is None:
        click.echo("warning: rules/lexicon/unannotated_prone.txt is absent; absences of "
                   "unannotated-prone objects were not checked", err=True)
    status = "OK" if report.ok else "FAILED"
    groups = f" and {report.groups} two-image groups" if report.groups else ""
    click.echo(f"{path}: {status}: checked {report.checked} {what}{groups}, "
               f"{report.failed_perturbations} failed ({len(report.failures)} problems)")
    if report.failures:
        click.echo("  problems by check: " + ", ".join(f"{k} {n}" for k, n in report.by_check().items()))
    for f in report.failures[:show]:
        where = f.question_id if f.perturbation_id is None else f"{f.perturbation_id} (of {f.question_id})"
        click.echo(f"  [{f.check}] {where}: {f.problem}")
    if len(report.failures) > show:
        click.echo(f"  ... and {len(report.failures) - show} more (use --json for all)")
