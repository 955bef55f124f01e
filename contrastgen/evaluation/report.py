"""Turning an evaluation report (the dict `report.json` holds) into files and terminal tables.

One report dict feeds every view: `report.json` for programs, `report.csv` in long format for
pandas/R (one row per model, k, breakdown, group and metric), `report.md` laid out like the
paper's tables so numbers can be compared at a glance, and the plots. Keeping the views as pure
functions of the dict means every view of one report agrees with the others; the HTTP service
returns the same dict (`POST /v1/evaluate`).
"""

from __future__ import annotations

import csv
import html
import io
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from contrastgen.errors import InputError
from contrastgen.files.csv_cells import neutral
from contrastgen.jsonio import dumps, write_json, write_text

METRIC_LABELS = {"original_accuracy": "Orig", "perturbed_accuracy": "Pert", "drop": "Drop",
                 "consistency": "Cons"}
INVARIANCE_LABELS = {"original_accuracy": "Orig", "perturbed_accuracy": "Pert", "consistency": "Cons"}
BREAKDOWNS = ("by_template", "by_question_type", "by_kind", "by_direction")
CSV_FIELDS = ("model", "k", "breakdown", "group", "metric", "value", "ci_low", "ci_high", "n",
              "n_perturbations")


def pct(est: Mapping[str, Any] | float | None, *, ci: bool = False) -> str:
    """A fraction (or an estimate dict) as a percentage with one decimal, `-` when unknown."""
    if isinstance(est, Mapping):
        value, (low, high) = est.get("value"), (est.get("ci") or [None, None])
    else:
        value, low, high = est, None, None
    if value is None:
        return "-"
    text = f"{100 * value:.1f}"
    if ci and low is not None and high is not None:
        text += f" [{100 * low:.1f}, {100 * high:.1f}]"
    return text


# --------------------------------------------------------------------------------------- CSV


