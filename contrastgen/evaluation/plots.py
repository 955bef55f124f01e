"""The two figures of a contrast-set report, as PNG and SVG, reproducibly.

We draw on `matplotlib.figure.Figure` with the Agg canvas instead of pyplot: no global state, so
several threads (parallel tests, say) can render at once. SVG ids are salted with a constant and
dates are dropped so the same report gives byte-identical files; SVG text stays text (editable,
small) rather than glyph paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from contrastgen.files.atomic import atomic_file

_FORMATS: dict[str, dict[str, Any]] = {
    "png": {"metadata": {"Software": None}, "dpi": 150},
    "svg": {"metadata": {"Date": None, "Creator": None}},
}


def _save(fig: Figure, out_dir: Path, stem: str) -> list[str]:
    FigureCanvasAgg(fig)
    written = []
    with matplotlib.rc_context({"svg.hashsalt": "contrastgen", "svg.fonttype": "none"}):
        for ext, kwargs in _FORMATS.items():
            name = f"{stem}.{ext}"
            with atomic_file(out_dir / name) as fh:
                fig.savefig(fh, format=ext, **kwargs)
            written.append(name)
    return written


def _err(estimate: Mapping[str, Any]) -> tuple[float, float, float]:
    """Value and the distances to the interval ends, in percent (zeros when unknown)."""
    v = estimate.get("value")
    lo, hi = estimate.get("ci") or [None, None]
    if v is None:
        return 0.0, 0.0, 0.0
    return 100 * v, 100 * (v - lo) if lo is not None else 0.0, 100 * (hi - v) if hi is not None else 0.0


def plot_accuracy_by_template(report: Mapping[str, Any], out_dir: Path) -> list[str]:
    """Original vs perturbed accuracy per template (and overall) at the largest k, per model."""
    k = str(max(report["settings"]["ks"]))
    models = report["models"]
    groups = [*report["templates"], "overall"]
    fig = Figure(figsize=(max(6.0, 0.5 * len(groups) * (1 + len(models))) + 2.0, 4.2),
                 layout="constrained")
    ax = fig.add_subplot()
    width = 0.8 / (2 * len(models))
    for m_i, model in enumerate(models):
        res = report["results"][model][k]
        for kind_i, (metric, label) in enumerate((("original_accuracy", "original"),
                                                  ("perturbed_accuracy", "perturbed"))):
            xs, ys, lo, hi = [], [], [], []
            for g_i, group in enumerate(groups):
                est = res["overall"] if group == "overall" else res["by_template"].get(group)
                if est is None:
                    continue
                v, dl, dh = _err(est[metric])
                xs.append(g_i - 0.4 + width * (2 * m_i + kind_i + 0.5))
                ys.append(v)
                lo.append(dl)
                hi.append(dh)
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2,
                   label=f"{model}: {label}", alpha=1.0 if kind_i == 0 else 0.55,
                   color=f"C{m_i}", hatch=None if kind_i == 0 else "//", edgecolor="black",
                   linewidth=0.4)
    ax.set_xticks(range(len(groups)), groups, rotation=25, ha="right", fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"Accuracy on originals vs perturbations (k = {k}, 95% CI)")
    fig.legend(fontsize=7, loc="outside right upper")
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, out_dir, "accuracy_by_template")


def plot_consistency_by_k(report: Mapping[str, Any], out_dir: Path) -> list[str]:
    """Contrast consistency (and perturbed accuracy, dashed) against k, one line per model."""
    ks = report["settings"]["ks"]
    fig = Figure(figsize=(5.5, 4.0), layout="constrained")
    ax = fig.add_subplot()
    for m_i, model in enumerate(report["models"]):
        for metric, style in (("consistency", "-o"), ("perturbed_accuracy", "--s")):
            points = [_err(report["results"][model][str(k)]["overall"][metric]) for k in ks]
            ax.errorbar(ks, [p[0] for p in points], yerr=[[p[1] for p in points], [p[2] for p in points]],
                        fmt=style, color=f"C{m_i}", capsize=3,
                        label=f"{model}: {metric.replace('_', ' ')}")
    ax.set_xticks(ks)
    ax.set_xlabel("k (maximum perturbations per original)")
    ax.set_ylabel("%")
    ax.set_ylim(0, 105)
    ax.set_title("Contrast consistency against k (95% CI)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _save(fig, out_dir, "consistency_by_k")


def plot_gqa_by_type(report: Mapping[str, Any], out_dir: Path) -> list[str]:
    """GQA accuracy per structural and semantic type, one bar per model."""
    fig = Figure(figsize=(9.0, 3.8), layout="constrained")
    for p_i, (field, title) in enumerate((("by_structural", "structural type"),
                                          ("by_semantic", "semantic type"))):
        ax = fig.add_subplot(1, 2, p_i + 1)
        models = report["models"]
        types = sorted({t for m in models for t in report["results"][m][field]})
        width = 0.8 / max(1, len(models))
        for m_i, model in enumerate(models):
            res = report["results"][model][field]
            ax.bar([t_i - 0.4 + width * (m_i + 0.5) for t_i in range(len(types))],
                   [100 * (res.get(t, {}).get("value") or 0) for t in types], width,
                   color=f"C{m_i}", label=model)
        ax.set_xticks(range(len(types)), types, rotation=25, ha="right", fontsize=8)
        ax.set_ylim(0, 105)
        ax.set_title(f"accuracy by {title}")
        ax.grid(axis="y", alpha=0.3)
        if p_i == 0:
            ax.set_ylabel("accuracy (%)")
            ax.legend(fontsize=7)
    return _save(fig, out_dir, "gqa_accuracy_by_type")
