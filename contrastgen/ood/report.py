"""Rich tables for OOD reports and build statistics, for the CLI (and anyone with a console)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group
from rich.table import Table


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def _ci(ci: list[float] | None) -> str:
    return "" if not ci else f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _gqa_table(report: Mapping[str, Any]) -> Group:
    q = report["questions"]
    table = Table(title=f"GQA-OOD (rule {report['rule']}, alpha {report['alpha']}; "
                        f"{q['all']} questions: {q['head']} head, {q['tail']} tail; % with 95% CI)")
    for col in ("model", "acc-all", "acc-head", "acc-tail", "head - tail", "delta (rel.)", "confusion", "missing"):
        table.add_column(col, justify="left" if col == "model" else "right")
    for name, m in report["models"].items():
        ci = m["ci95"]
        table.add_row(name, _pct(m["acc_all"]) + _ci(ci["acc_all"]), _pct(m["acc_head"]) + _ci(ci["acc_head"]),
                      _pct(m["acc_tail"]) + _ci(ci["acc_tail"]), _pct(m["diff"]), _pct(m["delta_rel"]),
                      _pct(m["confusion"]), str(m["missing"]))
    sweep = Table(title="acc-tail (and head/tail confusion) as alpha varies, %")
    sweep.add_column("alpha", justify="right")
    sweep.add_column("tail size", justify="right")
    models = list(report["models"])
    for name in models:
        sweep.add_column(name, justify="right")
    if models:
        first = report["models"][models[0]]["alpha_sweep"]
        for i, point in enumerate(first):
            cells = []
            for name in models:
                p = report["models"][name]["alpha_sweep"][i]
                conf = "" if p["confusion"] is None else f" ({_pct(p['confusion'])})"
                cells.append(_pct(p["acc_tail"]) + conf)
            sweep.add_row(f"{point['alpha']:g}", str(point["tail_size"]), *cells)
    return Group(table, sweep)


def _vqavs_table(report: Mapping[str, Any]) -> Group:
    sets = report["sets"]
    table = Table(title="VQA-VS: VQA accuracy (%) on the IID set and each OOD set")
    table.add_column("model")
    for s in sets:
        table.add_column(f"{s}\n(n={report['sizes'][s]})", justify="right")
    table.add_column("OOD mean", justify="right")
    table.add_column("IID - OOD", justify="right")
    for name, m in report["models"].items():
        table.add_row(name, *[_pct(m["accuracy"].get(s)) for s in sets], _pct(m["ood_mean"]), _pct(m["gap"]))
    parts: list[Any] = [table]
    if report.get("answer_types"):
        by_type = Table(title="VQA-VS: VQA accuracy (%) by answer type")
        by_type.add_column("model")
        by_type.add_column("answer type")
        for s in sets:
            by_type.add_column(s, justify="right")
        for name, m in report["models"].items():
            for t in report["answer_types"]:
                by_type.add_row(name, t, *[_pct(m["by_answer_type"][t].get(s)) for s in sets])
        parts.append(by_type)
    for name, reason in report.get("skipped", {}).items():
        parts.append(f"{name}: {reason}")
    return Group(*parts)


def render_ood_table(report: Mapping[str, Any]):
    """A rich renderable for an `evaluate_ood` report (GQA-OOD, VQA-VS or Super-CLEVR)."""
    if report.get("benchmark") == "super-clevr":
        from contrastgen.ood.superclevr_eval import superclevr_table

        return superclevr_table(report)
    if report.get("benchmark") == "gqa-redundancy":
        from contrastgen.ood.gqa_redundancy_eval import ladder_table

        return ladder_table(report)
    return _gqa_table(report) if report.get("benchmark") == "gqa-ood" else _vqavs_table(report)


def render_build_stats(stats: Mapping[str, Any]) -> Table:
    """A rich table of what `contrastgen ood gqa|vqavs` built."""
    if stats["benchmark"] == "gqa-ood":
        t = Table(title=f"GQA-OOD construction (rule {stats['rule']}, alpha {stats['alpha']}, "
                        f"entropy threshold {stats['entropy_threshold']:.4g})")
        t.add_column("")
        t.add_column("value", justify="right")
        inp = stats["input"]
        for label, value in (("input questions", inp["questions"]), ("without local group", inp["questions_without_local_group"]),
                             ("local groups", inp["groups"]), ("single-answer groups (left out)", inp["single_answer_groups"]),
                             ("imbalanced groups kept", stats["groups_kept"]), ("questions: all", stats["questions"]["all"]),
                             ("questions: head", stats["questions"]["head"]), ("questions: tail", stats["questions"]["tail"])):
            t.add_row(label, str(value))
        return t
    missing = stats.get("samples_without_object_annotations") or 0
    t = Table(title=f"VQA-VS construction ({stats['samples']} samples; entropy < {stats['entropy_threshold']}, "
                    f"tail < {stats['tail_factor']} x mean)",
              caption=f"{missing} samples' images lack object annotations: unlabelled for the "
                      "object-based shortcuts" if missing else None)
    for col in ("shortcut", "groups", "imbalanced", "head", "tail (OOD)", "unlabelled"):
        t.add_column(col, justify="left" if col == "shortcut" else "right")
    for name, s in stats["shortcuts"].items():
        if "skipped" in s:
            t.add_row(name, s["skipped"], "", "", "", "")
        else:
            t.add_row(name, str(s["groups"]), str(s["imbalanced_groups"]), str(s["head"]), str(s["tail"]),
                      str(s["unlabelled"]))
    return t
