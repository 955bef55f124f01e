"""Out-of-distribution splits and metrics: GQA-OOD and VQA-VS.

Build: `build_gqa_ood` / `write_gqa_ood` (head/tail of imbalanced GQA local groups) and
`build_vqavs` / `write_vqavs` (one OOD set per shortcut). Score: `evaluate_ood`, which reads
either kind of directory; `render_ood_table` shows its report.
"""

from contrastgen.datasets.samples import Sample, load_gqa_samples, load_vqa
from contrastgen.ood.concepts import SHORTCUT_NAMES, SHORTCUTS, MutualInformation, label_samples
from contrastgen.ood.evaluate import evaluate_ood
from contrastgen.ood.gqa_ood import GqaOodConfig, GqaOodSplit, build_gqa_ood, write_gqa_ood
from contrastgen.ood.imbalance import normalized_entropy, tail_answers
from contrastgen.ood.report import render_build_stats, render_ood_table
from contrastgen.ood.vqa_accuracy import normalize_vqa_answer, vqa_accuracy
from contrastgen.ood.vqavs import VqaVsConfig, build_vqavs, write_vqavs

__all__ = [
    "SHORTCUTS", "SHORTCUT_NAMES", "GqaOodConfig", "GqaOodSplit", "MutualInformation", "Sample",
    "VqaVsConfig", "build_gqa_ood", "build_vqavs", "evaluate_ood", "label_samples", "load_gqa_samples",
    "load_vqa", "normalize_vqa_answer", "normalized_entropy", "render_build_stats", "render_ood_table",
    "tail_answers", "vqa_accuracy", "write_gqa_ood", "write_vqavs",
]
