"""Evaluating predictions: contrast-set metrics, GQA standard metrics, baselines, reports.

Entry points (each module has one job):
- `predictions.load_predictions`: read GQA / `{qid: answer}` / LXMERT / VQA prediction files;
- `contrast.evaluate_contrast`: accuracy, drop and contrast consistency per template and k;
- `gqa_metrics.evaluate_gqa`: GQA's standard metrics (accuracy, binary/open, consistency, ...);
- `baselines`: the prior (template -> most frequent answer) and the scene-graph oracle;
- `report.write_report` / `report.render_table`: report.{md,json,csv}, plots, terminal tables;
- `demo_loop`: the end of `make demo`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import RenderableType


def demo_loop(contrast_dir: str | os.PathLike[str], questions_path: str | os.PathLike[str],
              scene_graphs_path: str | os.PathLike[str], out_dir: str | os.PathLike[str],
              **kwargs: Any) -> RenderableType:
    """Run both baselines on a contrast set, write their report; return the rich tables.

    Imported lazily so `import contrastgen.evaluation` stays cheap (no matplotlib, no engine).
    """
    from contrastgen.evaluation.demo import demo_loop as run

    return run(contrast_dir, questions_path, scene_graphs_path, out_dir, **kwargs)