def _csv_rows(report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    def est_row(base: dict[str, Any], metric: str, est: Any) -> dict[str, Any]:
        if isinstance(est, Mapping):
            low, high = est.get("ci") or [None, None]
            return {**base, "metric": metric, "value": est.get("value"), "ci_low": low,
                    "ci_high": high}
        return {**base, "metric": metric, "value": est, "ci_low": None, "ci_high": None}

    if report["kind"] == "contrast":
        for model in report["models"]:
            for k, res in report["results"][model].items():
                groups = [("overall", "all", res["overall"])] + [
                    (b, g, m) for b in BREAKDOWNS for g, m in res.get(b, {}).items()]
                for breakdown, group, m in groups:
                    base = {"model": model, "k": k, "breakdown": breakdown, "group": group,
                            "n": m["n_sets"], "n_perturbations": m["n_perturbations"]}
                    for metric in METRIC_LABELS:
                        yield est_row(base, metric, m[metric])
        for model, inv in report.get("invariance", {}).items():
            groups = [("invariance", "all", inv["overall"])] + [
                ("invariance_by_question_type", g, m) for g, m in inv["by_question_type"].items()]
            for breakdown, group, m in groups:
                base = {"model": model, "k": None, "breakdown": breakdown, "group": group,
                        "n": m["n_sets"], "n_perturbations": m["n_perturbations"]}
                for metric in INVARIANCE_LABELS:
                    yield est_row(base, metric, m[metric])
        for pair, by_k in report.get("comparisons", {}).items():
            for k, d in by_k.items():
                for metric in METRIC_LABELS:
                    yield est_row({"model": pair, "k": k, "breakdown": "difference",
                                   "group": "all"}, metric, d[metric])
    else:
        for model in report["models"]:
            res = report["results"][model]
            for metric in ("accuracy", "binary", "open", "consistency"):
                yield est_row({"model": model, "breakdown": "overall", "group": "all",
                               "n": res[metric]["n"]}, metric, res[metric])
            yield est_row({"model": model, "breakdown": "overall", "group": "all"},
                          "distribution", res["distribution"])
            for breakdown in ("by_structural", "by_semantic", "by_steps", "by_words"):
                for group, m in res[breakdown].items():
                    yield est_row({"model": model, "breakdown": breakdown, "group": group,
                                   "n": m["n"]}, "accuracy", m["value"])


def render_csv(report: Mapping[str, Any]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in _csv_rows(report):
        writer.writerow({f: neutral(row.get(f)) for f in CSV_FIELDS})  # no cell a spreadsheet would run
    return buf.getvalue()


# ---------------------------------------------------------------------------------- Markdown


def md_text(value: Any) -> str:
    """Text from the data, for Markdown: HTML-escaped, so `<script>` is shown, not run."""
    return html.escape(str(value), quote=False)


def md_code(value: Any) -> str:
    """A code span that holds `value` whatever backticks it has (CommonMark: a longer fence)."""
    text = str(value)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    if not longest:
        return f"`{text}`"
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines + [""]


def _contrast_md(report: Mapping[str, Any]) -> list[str]:
    """report.md of a contrast-set evaluation: its sections in order."""
    return [*_contrast_intro_md(report), *_overall_md(report), *_breakdowns_md(report), *_invariance_md(report),
            *_comparisons_md(report), *_table9_md(report), *_oracle_md(report), *_coverage_md(report),
            "## Plots", "", "![accuracy by template](accuracy_by_template.png)", "",
            "![consistency by k](consistency_by_k.png)", "", *_examples_md(report)]


def _contrast_intro_md(report: Mapping[str, Any]) -> list[str]:
    return ["# Contrast-set evaluation", "",
            f"Seed {report['settings']['seed']}, {report['settings']['n_boot']} bootstrap resamples "
            "of contrast sets; brackets are 95% intervals. Accuracy is on the originals that have "
            "perturbations (Orig) and on the perturbations (Pert); Drop = Orig - Pert; contrast "
            "consistency (Cons) is the share of sets, original included, answered all correctly.", ""]


def _metric_row(first: list[str], m: Mapping[str, Any]) -> list[str]:
    """A row of the metric tables: its labels, the set and perturbation counts, each metric with its CI."""
    return [*first, str(m["n_sets"]), str(m["n_perturbations"]), *(pct(m[x], ci=True) for x in METRIC_LABELS)]


def _overall_md(report: Mapping[str, Any]) -> list[str]:
    rows = [_metric_row([model, str(k)], report["results"][model][str(k)]["overall"])
            for model in report["models"] for k in report["settings"]["ks"]]
    return ["## Overall, by k (paper Tables 2 and 4)", "",
            *_md_table(["model", "k", "sets", "perturbations", *METRIC_LABELS.values()], rows)]


_BREAKDOWN_TITLES = (("by_template", "By template, k = {k} (paper Table 3)"),
                     ("by_question_type", "By GQA question type (`types.detailed`), k = {k}"),
                     ("by_kind", "By change kind, k = {k}"),
                     ("by_direction", "By answer direction, k = {k}"))


def _breakdowns_md(report: Mapping[str, Any]) -> list[str]:
    kmax = str(max(report["settings"]["ks"]))
    out: list[str] = []
    for breakdown, title in _BREAKDOWN_TITLES:
        out += [f"## {title.format(k=kmax)}", ""]
        rows = []
        for model in report["models"]:
            res = report["results"][model][kmax]
            rows += [_metric_row([model, group], m)
                     for group, m in [*res.get(breakdown, {}).items(), ("overall", res["overall"])]]
        out += _md_table(["model", breakdown[3:], "sets", "perturbations", *METRIC_LABELS.values()], rows)
        if breakdown == "by_template" and report.get("template_forms"):
            out += ["Templates: " + "; ".join(f"`{t}` = {form}" for t, form
                                              in report["template_forms"].items()), ""]
    return out


def _invariance_md(report: Mapping[str, Any]) -> list[str]:
    if not report.get("invariance"):
        return []
    out = ["## Invariance: answers that must not change", "",
           "Sets with invariance perturbations (a synonym, a kind, a redundant word dropped or said: "
           "the same question, the same answer). A set is consistent when its original and every "
           "invariance perturbation are answered right; Orig and Pert are the accuracies on those "
           "originals and perturbations. A missing or empty answer is wrong.", ""]
    rows = [[model, group, str(m["n_sets"]), str(m["n_perturbations"]), *(pct(m[x]) for x in INVARIANCE_LABELS)]
            for model, inv in report["invariance"].items()
            for group, m in [("overall", inv["overall"]), *inv["by_question_type"].items()]]
    out += _md_table(["model", "question type", "sets", "perturbations", *INVARIANCE_LABELS.values()], rows)
    rows = [[model, str(inv["questions"]), str(inv["missing"]), str(inv["empty"]),
             ", ".join([*inv["missing_examples"], *inv["empty_examples"]][:5])]
            for model, inv in report["invariance"].items() if inv["missing"] or inv["empty"]]
    if rows:
        out += _md_table(["model", "questions", "missing", "empty", "first"], rows)
    return out


def _comparisons_md(report: Mapping[str, Any]) -> list[str]:
    if not report.get("comparisons"):
        return []
    rows = [[pair, k, *(pct(d[x], ci=True) for x in METRIC_LABELS)]
            for pair, by_k in report["comparisons"].items() for k, d in by_k.items()]
    return ["## Differences between models (paired bootstrap)", "",
            "Each model minus the first; an interval that excludes 0 is a difference the data "
            "support.", "", *_md_table(["models", "k", *(f"Δ {v}" for v in METRIC_LABELS.values())], rows)]


def _table9_md(report: Mapping[str, Any]) -> list[str]:
    """Perturbed accuracy per template and k beside each model's original accuracy, as the paper's
    Table 9 lays it out."""
    models, ks = report["models"], report["settings"]["ks"]
    header = ["template", "originals", *(f"{m} orig" for m in models)]
    for k in ks:
        header += [f"size k={k}", *(f"{m} k={k}" for m in models)]
    rows = []
    for group in [*report["templates"], "overall"]:
        def get(model: str, k: int, group: str = group) -> Mapping[str, Any] | None:
            res = report["results"][model][str(k)]
            return res["overall"] if group == "overall" else res["by_template"].get(group)
        base = get(models[0], max(ks))
        row = [group, str(base["n_sets"]) if base else "-",
               *(pct((get(m, max(ks)) or {}).get("original_accuracy")) for m in models)]
        for k in ks:
            g = get(models[0], k)
            row += [str(g["n_perturbations"]) if g else "-",
                    *(pct((get(m, k) or {}).get("perturbed_accuracy")) for m in models)]
        rows.append(row)
    return ["## Perturbed accuracy by template and k (paper Table 9)", "", *_md_table(header, rows)]


def _examples_md(report: Mapping[str, Any]) -> list[str]:
    """The sampled failing sets of each model, with the evidence of each perturbation.

    The examples quote the data (questions, answers, predictions): a page that renders the Markdown
    must show their words, never run them, so text is HTML-escaped and code spans are fenced longer
    than any backticks inside them."""
    kmax = max(report["settings"]["ks"])
    out: list[str] = []
    t = md_text
    for model, examples in report.get("examples", {}).items():
        out += [f"## Failing contrast sets: {model} ({len(examples)} sampled, k = {kmax})", ""]
        for ex in examples:
            mark = "ok" if ex["correct"] else "WRONG"
            out += [f"### {t(ex['question_id'])} ({t(ex['template'])}, image {t(ex['image_id'])})", "",
                    f"- original: {t(ex['question'])} gold **{t(ex['answer'])}**, predicted "
                    f"{md_code(ex['prediction'])} ({mark})"]
            for p in ex["perturbations"]:
                out += _example_perturbation_md(p)
            out.append("")
    return out


def _example_perturbation_md(p: Mapping[str, Any]) -> list[str]:
    t = md_text
    mark = "ok" if p["correct"] else "WRONG"
    change = p.get("change") or {}
    out = [f"- c{p['rank']} ({t(change.get('kind'))}: {t(change.get('from'))} -> "
           f"{t(change.get('to'))}): {t(p['question'])} gold **{t(p['answer'])}**, predicted "
           f"{md_code(p['prediction'])} ({mark})"]
    if p.get("evidence") is not None:
        out.append(f"  - evidence: {md_code(dumps(p['evidence']).decode().strip())}")
    return out


def _oracle_md(report: Mapping[str, Any]) -> list[str]:
    o = report.get("oracle")
    if not o:
        return []
    if report["kind"] == "contrast":
        return ["## Annotation noise (scene-graph oracle)", "",
                f"The oracle `{o['model']}` answered {o['originals_answered']} of {o['originals']} "
                f"originals from the scene graph and disagrees with the gold answer on "
                f"{o['originals_disagreeing']}: **{pct(o['disagreement_rate'], ci=True)}%**. A "
                "model's drop of that size may be annotation noise rather than a shortcut. On the "
                f"perturbations it scores {pct(o['perturbation_accuracy'])}% "
                f"({o['perturbations_answered']} of {o['perturbations']} answered; 100% expected).", ""]
    return ["## Annotation noise (scene-graph oracle)", "",
            f"The oracle `{o['model']}` answered {o['answered']} of {o['questions']} questions and "
            f"disagrees with the gold answer on {o['disagreeing']}: "
            f"**{pct(o['disagreement_rate'])}%**.", ""]


def partial_note(model: str, cov: Mapping[str, Any]) -> str:
    """What a partial run's figures are over: the sets asked in full, with the unasked count."""
    return (f"{model}: partial run: {cov['missing']:,} of {cov['questions']:,} questions have no prediction "
            f"(not asked, or abstained); scored on the {cov.get('sets_scored', 0):,} of {cov.get('sets', 0):,} "
            "contrast sets with a prediction for every question (--strict to refuse a partial run)")


def _coverage_md(report: Mapping[str, Any]) -> list[str]:
    contrast = report["kind"] == "contrast"
    rows = [[m, str(c["questions"]), str(c["predictions"]), str(c["ignored"]), str(c["missing"]),
             ", ".join(c["missing_examples"][:5]), str(c.get("empty", 0)),
             ", ".join(c.get("empty_examples", [])[:5]),
             *([f"{c.get('sets_scored', 0)} of {c.get('sets', 0)}"] if contrast else [])]
            for m, c in report["coverage"].items()]
    if not contrast:
        return ["## Coverage", "", "Missing predictions, and empty ones (an answer that says nothing once "
                "normalised), count as wrong; predictions for other questions are ignored.", "",
                *_md_table(["model", "questions", "predictions", "ignored", "missing",
                            "first missing", "empty", "first empty"], rows)]
    notes = [f"- {partial_note(m, c)}" for m, c in report["coverage"].items() if c["missing"]]
    return ["## Coverage", "", "A run that leaves questions unasked (missing: a `--limit`ed harness run, "
            "a multiple-choice file) is partial: it is scored on the contrast sets asked in full. Empty "
            "predictions (an answer that says nothing once normalised) count as wrong; predictions for "
            "other questions are ignored.", "",
            *_md_table(["model", "questions", "predictions", "ignored", "missing",
                        "first missing", "empty", "first empty", "sets scored"], rows),
            *([*notes, ""] if notes else [])]


def _gqa_md(report: Mapping[str, Any]) -> list[str]:
    models = report["models"]
    out = ["# GQA standard metrics", "",
           "Definitions follow GQA's official eval.py (see contrastgen/evaluation/gqa_metrics.py "
           "for the differences). Brackets are 95% bootstrap intervals over questions; "
           "distribution is lower-is-better.", ""]
    rows = []
    for metric in ("accuracy", "binary", "open", "consistency"):
        rows.append([metric, *(f"{pct(report['results'][m][metric], ci=True)} "
                               f"(n={report['results'][m][metric]['n']})" for m in models)])
    rows.append(["distribution", *(str(report["results"][m]["distribution"]) for m in models)])
    out += _md_table(["metric", *models], rows)
    absent = {m: report["results"][m]["consistency"]["entailed_absent"] for m in models}
    if any(absent.values()):
        out += [f"{max(absent.values())} entailed questions are not in the questions file and "
                "were skipped for consistency (use GQA's *all* questions file to include them).", ""]
    for breakdown in ("by_structural", "by_semantic", "by_steps", "by_words"):
        groups = sorted({g for m in models for g in report["results"][m][breakdown]},
                        key=lambda g: (0, int(g)) if g.isdigit() else (1, g))
        rows = [[g, *(f"{pct(report['results'][m][breakdown].get(g, {}).get('value'))} "
                      f"(n={report['results'][m][breakdown].get(g, {}).get('n', 0)})"
                      for m in models)] for g in groups]
        out += [f"## Accuracy {breakdown.replace('_', ' ')}", "", *_md_table([breakdown[3:], *models], rows)]
    out += _oracle_md(report)
    out += _coverage_md(report)
    out += ["![accuracy by type](gqa_accuracy_by_type.png)", ""]
    return out


def render_markdown(report: Mapping[str, Any]) -> str:
    lines = _contrast_md(report) if report["kind"] == "contrast" else _gqa_md(report)
    return "\n".join(lines).rstrip() + "\n"


# ------------------------------------------------------------------------------------- files


def write_report(report: Mapping[str, Any], out_dir: str | os.PathLike[str]) -> list[str]:
    """Write report.json, report.csv, report.md and the plots (PNG and SVG); return the names."""
    from contrastgen.evaluation import plots  # matplotlib is slow to import; only when writing

    if report.get("kind") not in ("contrast", "gqa"):
        raise InputError(f"unknown report kind {report.get('kind')!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "report.json", report, indent=True)
    write_text(out / "report.csv", render_csv(report))
    write_text(out / "report.md", render_markdown(report))
    written = ["report.json", "report.csv", "report.md"]
    if report["kind"] == "contrast":
        written += plots.plot_accuracy_by_template(report, out)
        written += plots.plot_consistency_by_k(report, out)
    else:
        written += plots.plot_gqa_by_type(report, out)
    return written


# ---------------------------------------------------------------------------------- terminal


def _short_ci(est: Mapping[str, Any]) -> str:
    """`65.0 (53-75)`: the interval in whole points, so a table of many models fits a terminal."""
    value, (low, high) = est.get("value"), (est.get("ci") or [None, None])
    if value is None:
        return "-"
    if low is None or high is None:
        return f"{100 * value:.1f}"
    return f"{100 * value:.1f} ({100 * low:.0f}-{100 * high:.0f})"


def _contrast_table(report: Mapping[str, Any]) -> Table:
    kmax = str(max(report["settings"]["ks"]))
    models = report["models"]
    table = Table(title=f"Contrast sets, k = {kmax}: accuracy on originals -> on perturbations, "
                        "drop, contrast consistency (%)",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("template", overflow="fold")
    table.add_column("perts", justify="right")
    for model in models:
        table.add_column(f"{model}\nOrig->Pert", justify="right", no_wrap=True)
        table.add_column("\nDrop", justify="right", no_wrap=True)
        table.add_column("\nCons", justify="right", no_wrap=True)
    first = report["results"][models[0]][kmax]
    for group in [*report["templates"], "overall"]:
        base = first["overall"] if group == "overall" else first["by_template"].get(group)
        cells = [group, str(base["n_perturbations"]) if base else "-"]
        for model in models:
            res = report["results"][model][kmax]
            m = res["overall"] if group == "overall" else res["by_template"].get(group, {})
            cells += [f"{pct(m.get('original_accuracy'))}->{pct(m.get('perturbed_accuracy'))}",
                      pct(m.get("drop")), pct(m.get("consistency"))]
        table.add_row(*cells, end_section=group == report["templates"][-1],
                      style="bold" if group == "overall" else None)
    return table


def _gqa_table(report: Mapping[str, Any]) -> Table:
    models = report["models"]
    table = Table(title="GQA standard metrics (%, 95% CI)", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("metric")
    for model in models:
        table.add_column(model, justify="right")
    for metric in ("accuracy", "binary", "open", "consistency"):
        table.add_row(metric, *(_short_ci(report["results"][m][metric]) for m in models))
    table.add_row("distribution", *(str(report["results"][m]["distribution"]) for m in models),
                  end_section=True)
    for breakdown in ("by_structural", "by_semantic"):
        groups = sorted({g for m in models for g in report["results"][m][breakdown]})
        for g in groups:
            table.add_row(f"{breakdown[3:]}: {g}",
                          *(pct(report["results"][m][breakdown].get(g, {}).get("value"))
                            for m in models), end_section=g == groups[-1])
    return table


def render_table(report: Mapping[str, Any]) -> Table:
    """The main table: per template and overall at the largest k (or GQA's metrics)."""
    return _contrast_table(report) if report["kind"] == "contrast" else _gqa_table(report)


def _k_table(report: Mapping[str, Any]) -> Table:
    table = Table(title="By k (nested sets), overall, % with 95% CI", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("k", justify="right")
    table.add_column("perts", justify="right")
    for model in report["models"]:
        table.add_column(f"{model}\nPert", justify="right", no_wrap=True)
        table.add_column(f"{model}\nCons", justify="right", no_wrap=True)
    for k in report["settings"]["ks"]:
        first = report["results"][report["models"][0]][str(k)]["overall"]
        cells = [str(k), str(first["n_perturbations"])]
        for model in report["models"]:
            m = report["results"][model][str(k)]["overall"]
            cells += [_short_ci(m["perturbed_accuracy"]), _short_ci(m["consistency"])]
        table.add_row(*cells)
    return table


def _examples_table(model: str, examples: list[Mapping[str, Any]]) -> Table:
    """Failing sets for error analysis: each original, then its perturbations and what changed."""
    table = Table(title=f"Failing contrast sets: {model} ({len(examples)} sampled)",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("id", no_wrap=True)
    table.add_column("question", overflow="fold")
    table.add_column("gold")
    table.add_column("predicted")
    table.add_column("change", overflow="fold")
    for ex in examples:
        table.add_row(ex["question_id"], ex["question"], ex["answer"], _mark(ex),
                      ex["template"], style="bold")
        for p in ex["perturbations"]:
            change = p.get("change") or {}
            table.add_row(f"  c{p['rank']}", p["question"], p["answer"], _mark(p),
                          f"{change.get('kind')}: {change.get('from')} -> {change.get('to')}",
                          end_section=p is ex["perturbations"][-1])
    return table


def _mark(entry: Mapping[str, Any]) -> Text:
    prediction = "(none)" if entry.get("prediction") is None else str(entry["prediction"])
    return Text(prediction, style="green" if entry["correct"] else "red")


def _invariance_gaps(inv: Mapping[str, Any]) -> str:
    said = ([f"{inv['missing']} questions without a prediction, their sets left out"] if inv["missing"] else []) + (
        [f"{inv['empty']} empty answers, counted wrong"] if inv["empty"] else [])
    return f" ({'; '.join(said)})" if said else ""


def render_report(report: Mapping[str, Any]) -> RenderableType:
    """Everything the terminal shows: the main table, the k table, oracle noise, the failing
    sets when examples were asked for, and missing predictions."""
    parts: list[RenderableType] = [render_table(report)]
    if report["kind"] == "contrast":
        parts.append(_k_table(report))
    oracle = report.get("oracle")
    if oracle:
        rate = oracle["disagreement_rate"]
        parts.append(Text(f"Oracle '{oracle['model']}' disagrees with the gold answers on "
                          f"{pct(rate, ci=isinstance(rate, Mapping))}% of the originals it answered "
                          "(annotation noise a model's drop may contain)."))
    for model, groups in report.get("groups", {}).items():
        g = groups["overall"]
        if g["groups"]:
            parts.append(Text(f"{model}: two-image groups ({g['groups']:,}): question accuracy "
                              f"{pct(g['question_accuracy'])}%, image accuracy {pct(g['image_accuracy'])}%, "
                              f"group accuracy {pct(g['group_accuracy'])}%"
                              + (f" ({groups['missing_cells']} cells without a prediction: their groups left out)"
                                 if groups["missing_cells"] else "")))
    for model, inv in report.get("invariance", {}).items():
        m = inv["overall"]
        parts.append(Text(f"{model}: invariance sets ({m['n_sets']:,}, {m['n_perturbations']:,} "
                          f"perturbations): consistency {pct(m['consistency'])}%, accuracy on originals "
                          f"{pct(m['original_accuracy'])}%, on invariance perturbations "
                          f"{pct(m['perturbed_accuracy'])}%"
                          + _invariance_gaps(inv)))
    for model, examples in report.get("examples", {}).items():
        if examples:
            parts.append(_examples_table(model, examples))
    for model, cov in report["coverage"].items():
        if cov["missing"] and report["kind"] == "contrast":
            parts.append(Text(partial_note(model, cov), style="yellow"))
        elif cov["missing"]:
            parts.append(Text(f"{model}: {cov['missing']} of {cov['questions']} questions have no "
                              "prediction (counted as wrong; --strict to refuse)", style="yellow"))
        if cov.get("empty"):
            parts.append(Text(f"{model}: {cov['empty']} of {cov['questions']} questions have an empty "
                              "answer (counted as wrong)", style="yellow"))
    return Group(*parts)
