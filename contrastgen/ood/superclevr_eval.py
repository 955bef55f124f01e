"""Scoring models on the Super-CLEVR splits `contrastgen ood superclevr` builds, with the paper's
metrics: accuracy on each split, and the Relative Degrade of each domain-shift factor.

Relative Degrade (Super-CLEVR, section 5): the accuracy lost under a shift, divided by the
in-domain accuracy, RD = (a - b) / a. One model is scored on splits of one test set here, so the
in-domain side of each factor is the split a model trained on the usual data meets:
- question redundancy: `rd` (the questions as written) against `rd-` and `rd+`, and their mean;
- concept distribution: the drop from `head` to `tail`, divided by the accuracy on every question
  of the three concept splits (`head`, `tail`, `none`: the paper divides by its balanced variant);
- compositionality: `co_train` (no held-out shape-colour pair in the scene) against `co_test`.
An answer is right when it equals the gold answer as CLEVR writes answers (yes/no, digits, words),
compared case- and space-insensitively.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from contrastgen.errors import InputError
from contrastgen.jsonio import read_json

SPLITS = ("head", "tail", "none", "co_train", "co_test", "rd-", "rd", "rd+")
# factor -> (in-domain split, out-of-domain splits)
FACTORS = {"redundancy": ("rd", ("rd-", "rd+")), "concept": ("head", ("tail",)),
           "compositionality": ("co_train", ("co_test",))}


def answer_words(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return " ".join(str(value).lower().split())


def question_id(q: Mapping[str, Any], i: int) -> str:
    return str(q.get("question_index", i))


def read_splits(ood_dir: Path) -> dict[str, dict[str, str]]:
    """split -> {question id: gold answer}, for the splits the directory holds."""
    out: dict[str, dict[str, str]] = {}
    for name in SPLITS:
        path = ood_dir / f"{name}.json"
        if not path.is_file():
            continue
        data = read_json(path)
        rows = data.get("questions") if isinstance(data, Mapping) else None
        if not isinstance(rows, list):
            raise InputError("expected {\"questions\": [...]}", path=str(path))
        gold: dict[str, str] = {}
        for i, q in enumerate(rows):
            qid = question_id(q, i) if isinstance(q, Mapping) else str(i)
            if not isinstance(q, Mapping) or "answer" not in q:
                raise InputError("question has no answer", path=str(path), record=f"question {qid}")
            if qid in gold:
                raise InputError("question id appears twice (build the splits again: ids are qualified by "
                                 "file when several question files are given)", path=str(path),
                                 record=f"question {qid}")
            gold[qid] = answer_words(q["answer"])
        out[name] = gold
    if not out:
        raise InputError("no Super-CLEVR split here", path=str(ood_dir))
    return out


def relative_degrade(in_domain: float | None, out_of_domain: float | None,
                     reference: float | None = None) -> float | None:
    """(a - b) / a; `reference` replaces a as the divisor (the concept factor's)."""
    divisor = in_domain if reference is None else reference
    if in_domain is None or out_of_domain is None or not divisor:
        return None
    return (in_domain - out_of_domain) / divisor


def evaluate_superclevr(ood_dir: Path, predictions: Mapping[str, Mapping[str, Any]], *, seed: int = 0,
                        ci: Any = None) -> dict[str, Any]:
    """Accuracy per split (with a bootstrap interval when `ci` is given) and Relative Degrade per
    factor, per model."""
    splits = read_splits(ood_dir)
    known = sorted({q for gold in splits.values() for q in gold})
    for name, preds in predictions.items():
        if not isinstance(preds, Mapping) or not set(known).intersection(preds):
            raise InputError("predictions cover none of the questions of this OOD directory",
                             path=str(ood_dir), record=f"model {name}")
    rng = np.random.default_rng(seed)
    models: dict[str, Any] = {}
    for name in sorted(predictions):
        preds = predictions[name]
        correct = {s: np.array([q in preds and answer_words(preds[q]) == a for q, a in gold.items()], dtype=float)
                   for s, gold in splits.items()}
        accuracy = {s: float(c.mean()) if c.size else None for s, c in correct.items()}
        concept_all = np.concatenate([correct[s] for s in ("head", "tail", "none") if s in correct] or [np.zeros(0)])
        rd: dict[str, Any] = {}
        for factor, (iid, shifted) in FACTORS.items():
            if iid not in accuracy or not all(s in accuracy for s in shifted):
                continue
            reference = float(concept_all.mean()) if factor == "concept" and concept_all.size else None
            each = {s: relative_degrade(accuracy[iid], accuracy[s], reference) for s in shifted}
            values = [v for v in each.values() if v is not None]
            rd[factor] = {"in_domain": iid, "by_split": each,
                          "mean": float(np.mean(values)) if values else None}
        models[name] = {
            "answered": sum(1 for q in known if q in preds), "missing": sum(1 for q in known if q not in preds),
            "accuracy": accuracy, "relative_degrade": rd,
            "ci95": {s: ci(c, rng) for s, c in correct.items()} if ci is not None else {},
        }
    return {"benchmark": "super-clevr", "sizes": {s: len(g) for s, g in splits.items()}, "models": models}


def superclevr_table(report: Mapping[str, Any]):
    """A rich table: accuracy per split and Relative Degrade per factor, one row per model."""
    from rich.table import Table

    sizes: Sequence[str] = list(report["sizes"])
    t = Table(title="Super-CLEVR splits: accuracy, and Relative Degrade RD = (a - b) / a")
    t.add_column("model")
    for s in sizes:
        t.add_column(f"{s} ({report['sizes'][s]})", justify="right")
    factors = [f for f in FACTORS if any(f in m["relative_degrade"] for m in report["models"].values())]
    for f in factors:
        t.add_column(f"RD {f}", justify="right")
    for name, m in report["models"].items():
        cells = [_pct(m["accuracy"].get(s)) for s in sizes]
        cells += [_pct(m["relative_degrade"].get(f, {}).get("mean")) for f in factors]
        t.add_row(name, *cells)
    return t


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"
