"""The end of `make demo`: both baselines on the demo's contrast set, evaluated and tabulated.

A new user should see the whole loop (generate, answer, evaluate) in one command, and see the
point of contrast sets at once: the prior, a pure shortcut, collapses on the perturbations,
while the scene-graph oracle scores 100% on them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType

from contrastgen.datasets.gqa import load_questions, load_scene_graphs
from contrastgen.evaluation.baselines import oracle_predictions, prior_predictions, to_submission
from contrastgen.evaluation.contrast import evaluate_contrast
from contrastgen.evaluation.report import render_report, write_report
from contrastgen.evaluation.run_baselines import is_perturbation, template_resolver
from contrastgen.jsonio import write_json
from contrastgen.records import contrast_file, load_contrast_records

if TYPE_CHECKING:
    from contrastgen.engine import Engine
    from contrastgen.run.pipeline import RunRequest

AUGMENTED_FILE = "augmented.json"


class DemoRejected(Exception):
    """The independent verifier rejected perturbations the demo generated: a bug, said loudly."""


def run_demo(out: str | os.PathLike[str], *, seed: int = 0,
             show: Callable[[RenderableType], None] = lambda _: None) -> None:
    """`contrastgen demo`: the whole loop on the bundled GQA sample, then on the bundled
    Super-CLEVR sample (generate, verify, both baselines, evaluation), into `out`; each step's
    table or line is given to `show` as it is made. Raises DemoRejected if the verifier rejects
    a perturbation."""
    from contrastgen.resources import clevr_sample_dir, sample_dir
    from contrastgen.run.pipeline import RunRequest

    out = Path(out)
    questions, graphs = sample_dir() / "questions.json", sample_dir() / "scene_graphs.json"
    contrast_dir = out / "contrast"
    _generate_and_verify(show, RunRequest(questions, graphs, workers=1, seed=seed), contrast_dir,
                         load_scene_graphs(graphs), "verify", "")
    show(demo_loop(contrast_dir, questions, graphs, out / "evaluation"))
    clevr_dir = out / "clevr"
    from contrastgen.datasets.clevr import load_scenes
    from contrastgen.evaluation.clevr_demo import clevr_demo_loop

    sample = clevr_sample_dir()
    scenes = load_scenes(sample / "scenes")
    _generate_and_verify(show, RunRequest(sample / "questions", sample / "scenes", "clevr", seed=seed, workers=1),
                         clevr_dir / "contrast", scenes, "verify (CLEVR)", " CLEVR")
    show(clevr_demo_loop(clevr_dir / "contrast", scenes, clevr_dir / "evaluation", seed=seed))
    show(f"\nresults: {contrast_dir.resolve()}  (contrast_sets.jsonl, augmented.json, lxmert/, stats.md)")
    show(f"evaluation: {(out / 'evaluation').resolve()}")
    show(f"CLEVR (Super-CLEVR sample): {clevr_dir.resolve()}  (contrast/, evaluation/)")


def _generate_and_verify(show: Callable[[RenderableType], None], request: RunRequest, out: Path,
                         graphs: Mapping[str, Any], said: str, which: str) -> None:
    from contrastgen.results.stats import stats_table
    from contrastgen.run.pipeline import run_generate
    from contrastgen.verify.checker import verify_contrast_sets

    gen, _ = run_generate(request, out)
    show(stats_table(gen.stats))
    report = verify_contrast_sets(gen.records, graphs)
    show(f"{said}: {report.checked} perturbations checked, {len(report.failures)} failed")
    if not report.ok:
        raise DemoRejected(f"the independent verifier rejected some{which} perturbations")


def demo_loop(contrast_dir: str | os.PathLike[str], questions_path: str | os.PathLike[str],
              scene_graphs_path: str | os.PathLike[str], out_dir: str | os.PathLike[str], *,
              seed: int = 0, n_boot: int = 1000, examples: int = 5,
              engine: Engine | None = None) -> RenderableType:
    """Write prior and oracle predictions and their report under `out_dir`; return the tables.

    The prior is fitted on the originals of `questions_path` (in-sample: the demo has no
    training split); both baselines answer `contrast_dir/augmented.json` (originals and
    perturbations). Files: `out_dir/predictions/{prior,oracle}.json`, `out_dir/report/`.
    """
    contrast_dir, out = Path(contrast_dir), Path(out_dir)
    augmented = load_questions(contrast_dir / AUGMENTED_FILE)
    originals = {q: v for q, v in load_questions(questions_path).items() if not is_perturbation(q, v)}
    prior, _ = prior_predictions(originals, augmented, template_resolver(augmented, originals))
    if engine is None:
        from contrastgen.engine import Engine

        engine = Engine.load()
    oracle, _ = oracle_predictions(augmented, load_scene_graphs(scene_graphs_path), engine)
    write_json(out / "predictions" / "prior.json", to_submission(prior))
    write_json(out / "predictions" / "oracle.json", to_submission(oracle))
    report = evaluate_contrast(load_contrast_records(contrast_dir),
                               {"prior": prior, "oracle": oracle}, seed=seed, n_boot=n_boot,
                               examples=examples, path=str(contrast_file(contrast_dir)))
    report["inputs"] = {"contrast": str(contrast_dir),
                        "predictions": {"prior": str(out / "predictions" / "prior.json"),
                                        "oracle": str(out / "predictions" / "oracle.json")}}
    write_report(report, out / "report")
    return render_report(report)
