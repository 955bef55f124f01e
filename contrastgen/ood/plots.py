"""Figures for the OOD benchmarks: the GQA-OOD alpha sweep (the paper's Fig. 3), VQA-VS accuracy
per test set (its Table 2 as bars) and the overlap between VQA-VS OOD sets (its Fig. 5b).

Figures are drawn on `matplotlib.figure.Figure` objects with the Agg canvas, never through
pyplot's global state, so they are safe in worker threads; PNG metadata is
stripped of the software version so the same inputs give byte-identical files.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from contrastgen.files.atomic import atomic_file

_PNG_METADATA = {"Software": None}


def _save(fig: Figure, path: Path) -> None:
    FigureCanvasAgg(fig)
    with atomic_file(path) as fh:
        fig.savefig(fh, format="png", dpi=120, metadata=_PNG_METADATA, bbox_inches="tight")


def plot_overlap(overlap: Mapping[str, Mapping[str, float | None]], path: Path) -> None:
    names = list(overlap)
    m = np.array([[np.nan if overlap[a][b] is None else overlap[a][b] for b in names] for a in names])
    fig = Figure(figsize=(1.0 + 0.7 * len(names), 0.8 + 0.6 * len(names)))
    ax = fig.add_subplot()
    im = ax.imshow(m, vmin=0, vmax=1, cmap="Reds")
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            if not np.isnan(m[i, j]):
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if m[i, j] > 0.6 else "black")
    ax.set_xlabel("also in this OOD set")
    ax.set_ylabel("share of this OOD set's samples")
    ax.set_title("Overlap between VQA-VS OOD test sets")
    fig.colorbar(im, ax=ax, fraction=0.046)
    _save(fig, path)


def plot_alpha_sweep(report: Mapping[str, Any], path: Path) -> None:
    """Acc-tail and head/tail confusion against alpha, one line per model (log-scale x)."""
    fig = Figure(figsize=(10, 4))
    acc_ax, conf_ax = fig.subplots(1, 2)
    for name, model in report["models"].items():
        sweep = [p for p in model["alpha_sweep"] if p["acc_tail"] is not None]
        acc_ax.plot([p["alpha"] for p in sweep], [100 * p["acc_tail"] for p in sweep], marker=".", label=name)
        conf = [p for p in sweep if p.get("confusion") is not None]
        conf_ax.plot([p["alpha"] for p in conf], [100 * p["confusion"] for p in conf], marker=".", label=name)
    cmp = "<" if report.get("rule") == "released" else "<="
    alphas = [p["alpha"] for m in report["models"].values() for p in m["alpha_sweep"]]
    ticks = [t for t in (0.1, 0.2, 0.3, 0.5, 1, 2, 3, 5, 10, 20, 50) if alphas and min(alphas) <= t <= max(alphas)]
    for ax, title in ((acc_ax, "acc-tail (%)"), (conf_ax, "head/tail confusion (%)")):
        ax.set_xscale("log")
        if alphas:
            ax.set_xlim(min(alphas) * 0.9, max(alphas) * 1.1)
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(f"alpha (tail: answer count {cmp} alpha x group mean)")
        ax.set_title(title)
        ax.set_ylim(0, 100)
        ax.grid(True, alpha=0.3)
        ax.axvline(report["alpha"], color="grey", linestyle=":", linewidth=1)
    acc_ax.legend(fontsize=8)
    _save(fig, path)


def plot_vqavs_accuracy(report: Mapping[str, Any], path: Path) -> None:
    """VQA accuracy on the IID set and each OOD set, grouped bars per model."""
    sets = report["sets"]
    models = list(report["models"])
    fig = Figure(figsize=(1.5 + 0.9 * len(sets), 4))
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(models))
    x = np.arange(len(sets))
    for i, name in enumerate(models):
        acc = report["models"][name]["accuracy"]
        ax.bar(x + i * width, [100 * (acc.get(s) or 0.0) for s in sets], width, label=name)
    ax.set_xticks(x + width * (len(models) - 1) / 2, sets, rotation=30, ha="right")
    ax.set_ylabel("VQA accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title("VQA-VS: IID vs OOD test sets")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    _save(fig, path)


def plot_variant_distribution(variant: str, entry: Mapping[str, Any], path: Path) -> None:
    """A drawn Super-CLEVR variant against its target: per part (columns) and block (rows), the
    share of each concept, target beside achieved; a shape x colour block as the colour
    distribution of each shape, target and achieved side by side."""
    parts = list(entry["parts"])
    blocks = list(entry["target"])
    fig = Figure(figsize=(7.0 * len(parts), 2.8 * len(blocks)))
    axes = fig.subplots(len(blocks), len(parts), squeeze=False)
    for j, part in enumerate(parts):
        got = entry["parts"][part]
        for i, block in enumerate(blocks):
            ax = axes[i][j]
            target, counts = entry["target"][block], got["counts"][block]
            total = sum(counts.values()) or 1
            labels = list(target)
            title = f"{variant} {part}: {block}, KL {got['kl'][block]:.4f} ({got['objects']} objects)"
            if " x " in block:
                rows = list(dict.fromkeys(lbl.split(" ")[0] for lbl in labels))
                cols = list(dict.fromkeys(lbl.split(" ")[1] for lbl in labels))
                want = np.array([[target[f"{r} {c}"] for c in cols] for r in rows])
                have = np.array([[counts[f"{r} {c}"] for c in cols] for r in rows], dtype=float)
                want = want / np.maximum(want.sum(axis=1, keepdims=True), 1e-12)
                have = have / np.maximum(have.sum(axis=1, keepdims=True), 1)
                gap = np.full((len(rows), 1), np.nan)
                ax.imshow(np.hstack([want, gap, have]), vmin=0, vmax=max(float(want.max()), 1e-9), cmap="Blues",
                          aspect="auto")
                ax.set_xticks(range(2 * len(cols) + 1), cols + [""] + cols, rotation=90, fontsize=6)
                ax.set_yticks(range(len(rows)), rows, fontsize=6)
                ax.set_title(title + "\ncolour per shape: target | achieved", fontsize=8)
                continue
            x = np.arange(len(labels))
            ax.bar(x - 0.2, [target[lbl] for lbl in labels], 0.4, label="target", color="lightgray",
                   edgecolor="black", linewidth=0.5)
            ax.bar(x + 0.2, [counts[lbl] / total for lbl in labels], 0.4, label="achieved", color="tab:blue")
            ax.set_xticks(x, labels, rotation=90 if len(labels) > 8 else 0, fontsize=7)
            ax.set_ylabel("share of objects", fontsize=7)
            ax.set_title(title, fontsize=8)
            ax.legend(fontsize=6)
    fig.tight_layout()
    _save(fig, path)
