"""`contrastgen ood gqa|vqavs|superclevr|gqa-redundancy`: build GQA-OOD, VQA-VS and Super-CLEVR's
splits, and GQA's redundancy ladder.

Scoring predictions on the result is `contrastgen evaluate --ood DIR` (contrastgen.ood.evaluate_ood).
"""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from contrastgen.cli.backend_option import backend_from, backend_option
from contrastgen.cli.console import make_console
from contrastgen.cli.options import RNG_SEED, FiniteRange, comma_list, no_progress_option
from contrastgen.datasets.formats import OOD_FORMATS
from contrastgen.ood.concepts import SHORTCUT_NAMES
from contrastgen.ood.gqa_ood import RULES, GqaOodConfig
from contrastgen.ood.pipeline import run_gqa_ood, run_vqavs
from contrastgen.ood.report import render_build_stats
from contrastgen.ood.vqavs import VqaVsConfig
from contrastgen.ood.vqavs_stream import BATCH_SAMPLES, Workers

_FILE = click.Path(exists=True, dir_okay=True, path_type=Path)


_shortcut_list = comma_list(SHORTCUT_NAMES)


@click.group("ood")
def ood() -> None:
    """Build GQA-OOD, VQA-VS and Super-CLEVR out-of-distribution splits, and GQA's redundancy ladder."""


@ood.command("gqa")
@click.option("--questions", required=True, type=_FILE, help="GQA questions JSON (or a directory of shards).")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Output directory.")
@click.option("--alpha", default=1.2, show_default=True, type=FiniteRange(0.0, min_open=True),
              help="Tail: answers with count <= alpha x the group's mean (released rule: <).")
@click.option("--entropy-threshold", default=0.9, show_default=True, type=FiniteRange(0.0, 1.0, min_open=True),
              help="Keep groups with normalised entropy below this (paper rule only).")
@click.option("--rule", type=click.Choice(RULES), default="paper", show_default=True,
              help="'paper': the paper's thresholds; 'released': the authors' code (mean - std entropy cut).")
@no_progress_option
def gqa_cmd(questions: Path, out: Path, alpha: float, entropy_threshold: float, rule: str, no_progress: bool) -> None:
    """GQA-OOD: head/tail splits of imbalanced local question groups; writes all/head/tail.json."""
    ctx = click.get_current_context()
    if rule == "released" and ctx.get_parameter_source("entropy_threshold") == ParameterSource.COMMANDLINE:
        click.echo("contrastgen: note: --rule released sets its own entropy threshold (mean - std of all "
                   "groups' entropies); --entropy-threshold is ignored", err=True)
    stats = run_gqa_ood(questions, out, GqaOodConfig(alpha=alpha, entropy_threshold=entropy_threshold,
                                                     rule=rule),  # type: ignore[arg-type]
                        progress=not no_progress)
    console = make_console()
    console.print(render_build_stats(stats))
    console.print(f"wrote {out}/all.json, head.json, tail.json, groups.json, stats.json")


@ood.command("vqavs")
@click.option("--questions", required=True, type=_FILE, help="VQA v2 questions, or GQA questions.")
@click.option("--annotations", type=_FILE, help="VQA v2 annotations (ten answers per question); not for GQA.")
@click.option("--objects", type=_FILE,
              help="Objects per image: COCO instances JSON, GQA scene graphs, or {image_id: [names]}.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Output directory.")
@click.option("--format", "data_format", type=click.Choice(OOD_FORMATS.choices()), default="auto", show_default=True)
@click.option("--mi-questions", type=_FILE, help="Estimate MI on this split (e.g. training) instead of the input.")
@click.option("--mi-annotations", type=_FILE, help="Annotations for --mi-questions (VQA).")
@click.option("--mi-objects", type=_FILE, help="Objects for --mi-questions' images (default: --objects).")
@click.option("--shortcuts", callback=_shortcut_list, help=f"Comma-separated subset of {','.join(SHORTCUT_NAMES)}.")
@click.option("--entropy-threshold", default=0.9, show_default=True, type=FiniteRange(0.0, 1.0, min_open=True))
@click.option("--tail-factor", default=1.2, show_default=True, type=FiniteRange(0.0, min_open=True),
              help="Tail: answers with count < this x the group's mean.")
@click.option("--drop-stopwords", is_flag=True, help="Ignore function words (rules/ood/stopwords.txt) as keywords.")
@click.option("--workers", type=click.IntRange(1, 64),
              help="Processes that count and label GQA questions [default: the CPUs, at most 8]. VQA v2 "
                   "input is built in this process; --workers, --batch and --backend apply to GQA input.")
@click.option("--batch", default=BATCH_SAMPLES, show_default=True, type=click.IntRange(1),
              help="Questions per task: larger batches cost less to send, smaller ones spread better.")
@click.option("--iid-split", is_flag=True,
              help="The input is the pool (VQA v2's train and val merged): split it, seeded, into the paper's IID "
                   "training, validation and test sets (iid/), build the OOD sets from the IID test set and "
                   "estimate MI on the training set (unless --mi-questions). Reads the input whole.")
