"""GQA's standard metrics, defined as in GQA's official `eval.py`, so numbers are comparable.

What follows the official script (Hudson & Manning, 2019; `eval.py` from gqadataset.org):
- accuracy over the balanced questions (`isBalanced`; a question without the flag counts as
  balanced, since the balanced files are the ones people evaluate on);
- `open` = questions with `types.structural == "query"`, `binary` = all the others
  (verify, logical, choose, compare);
- accuracy per `types.structural`, `types.semantic`, number of words (`question.split()`) and
  number of reasoning steps (program operations except `exist`, `query: name`, `choose name`);
- consistency: for every balanced question answered correctly that has entailed questions
  (other than itself), the accuracy on those entailed questions; averaged over such questions;
- distribution: the chi-square of predicted vs gold answer counts per `groups.global`, weighted
  by group size, divided by 100 (lower is better).

Where we differ, on purpose, and why:
- answers are compared after `normalize_answer` (the official script compares raw strings):
  GQA's gold answers are already normal, so this only forgives a model's typography; an answer
  that normalises to nothing is never right (a question file without answers, like GQA's test
  split, must not score an empty submission 100%);
- a missing prediction counts as wrong and is reported (the official script aborts);
  `strict=True` restores the abort;
- an entailed question absent from the questions file is skipped and counted (the official
  script needs `val_all_questions.json`; with the balanced file most entailed questions are
  absent, so consistency is over the subset present — the report says how many);
- validity, plausibility (need GQA's choices file) and grounding (needs attention maps) are
  not computed;
- every headline metric carries a seeded 95% bootstrap interval over questions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from contrastgen.answers import is_right, normalize_answer
from contrastgen.errors import InputError
from contrastgen.evaluation.bootstrap import bootstrap_sums
from contrastgen.terminal.progress import Advance, noop
from contrastgen.terminal.progress import progress as progress_bar

# Operations that GQA's eval.py does not count as reasoning steps (a substring test, as there).
_NON_STEPS = ("exist", "query: name", "choose name")
REPORT_VERSION = 1


def steps(question: Mapping[str, Any]) -> int:
    """Number of reasoning steps, as GQA's `getStepsNum`."""
    ops = question.get("semantic") or []
    return sum(1 for c in ops
               if not any(o in f"{c.get('operation')}: {c.get('argument')}" for o in _NON_STEPS))


def answer_type(question: Mapping[str, Any]) -> str:
    structural = (question.get("types") or {}).get("structural")
    return "open" if structural == "query" else "binary"


def chi_square(gold: Mapping[str, Mapping[str, int]], pred: Mapping[str, Mapping[str, int]]) -> float | None:
    """GQA's distribution score before its division by 100: group-size-weighted chi-square."""
    total_score, total = 0.0, 0
    for group in sorted(gold):
        score, overall = 0.0, 0
        for ans, expected in gold[group].items():
            observed = pred.get(group, {}).get(ans, 0)
            score += (observed - expected) ** 2 / expected
            overall += expected
        total_score += score * overall
        total += overall
    return total_score / total if total else None


def _acc(columns: list[tuple[int, int]], *, seed: int, n_boot: int, advance: Advance = noop) -> dict[str, Any]:
    est = bootstrap_sums(np.array(columns, dtype=np.float64).reshape(-1, 2),
                         lambda s: {"accuracy": s[:, 1] / s[:, 0]}, n_boot=n_boot, seed=seed, advance=advance)
    return {"n": len(columns), **est["accuracy"].to_json()}


def _plain(values: list[int]) -> dict[str, Any]:
    return {"n": len(values), "value": round(sum(values) / len(values), 6) if values else None}


# the bootstraps of one model: accuracy, binary, open, consistency (a progress bar's total)
BOOTSTRAPS_PER_MODEL = 4


