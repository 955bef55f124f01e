"""Score a finished MTurk batch: human accuracy, agreement, and perturbations to review.

This reproduces the paper's validation (Section 2.3: accuracy of workers on perturbed vs
original questions, and kappa) and goes one step further: every perturbation whose crowd
majority disagrees with the computed answer is listed with its evidence, because the paper
found most such cases were scene-graph annotation errors, and a reviewer needs the facts the
answer was derived from to tell a graph error from a generator bug.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
from crowdkit.aggregation import DawidSkene, MajorityVote

from contrastgen.errors import InputError
from contrastgen.files.atomic import atomic_dir
from contrastgen.jsonio import dumps, write_json, write_text

from .agreement import agreement, bootstrap_mean, paired_bootstrap_diff, wilson
from .manifest import load_manifest
from .report_md import render_markdown
from .results import CANNOT_TELL, Annotation, read_results

SCORED_ROLES = ("original", "perturbed")
AGGREGATORS = ("majority", "dawid-skene")
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
ITEMS_JSONL = "items.jsonl"
REVIEW_JSONL = "review.jsonl"
WORKERS_JSONL = "workers.jsonl"


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def _aggregate(frame: pd.DataFrame, method: str) -> dict[str, str]:
    if frame.empty:
        return {}
    with warnings.catch_warnings():  # crowd-kit uses pandas keywords that pandas 3 deprecates
        warnings.filterwarnings("ignore", module=r"crowdkit\.")
        if method == "majority":
            labels = MajorityVote().fit_predict(frame)
        elif method == "dawid-skene":
            labels = DawidSkene(n_iter=100).fit_predict(frame)
        else:
            raise InputError(f"unknown aggregator {method!r}; choose from {', '.join(AGGREGATORS)}")
    return {str(k): str(v) for k, v in labels.items()}


def _worker_table(annotations: list[Annotation], items: Mapping[str, Any],
                  min_gold_accuracy: float) -> dict[str, dict[str, Any]]:
    workers: dict[str, dict[str, Any]] = defaultdict(lambda: {"assignments": set(), "ratings": 0,
                                                              "gold_answered": 0, "gold_correct": 0})
    for a in annotations:
        w = workers[a.worker_id]
        w["assignments"].add(a.assignment_id)
        item = items[a.item]
        if item["role"] == "gold":
            w["gold_answered"] += 1
            w["gold_correct"] += int(a.label in item["answers"])
        else:
            w["ratings"] += 1
    table = {}
    for wid in sorted(workers):
        w = workers[wid]
        gold_acc = w["gold_correct"] / w["gold_answered"] if w["gold_answered"] else None
        table[wid] = {
            "worker_id": wid, "assignments": len(w["assignments"]), "ratings": w["ratings"],
            "gold_answered": w["gold_answered"], "gold_correct": w["gold_correct"],
            "gold_accuracy": _r(gold_acc),
            "flagged": gold_acc is not None and gold_acc < min_gold_accuracy,
        }
    return table


def _accuracy_block(rows: list[dict[str, Any]], *, seed: int) -> dict[str, Any]:
    rated = [r for r in rows if r["ratings"] > 0]
    n = len(rated)
    correct = sum(1 for r in rated if r["majority_correct"])
    shares = [r["rating_accuracy"] for r in rated]
    lo, hi = wilson(correct, n)
    blo, bhi = bootstrap_mean(shares, seed=seed)
    return {
        "items": n,
        "majority_correct": correct,
        "majority_accuracy": _r(correct / n) if n else None,
        "majority_accuracy_ci95": [_r(lo), _r(hi)],
        "rating_accuracy": _r(sum(shares) / n) if n else None,
        "rating_accuracy_ci95": [_r(blo), _r(bhi)],
        "cannot_tell_share": _r(sum(r["cannot_tell"] for r in rated) / max(1, sum(r["ratings"] for r in rated))),
    }


def _item_rows(items: Mapping[str, Any], labels: Mapping[str, list[str]],
               aggregated: Mapping[str, str]) -> list[dict[str, Any]]:
    rows = []
    for tok in sorted(items, key=lambda t: (items[t].get("pair_id") or "", items[t]["role"], t)):
        item = items[tok]
        if item["role"] not in SCORED_ROLES:
            continue
        votes = labels.get(tok, [])
        counts = Counter(votes)
        top = counts.most_common()
        tie = len(top) > 1 and top[0][1] == top[1][1]
        majority = aggregated.get(tok)
        computed = item["answers"][0]
        rows.append({
            "token": tok, "role": item["role"], "template": item.get("template"),
            "pair_id": item.get("pair_id"), "question_id": item.get("question_id"),
            "image_id": item["image_id"], "image_url": item["image_url"], "question": item["question"],
            "computed_answer": computed, "ratings": len(votes), "answers": dict(sorted(counts.items())),
            "majority": majority, "majority_tie": tie,
            "majority_correct": majority == computed if votes else None,
            "rating_accuracy": _r(counts[computed] / len(votes)) if votes else None,
            "cannot_tell": counts[CANNOT_TELL],
        })
    return rows


def _review_entry(row: dict[str, Any], item: Mapping[str, Any], partner: dict[str, Any] | None,
                  partner_item: Mapping[str, Any] | None) -> dict[str, Any]:
    entry = {k: row[k] for k in ("token", "role", "template", "pair_id", "question_id", "image_id",
                                 "image_url", "question", "computed_answer", "answers", "majority",
                                 "majority_tie", "ratings")}
    if item["role"] == "perturbed":
        entry.update(rank=item.get("rank"), change=item.get("change"), evidence=item.get("evidence"))
    if partner is not None and partner_item is not None:
        entry["partner"] = {"role": partner["role"], "question": partner["question"],
                            "computed_answer": partner["computed_answer"], "majority": partner["majority"],
                            "answers": partner["answers"]}
    return entry


def ingest_results(manifest: str | os.PathLike[str] | Mapping[str, Any],
                   results_csv_paths: Iterable[str | os.PathLike[str]], *, out: str | os.PathLike[str] | None = None,
                   min_gold_accuracy: float = 0.7, exclude_flagged: bool = False,
                   aggregator: str = "majority", seed: int = 0) -> dict[str, Any]:
    """Score MTurk results against the export manifest; write the report to `out` if given.

    Returns the summary written to `report.json` (the per-item and review lists are included
    under `items` and `review`).
    """
    if aggregator not in AGGREGATORS:
        raise InputError(f"unknown aggregator {aggregator!r}; choose from {', '.join(AGGREGATORS)}")
    man = load_manifest(manifest)
    items = man["items"]
    batch = read_results(list(results_csv_paths), man)
    workers = _worker_table(batch.annotations, items, min_gold_accuracy)
    flagged = sorted(w for w, rec in workers.items() if rec["flagged"])
    used = _usable(batch, items, flagged if exclude_flagged else [])
    labels, frame = _votes(used)
    rows = _item_rows(items, labels, _aggregate(frame, aggregator))
    by_role = {role: [r for r in rows if r["role"] == role] for role in SCORED_ROLES}
    review = _review(by_role, rows, items)
    summary: dict[str, Any] = {
        "manifest": {"seed": man["params"]["seed"], "sample": man["params"]["sample"],
                     "items_per_hit": man["params"]["items_per_hit"], "hits": len(man["hits"])},
        "results_files": batch.files,
        "assignments": {"kept": batch.kept_assignments, "rejected_dropped": batch.rejected_assignments},
        "ratings": {"used": len(used), "blank_dropped": batch.blank_answers,
                    "from_flagged_workers_dropped": _dropped_from_flagged(batch, items, flagged, exclude_flagged)},
        "aggregator": aggregator,
        "accuracy": {role: _accuracy_block(by_role[role], seed=seed) for role in SCORED_ROLES},
        "gap": _gap(rows, seed),
        "per_template": _per_template(rows, by_role, seed),
        "agreement": _agreements(labels, frame, items),
        "workers": {"count": len(workers), "flagged": flagged, "min_gold_accuracy": min_gold_accuracy,
                    "excluded_flagged": exclude_flagged},
        "review_counts": {role: sum(1 for e in review if e["role"] == role) for role in SCORED_ROLES},
        "majority_ties": sum(1 for r in rows if r["majority_tie"]),
    }
    if out is not None:
        _write_report(out, summary, rows, review, workers)
    return {**summary, "items": rows, "review": review}


def _usable(batch: Any, items: Mapping[str, Any], excluded: list[str]) -> list[Annotation]:
    """The answers scored: to original and perturbed questions, from workers not excluded; none is
    an input error, since there is nothing to report on."""
    left_out = set(excluded)
    used = [a for a in batch.annotations if items[a.item]["role"] in SCORED_ROLES and a.worker_id not in left_out]
    if not used:
        raise InputError("no usable answers to original or perturbed questions in the results",
                         path=", ".join(batch.files))
    return used


def _dropped_from_flagged(batch: Any, items: Mapping[str, Any], flagged: list[str], exclude_flagged: bool) -> int:
    if not exclude_flagged:
        return 0
    return sum(1 for a in batch.annotations if a.worker_id in flagged and items[a.item]["role"] in SCORED_ROLES)


def _votes(used: list[Annotation]) -> tuple[dict[str, list[str]], pd.DataFrame]:
    """Each item's answers in the order they were given, and the (task, worker, label) table the
    aggregators and agreement read."""
    labels: dict[str, list[str]] = defaultdict(list)
    for a in sorted(used, key=lambda a: a.order):
        labels[a.item].append(a.label)
    frame = pd.DataFrame([(a.item, a.worker_id, a.label) for a in used], columns=["task", "worker", "label"])
    return labels, frame


def _gap(rows: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """Majority accuracy on originals minus perturbations, over the pairs rated on both sides."""
    pairs: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        if r["ratings"]:
            pairs[r["pair_id"]][r["role"]] = r
    both = [p for _, p in sorted(pairs.items()) if len(p) == 2]
    orig = [float(p["original"]["majority_correct"]) for p in both]
    pert = [float(p["perturbed"]["majority_correct"]) for p in both]
    glo, ghi = paired_bootstrap_diff(orig, pert, seed=seed)
    return {"pairs": len(both), "original_minus_perturbed": _r((sum(orig) - sum(pert)) / len(both)) if both else None,
            "ci95": [_r(glo), _r(ghi)]}


def _per_template(rows: list[dict[str, Any]], by_role: Mapping[str, list[dict[str, Any]]],
                  seed: int) -> dict[str, Any]:
    templates = sorted({r["template"] for r in rows if r["template"]})
    return {t: {role: _accuracy_block([r for r in by_role[role] if r["template"] == t], seed=seed)
                for role in SCORED_ROLES}
            for t in templates}


def _agreements(labels: Mapping[str, list[str]], frame: pd.DataFrame, items: Mapping[str, Any]) -> dict[str, Any]:
    """Agreement over every scored item, then over each role's items alone."""
    agree = {"all": agreement(labels, frame).as_dict()}
    for role in SCORED_ROLES:
        role_labels = {t: v for t, v in labels.items() if items[t]["role"] == role}
        agree[role] = agreement(role_labels, frame[frame["task"].isin(set(role_labels))]).as_dict()
    return agree


