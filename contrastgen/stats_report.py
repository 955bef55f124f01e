"""Generation statistics as Markdown (stats.md) and as a terminal table, in the paper's terms."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def _rows(stats: dict[str, Any]) -> list[list[str]]:
    ks = stats["ks"]
    rows = []
    for tid, t in stats["templates"].items():
        rows.append([tid, str(t["matched"]), str(t["perturbed"]),
                     *[str(t["perturbations"][f"k{k}"]) for k in ks], str(t["augmented_images"])])
    rows.append(["all", str(stats["matched_questions"]), str(stats["perturbed_questions"]),
                 *[str(stats["perturbations"][f"k{k}"]) for k in ks], str(stats["augmented_images"])])
    return rows


def _header(stats: dict[str, Any]) -> list[str]:
    return ["template", "matched", "perturbed", *[f"k={k}" for k in stats["ks"]], "images"]


def stats_markdown(stats: dict[str, Any]) -> str:
    head = _header(stats)
    lines = ["# Contrast-set generation statistics", "",
             f"{stats['questions']} questions on {stats['images']} images "
             f"({stats['images_with_scene_graph']} with a scene graph); max-k {stats['max_k']}, seed {stats['seed']}.",
             f"Augmented images: {stats['augmented_images']} ({stats['percent_augmented_images']}%). "
             "Augmented questions: " + ", ".join(f"{k}: {v}%" for k, v in stats["percent_augmented_questions"].items()),
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(stats)]
    lines += ["", "## Why questions were not perturbed", "", "| template | reason | count |", "|---|---|---|"]
    lines += [f"| (any) | {r} | {n} |" for r, n in stats["reasons"].items() if r in ("no_match", "no_scene_graph")]
    for tid, t in stats["templates"].items():
        lines += [f"| {tid} | {r} | {n} |" for r, n in t["reasons"].items()]
    return "\n".join(lines) + "\n"


def stats_table(stats: dict[str, Any]) -> Table:
    table = Table(title=f"contrast sets (max-k {stats['max_k']}, seed {stats['seed']})")
    for i, h in enumerate(_header(stats)):
        table.add_column(h, justify="left" if i == 0 else "right")
    for r in _rows(stats):
        table.add_row(*r)
    return table