def evaluate_model(questions: Mapping[str, Mapping[str, Any]], preds: Mapping[str, str], *,
                   seed: int, n_boot: int, advance: Advance = noop) -> dict[str, Any]:
    """All metrics for one model's raw predictions (`advance(b)` per b bootstrap resamples done)."""
    def correct(qid: str) -> bool:
        return qid in preds and is_right(preds[qid], questions[qid].get("answer"), normalize=normalize_answer)

    balanced = [qid for qid, q in questions.items() if q.get("isBalanced", True)]
    scores = {qid: int(correct(qid)) for qid in balanced}
    by: dict[str, dict[Any, list[int]]] = {k: defaultdict(list) for k in
                                          ("structural", "semantic", "steps", "words")}
    by_answer_type: dict[str, list[int]] = defaultdict(list)
    gold_dist: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    pred_dist: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    consistency: list[float] = []
    entailed_absent = 0
    for qid in balanced:
        q, s = questions[qid], scores[qid]
        types = q.get("types") or {}
        by["structural"][types.get("structural", "unknown")].append(s)
        by["semantic"][types.get("semantic", "unknown")].append(s)
        by["steps"][str(steps(q))].append(s)
        by["words"][str(len(q["question"].split()))].append(s)
        by_answer_type[answer_type(q)].append(s)
        group = (q.get("groups") or {}).get("global")
        if group is not None:
            gold_dist[group][normalize_answer(q.get("answer"))] += 1
            pred_dist[group][normalize_answer(preds.get(qid))] += 1
        entailed = [e for e in q.get("entailed") or [] if e != qid]
        present = [e for e in entailed if e in questions]
        entailed_absent += len(entailed) - len(present)
        if s and present:
            consistency.append(sum(correct(e) for e in present) / len(present))

    def sort_key(k: str) -> tuple[int, Any]:
        return (0, int(k)) if k.isdigit() else (1, k)

    chi = chi_square(gold_dist, pred_dist)
    cons = bootstrap_sums(np.array([(1, c) for c in consistency], dtype=np.float64).reshape(-1, 2),
                          lambda s: {"c": s[:, 1] / s[:, 0]}, n_boot=n_boot, seed=seed, advance=advance)["c"]
    return {
        "accuracy": _acc([(1, scores[q]) for q in balanced], seed=seed, n_boot=n_boot, advance=advance),
        "binary": _acc([(1, s) for s in by_answer_type["binary"]], seed=seed, n_boot=n_boot, advance=advance),
        "open": _acc([(1, s) for s in by_answer_type["open"]], seed=seed, n_boot=n_boot, advance=advance),
        "consistency": {"n": len(consistency), **cons.to_json(),
                        "entailed_absent": entailed_absent},
        "distribution": None if chi is None else round(chi / 100, 6),
        "by_structural": {k: _plain(v) for k, v in sorted(by["structural"].items())},
        "by_semantic": {k: _plain(v) for k, v in sorted(by["semantic"].items())},
        "by_steps": {k: _plain(by["steps"][k]) for k in sorted(by["steps"], key=sort_key)},
        "by_words": {k: _plain(by["words"][k]) for k in sorted(by["words"], key=sort_key)},
    }


def _coverage(questions: Mapping[str, Mapping[str, Any]], preds: Mapping[str, str]) -> dict[str, Any]:
    needed = set()
    for qid, q in questions.items():
        if q.get("isBalanced", True):
            needed.add(qid)
            needed.update(e for e in q.get("entailed") or [] if e in questions)
    missing = sorted(q for q in needed if q not in preds)
    return {"questions": len(needed), "predictions": len(preds),
            "ignored": sum(1 for q in preds if q not in questions), "missing": len(missing),
            "missing_examples": missing[:10]}


def _oracle_section(questions: Mapping[str, Mapping[str, Any]], preds: Mapping[str, str],
                    name: str) -> dict[str, Any]:
    answered = [q for q in questions if q in preds]
    disagree = sum(normalize_answer(preds[q]) != normalize_answer(questions[q].get("answer"))
                   for q in answered)
    return {"model": name, "questions": len(questions), "answered": len(answered),
            "disagreeing": disagree,
            "disagreement_rate": round(disagree / len(answered), 6) if answered else None}


def evaluate_gqa(questions: Mapping[str, Mapping[str, Any]],
                 predictions: Mapping[str, Mapping[str, str]], *, seed: int = 0,
                 n_boot: int = 1000, strict: bool = False, oracle: str | None = None,
                 path: str | None = None, progress: bool = False) -> dict[str, Any]:
    """GQA standard metrics for each model (name -> raw predictions); the JSON report. `progress`:
    a bar on a terminal, per bootstrap resample."""
    if not predictions:
        raise InputError("no predictions given")
    if not questions:
        raise InputError("no questions given", path=path)
    if oracle is None and "oracle" in predictions:
        oracle = "oracle"
    report: dict[str, Any] = {
        "kind": "gqa", "version": REPORT_VERSION,
        "settings": {"seed": seed, "n_boot": n_boot, "confidence": 0.95, "strict": strict},
        "models": list(predictions), "coverage": {}, "results": {},
    }
    total = len(predictions) * BOOTSTRAPS_PER_MODEL * n_boot
    with progress_bar("evaluating GQA metrics", total, enabled=progress and total > 0) as advance:
        for name, preds in predictions.items():
            coverage = _coverage(questions, preds)
            if strict and coverage["missing"]:
                raise InputError(f"model {name!r} has no prediction for {coverage['missing']} "
                                 "questions (--strict)", path=path,
                                 record=f"question {coverage['missing_examples'][0]}")
            report["coverage"][name] = coverage
            report["results"][name] = evaluate_model(questions, preds, seed=seed, n_boot=n_boot, advance=advance)
    if oracle is not None:
        if oracle not in predictions:
            raise InputError(f"the oracle {oracle!r} is not among the models {sorted(predictions)}")
        report["oracle"] = _oracle_section(questions, predictions[oracle], oracle)
    return report