def _review(by_role: Mapping[str, list[dict[str, Any]]], rows: list[dict[str, Any]],
            items: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every rated item whose majority disagrees with the computed answer, perturbations first,
    each beside its partner."""
    partners = {(r["pair_id"], r["role"]): r for r in rows}
    review = []
    for role in ("perturbed", "original"):
        for r in by_role[role]:
            if r["ratings"] and not r["majority_correct"]:
                other = "original" if role == "perturbed" else "perturbed"
                partner = partners.get((r["pair_id"], other))
                review.append(_review_entry(r, items[r["token"]], partner,
                                            items[partner["token"]] if partner else None))
    return review


def _write_report(out: str | os.PathLike[str], summary: Mapping[str, Any], rows: list[dict[str, Any]],
                  review: list[dict[str, Any]], workers: Mapping[str, dict[str, Any]]) -> None:
    with atomic_dir(out) as tmp:
        write_json(tmp / REPORT_JSON, summary, indent=True)
        write_text(tmp / REPORT_MD, render_markdown(summary, review))
        write_text(tmp / ITEMS_JSONL, b"".join(dumps(r) for r in rows).decode("utf-8"))
        write_text(tmp / REVIEW_JSONL, b"".join(dumps(e) for e in review).decode("utf-8"))
        write_text(tmp / WORKERS_JSONL, b"".join(dumps(w) for w in workers.values()).decode("utf-8"))