@click.option("--iid-shares", default="0.70,0.05,0.25", show_default=True, metavar="TRAIN,VAL,TEST",
              help="With --iid-split: the shares of the three IID sets.")
@click.option("--seed", default=0, show_default=True, type=RNG_SEED, help="With --iid-split: the seed of the split.")
@backend_option
@no_progress_option
def vqavs_cmd(questions: Path, annotations: Path | None, objects: Path | None, out: Path, data_format: str,
              mi_questions: Path | None, mi_annotations: Path | None, mi_objects: Path | None,
              shortcuts: tuple[str, ...], entropy_threshold: float, tail_factor: float,
              drop_stopwords: bool, workers: int | None, batch: int, iid_split: bool, iid_shares: str, seed: int,
              backend: str, address: str | None, no_progress: bool) -> None:
    """VQA-VS: one OOD test set per shortcut (QT, KW, KWP, QT+KW, KO, KOP, QT+KO, KW+KO, QT+KW+KO),
    and with --iid-split the IID training, validation and test sets they are measured against.

    GQA questions stream (any size fits in memory), and their counting and labelling run on the
    local worker pool or, with --backend ray, on a Ray cluster; the output is the same."""
    from contrastgen.ood.vqavs_iid import IidSplit

    iid = None
    if iid_split:
        try:
            shares = tuple(float(x) for x in iid_shares.split(","))
        except ValueError:
            raise click.BadParameter(f"{iid_shares!r}: give three numbers, e.g. 0.70,0.05,0.25",
                                     param_hint="--iid-shares") from None
        iid = IidSplit(seed=seed, shares=shares)  # type: ignore[arg-type]
    elif iid_shares != "0.70,0.05,0.25" or seed != 0:
        raise click.UsageError("--iid-shares and --seed apply with --iid-split only")
    from contrastgen.datasets.formats import resolve_format
    from contrastgen.parallel.backend import default_workers

    if backend == "ray" and (annotations is not None or mi_annotations is not None or
                             resolve_format(data_format, questions, OOD_FORMATS) != "gqa"):
        raise click.BadParameter("runs GQA input; VQA v2 input is built in this process", param_hint="--backend ray")
    config = VqaVsConfig(entropy_threshold=entropy_threshold, tail_factor=tail_factor,
                         drop_stopwords=drop_stopwords, shortcuts=shortcuts)
    stats = run_vqavs(questions, out, annotations=annotations, objects=objects, data_format=data_format,
                      mi_questions=mi_questions, mi_annotations=mi_annotations, mi_objects=mi_objects,
                      config=config, workers=Workers(backend_from(backend, address), workers or default_workers(), batch),
                      iid=iid, progress=not no_progress)
    console = make_console()
    console.print(render_build_stats(stats))
    skipped = [n for n, s in stats["shortcuts"].items() if "skipped" in s]
    if skipped:
        console.print(f"[yellow]{', '.join(skipped)} skipped: no object annotations; pass --objects "
                      "(COCO instances, GQA scene graphs or an image -> names mapping) to build them.[/yellow]")
    if "iid_split" in stats:
        sizes = stats["iid_split"]["sizes"]
        console.print(f"IID sets (seed {seed}): {sizes['train']:,} training, {sizes['val']:,} validation, "
                      f"{sizes['test']:,} test; the OOD sets are drawn from the test set")
    console.print(f"wrote {out}/ood/, splits.json, answers.json, concepts.jsonl, groups.json, stats.json, stats.md"
                  + (", iid/, iid_val.json" if "iid_split" in stats else ""))


