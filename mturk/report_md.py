"""The human-readable `report.md` of a crowd-verification batch.

Kept apart from the scoring so the numbers (report.json) have one source and this module only
lays them out: a headline comparable to the paper's Section 2.3, per-template accuracy,
agreement, and the perturbations a person should look at, with the evidence that produced
their computed answers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

PAPER = "Bitton et al. 2021, Sec. 2.3: originals 76.6%, perturbed 72.3%, kappa 0.679"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _ci(ci: Sequence[float | None]) -> str:
    lo, hi = ci
    return "n/a" if lo is None or hi is None else f"[{100 * lo:.1f}, {100 * hi:.1f}]"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(summary: dict[str, Any], review: list[dict[str, Any]], *, max_review: int = 200) -> str:
    acc = summary["accuracy"]
    lines = [
        "# Crowd verification report",
        "",
        f"Assignments used: {summary['assignments']['kept']} (rejected and dropped: "
        f"{summary['assignments']['rejected_dropped']}); ratings used: {summary['ratings']['used']}; "
        f"aggregation: {summary['aggregator']}; workers: {summary['workers']['count']} "
        f"(flagged by gold: {len(summary['workers']['flagged'])}"
        f"{', excluded' if summary['workers']['excluded_flagged'] else ', kept'}).",
        "",
        "## Human accuracy",
        "",
        "| questions | items | majority accuracy | 95% CI (Wilson) | rating accuracy | 95% CI (bootstrap) | cannot tell |",
        "|---|---:|---:|---|---:|---|---:|",
    ]
    for role in ("original", "perturbed"):
        a = acc[role]
        lines.append(f"| {role} | {a['items']} | {_pct(a['majority_accuracy'])} | {_ci(a['majority_accuracy_ci95'])} "
                     f"| {_pct(a['rating_accuracy'])} | {_ci(a['rating_accuracy_ci95'])} | {_pct(a['cannot_tell_share'])} |")
    gap = summary["gap"]
    lines += [
        "",
        f"Gap (original minus perturbed, majority accuracy, paired by image): "
        f"{_pct(gap['original_minus_perturbed'])} {_ci(gap['ci95'])} over {gap['pairs']} pairs.",
        f"For reference, {PAPER}.",
        "",
        "## Agreement",
        "",
        "| items | Fleiss' kappa | (items, raters each) | Cohen's kappa, 1st vs 2nd rating | (items) | Krippendorff's alpha |",
        "|---|---:|---|---:|---|---:|",
    ]
    for name, ag in summary["agreement"].items():
        lines.append(f"| {name} | {_num(ag['fleiss_kappa'])} | ({ag['fleiss_items']}, {ag['fleiss_raters']}) "
                     f"| {_num(ag['cohen_kappa'])} | ({ag['cohen_items']}) | {_num(ag['krippendorff_alpha'])} |")
    lines += [
        "",
        "## Per template (majority accuracy, 95% Wilson CI)",
        "",
        "| template | original items | original | perturbed items | perturbed |",
        "|---|---:|---|---:|---|",
    ]
    for t, blocks in summary["per_template"].items():
        o, p = blocks["original"], blocks["perturbed"]
        lines.append(f"| {_cell(t)} | {o['items']} | {_pct(o['majority_accuracy'])} {_ci(o['majority_accuracy_ci95'])} "
                     f"| {p['items']} | {_pct(p['majority_accuracy'])} {_ci(p['majority_accuracy_ci95'])} |")
    pert = [e for e in review if e["role"] == "perturbed"]
    lines += [
        "",
        f"## Perturbations where the crowd majority disagrees with the computed answer ({len(pert)})",
        "",
        "Each may be a scene-graph annotation error, an ambiguous question, or a generator bug; the",
        "evidence is the graph facts the computed answer was derived from.",
        "",
    ]
    for e in pert[:max_review]:
        lines += [
            f"### {_cell(e['question_id'])} ({_cell(e['template'])}), image {_cell(e['image_id'])}",
            "",
            f"- perturbed: **{_cell(e['question'])}** computed `{_cell(e['computed_answer'])}`, crowd "
            f"`{_cell(e['majority'])}`{' (tie)' if e['majority_tie'] else ''}, answers {json.dumps(e['answers'])}",
        ]
        if "partner" in e:
            pt = e["partner"]
            lines.append(f"- original: {_cell(pt['question'])} gold `{_cell(pt['computed_answer'])}`, crowd "
                         f"`{_cell(pt['majority'])}`")
        lines += [
            f"- change: `{json.dumps(e.get('change'), sort_keys=True)}`",
            f"- evidence: `{json.dumps(e.get('evidence'), sort_keys=True)}`",
            "",
        ]
    if len(pert) > max_review:
        lines.append(f"... {len(pert) - max_review} more in review.jsonl")
    orig = [e for e in review if e["role"] == "original"]
    lines += [
        "",
        f"## Original questions where the crowd majority disagrees with GQA's answer ({len(orig)})",
        "",
        "Listed in review.jsonl; the paper attributes most such cases to annotation errors in GQA.",
        "",
    ]
    return "\n".join(lines) + "\n"