def _variant_list(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    from contrastgen.ood.superclevr_variants import VARIANTS, VISUAL_VARIANTS

    names: list[str] = []
    for item in value:
        for name in (v.strip() for v in item.split(",")):
            if name == "all":
                names += [v for v in VARIANTS if v not in VISUAL_VARIANTS]
            elif name:
                names.append(name)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise click.BadParameter(f"unknown {', '.join(unknown)}; choose from {','.join(VARIANTS)} or all")
    return tuple(dict.fromkeys(names))


def _visual_dirs(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for item in value:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise click.BadParameter(f"{item!r}: give NAME=DIR, e.g. easy=super-clevr-easy/scenes")
        if not Path(path).exists():
            raise click.BadParameter(f"{path}: no such scene file or folder")
        out[name] = Path(path)
    return out


@ood.command("superclevr")
@click.option("--scenes", multiple=True, type=_FILE,
              help="A scene file, a folder of them, or CLEVR's {\"scenes\": [...]}; repeat to pool several "
                   "(real and synthetic scenes, say) to draw variants from.")
@click.option("--questions", "question_files", required=True, multiple=True, type=_FILE,
              help="A CLEVR question file ({\"questions\": [...]}); repeat for several.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Output directory.")
@click.option("--head-share", default=0.5, show_default=True, type=FiniteRange(0.0, 1.0, min_open=True),
              help="Splits: head concepts are the most frequent ones covering this share of the objects.")
@click.option("--train-share", default=0.5, show_default=True, type=FiniteRange(0.0, 1.0),
              help="Splits: hold combinations out while at least this share of the scenes has none of them.")
@click.option("--variant", "variants", multiple=True, callback=_variant_list,
              help="Draw the paper's dataset variants instead of splits: bal, slt, long, head, tail, oppo, co-0, "
                   "co-1, co-2, rd-, rd, rd+, easy, mid, hard (comma-separated or repeated; 'all' for every one "
                   "but the visual ones).")
@click.option("--tolerance", default=0.01, show_default=True, type=FiniteRange(0.0, min_open=True),
              help="Variants: the largest KL(achieved || target), in nats, of each concept block.")
@click.option("--test-share", default=0.2, show_default=True, type=FiniteRange(0.0, 1.0, min_open=True, max_open=True),
              help="Variants: the share of the pool's scenes set aside for test parts.")
@click.option("--train-scenes", type=click.IntRange(1), help="Variants: scenes per training part "
              "[default: the largest every trainable variant reaches].")
@click.option("--test-scenes", type=click.IntRange(1), help="Variants: scenes per test part "
              "[default: the largest each variant reaches].")
@click.option("--seed", default=0, show_default=True, type=RNG_SEED, help="Variants: seed of the pool split and the draws.")
@click.option("--visual", "visual", multiple=True, callback=_visual_dirs, metavar="NAME=DIR",
              help="The released visual-complexity variants' scenes (easy=DIR, mid=DIR, hard=DIR).")
@no_progress_option
def superclevr_cmd(scenes: tuple[Path, ...], question_files: tuple[Path, ...], out: Path, head_share: float,
                   train_share: float, variants: tuple[str, ...], tolerance: float, test_share: float,
                   train_scenes: int | None, test_scenes: int | None, seed: int, visual: dict[str, Path],
                   no_progress: bool) -> None:
    """Super-CLEVR: without --variant, concept-distribution (head / tail), compositionality
    (held-out shape-colour combinations) and question-redundancy (rd- / rd / rd+) splits of existing
    scenes and questions. With --variant, the paper's dataset variants drawn from the scenes given
    (a pool), each within --tolerance of its target distribution or refused, with train and test
    parts and the achieved distributions."""
    if variants or visual:
        from contrastgen.ood.superclevr_variants import (
            VariantConfig,
            render_variants_markdown,
            run_variants,
        )

        config = VariantConfig(variants=variants or tuple(v for v in ("easy", "mid", "hard") if v in visual),
                               tolerance=tolerance, test_share=test_share, seed=seed, train_scenes=train_scenes,
                               test_scenes=test_scenes, visual=visual)
        stats = run_variants(list(scenes), list(question_files), out, config, progress=not no_progress)
        click.echo(render_variants_markdown(stats))
        click.echo(f"wrote {out}/variants/<variant>/train.json, test.json, scenes.json, distribution.png; "
                   "stats.json, stats.md")
        return
    if len(scenes) != 1:
        raise click.UsageError("give one --scenes for the splits (several pool scenes to draw --variant from)")
    from contrastgen.ood.superclevr import SuperClevrConfig, render_markdown, run_superclevr

    stats = run_superclevr(scenes[0], list(question_files), out,
                           SuperClevrConfig(head_share=head_share, train_share=train_share), progress=not no_progress)
    click.echo(render_markdown(stats))
    click.echo(f"wrote {out}/head.json, tail.json, none.json, co_train.json, co_test.json, rd-.json, rd.json, "
               "rd+.json, concepts.json, stats.json, stats.md")


@ood.command("gqa-redundancy")
@click.option("--questions", required=True, type=_FILE, help="GQA questions with programs (a file or a folder of shards).")
@click.option("--scene-graphs", "scene_graphs", required=True, type=_FILE, help="Their GQA scene graphs.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Output directory.")
@click.option("--order", type=click.Choice(["first", "last", "seeded"]), default="first", show_default=True,
              help="Which redundant step a rung removes when several are: the program's earliest, its latest, "
                   "or one drawn with --seed.")
@click.option("--seed", default=0, show_default=True, type=RNG_SEED, help="Seed of --order seeded and of the editor.")
# a level is a step removed from one program; stats.json records the bound as a 64-bit integer
@click.option("--max-level", type=click.IntRange(1, 1000), default=None, help="Climb no higher than this level.")
@no_progress_option
def gqa_redundancy_cmd(questions: Path, scene_graphs: Path, out: Path, order: str, seed: int,
                       max_level: int | None, no_progress: bool) -> None:
    """GQA's redundancy ladder (Super-CLEVR's Table 3): each question with 0, 1, 2, ... redundant
    operations removed, each level proven from the one below; writes level_<n>.json and stats."""
    from contrastgen.programs.redundancy_ladder import (
        LadderConfig,
        render_markdown,
        run_gqa_redundancy,
    )

    stats = run_gqa_redundancy(questions, scene_graphs, out, LadderConfig(order=order, seed=seed, max_level=max_level),
                               progress=not no_progress)
    click.echo(render_markdown(stats), nl=False)
    click.echo(f"wrote {out}/{', '.join(stats['files'])}, stats.json, stats.md")


def register(group: click.Group) -> None:
    group.add_command(ood)
