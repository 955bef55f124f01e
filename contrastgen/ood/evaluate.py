"""Scoring predictions on a GQA-OOD or VQA-VS directory built by `contrastgen ood`.

GQA-OOD (Kervadec et al. 2021, Sec. 3-4): acc-all, acc-head, acc-tail, their difference and the
paper's relative gap (head - tail) / tail; acc-tail as the tail grows with alpha (the paper's
Fig. 3a); and head/tail confusion, the share of tail questions answered with a head answer of the
same group (Fig. 3b; the head stays fixed at the construction alpha while the tail shrinks, as in
the paper's App. D). VQA-VS (Si et al. 2022, Table 2): VQA accuracy on the IID set and on each OOD
set, their mean, and the IID - OOD gap; head accuracies per shortcut are reported too (Sec. 5.3).

Every accuracy comes with a 95% percentile-bootstrap interval (scipy), seeded, because the tails
are small and a reader needs to know whether two models really differ on them. Accuracies are
fractions in [0, 1]; a question without a prediction counts as wrong and is reported as missing.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from contrastgen.answers import normalize_answer
from contrastgen.datasets.gqa import load_questions
from contrastgen.errors import InputError
from contrastgen.files.manifest import (
    GQA_REDUNDANCY_LADDER,
    KINDS,
    OOD_GQA,
    OOD_KINDS,
    OOD_SUPERCLEVR,
    OOD_SUPERCLEVR_VARIANTS,
    artifact_kind,
)
from contrastgen.jsonio import read_json, write_json
from contrastgen.ood.concepts import SHORTCUT_NAMES
from contrastgen.ood.gqa_ood import GROUPS_FILE, STATS_FILE, local_group
from contrastgen.ood.imbalance import tail_answers
from contrastgen.ood.rules_data import alpha_grid
from contrastgen.ood.vqa_accuracy import accuracy_normalized, normalize_vqa_answer

Predictions = Mapping[str, Mapping[str, str]]
REPORT_FILE = "ood_report.json"
BOOTSTRAP_RESAMPLES = 1000


IID_VAL = "IID val"  # VQA-VS's IID validation set, scored beside the IID test set (never in the gap)


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if values.size else None


def bootstrap_ci(values: np.ndarray, rng: np.random.Generator,
                 n_resamples: int = BOOTSTRAP_RESAMPLES) -> list[float] | None:
    """95% percentile-bootstrap interval of the mean (None below two values)."""
    if values.size < 2:
        return None
    if np.all(values == values[0]):
        return [float(values[0]), float(values[0])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = scipy_stats.bootstrap((values,), np.mean, n_resamples=n_resamples, batch=100,
                                    confidence_level=0.95, method="percentile", random_state=rng)
    return [float(res.confidence_interval.low), float(res.confidence_interval.high)]


def _check_predictions(predictions: Predictions, known: Sequence[str], ood_dir: Path) -> None:
    if not predictions:
        raise InputError("no predictions given", path=str(ood_dir))
    known_set = set(known)
    for name, preds in predictions.items():
        if not isinstance(preds, Mapping):
            raise InputError("predictions must map question id to answer", record=f"model {name}")
        if not known_set.intersection(preds):
            raise InputError("predictions cover none of the questions of this OOD directory",
                             path=str(ood_dir), record=f"model {name}")


def _read_stats(ood_dir: Path) -> dict[str, Any]:
    stats = read_json(ood_dir / STATS_FILE)
    if not isinstance(stats, Mapping) or stats.get("benchmark") not in ("gqa-ood", "vqa-vs", "super-clevr",
                                                                        "gqa-redundancy"):
        raise InputError("not a GQA-OOD, VQA-VS or Super-CLEVR directory, nor a GQA redundancy ladder "
                         "(stats.json names no benchmark)",
                         path=str(ood_dir / STATS_FILE))
    return dict(stats)


def evaluate_gqa_ood(ood_dir: Path, stats: Mapping[str, Any], predictions: Predictions, *,
                     seed: int = 0, alphas: Sequence[float] | None = None) -> dict[str, Any]:
    questions = load_questions(ood_dir / "all.json")
    groups = read_json(ood_dir / GROUPS_FILE)
    if not isinstance(groups, Mapping):
        raise InputError("expected an object keyed by group", path=str(ood_dir / GROUPS_FILE))
    qids = sorted(questions)
    _check_predictions(predictions, qids, ood_dir)
    build_alpha = float(stats["alpha"])
    strict = stats.get("rule") == "released"
    grid = sorted(set(alphas or alpha_grid()) | {build_alpha})
    gold, group_of = [], []
    for qid in qids:
        g = local_group(questions[qid])
        if g not in groups:
            raise InputError(f"question's group {g!r} is not in {GROUPS_FILE}", path=str(ood_dir / "all.json"),
                             record=f"question {qid}")
        gold.append(questions[qid]["answer"])
        group_of.append(g)
    # Per alpha, which questions are in the tail; the head is fixed by the construction alpha.
    tails_at = {}
    for a in grid:
        tail_sets = {k: set(tail_answers(g["counts"], a, strict=strict)) for k, g in groups.items()}
        tails_at[a] = np.array([gold[i] in tail_sets[group_of[i]] for i in range(len(qids))], dtype=bool)
    head_norm = {k: {normalize_answer(a) for a in g["counts"] if a not in set(g["tail"])}
                 for k, g in groups.items()}
    built_tails = {k: set(g["tail"]) for k, g in groups.items()}
    is_tail = np.array([gold[i] in built_tails[group_of[i]] for i in range(len(qids))], dtype=bool)
    rng = np.random.default_rng(seed)
    models: dict[str, Any] = {}
    for name in sorted(predictions):
        preds = predictions[name]
        norm = [normalize_answer(preds.get(q)) if q in preds else None for q in qids]
        correct = np.array([p is not None and p == normalize_answer(gold[i]) for i, p in enumerate(norm)], dtype=float)
        says_head = np.array([p is not None and p in head_norm[group_of[i]] for i, p in enumerate(norm)], dtype=float)
        acc_all, acc_head, acc_tail = _mean(correct), _mean(correct[~is_tail]), _mean(correct[is_tail])
        sweep = []
        for a in grid:
            mask = tails_at[a]
            sweep.append({"alpha": a, "tail_size": int(mask.sum()), "acc_tail": _mean(correct[mask]),
                          "confusion": _mean(says_head[mask]) if a <= build_alpha else None})
        models[name] = {
            "answered": sum(1 for p in norm if p is not None),
            "missing": sum(1 for p in norm if p is None),
            "acc_all": acc_all, "acc_head": acc_head, "acc_tail": acc_tail,
            "diff": None if acc_head is None or acc_tail is None else acc_head - acc_tail,
            "delta_rel": (acc_head - acc_tail) / acc_tail if acc_head is not None and acc_tail else None,
            "confusion": _mean(says_head[is_tail]),
            "ci95": {"acc_all": bootstrap_ci(correct, rng), "acc_head": bootstrap_ci(correct[~is_tail], rng),
                     "acc_tail": bootstrap_ci(correct[is_tail], rng)},
            "alpha_sweep": sweep,
        }
    return {"benchmark": "gqa-ood", "rule": stats.get("rule"), "alpha": build_alpha,
            "questions": {"all": len(qids), "head": int((~is_tail).sum()), "tail": int(is_tail.sum())},
            "models": models}


def _with_iid_val(ood_dir: Path, answers: Mapping[str, Any]) -> tuple[list[str], Mapping[str, Any]]:
    """The IID validation set's ids and every answer, when the directory was split (`--iid-split`)."""
    from contrastgen.ood.vqavs_iid import VAL_ANSWERS

    path = ood_dir / VAL_ANSWERS
    if not path.is_file():
        return [], answers
    val = read_json(path)
    if not isinstance(val, Mapping) or not isinstance(val.get("ids"), list) or not isinstance(val.get("answers"), Mapping):
        raise InputError("malformed IID validation set (expected {\"ids\": [...], \"answers\": {...}})", path=str(path))
    return [str(q) for q in val["ids"]], {**answers, **val["answers"]}


def evaluate_vqavs(ood_dir: Path, stats: Mapping[str, Any], predictions: Predictions, *,
                   seed: int = 0) -> dict[str, Any]:
    splits = read_json(ood_dir / "splits.json")
    answers = read_json(ood_dir / "answers.json")
    if not isinstance(splits, Mapping) or not isinstance(answers, Mapping):
        raise InputError("malformed VQA-VS directory (splits.json / answers.json)", path=str(ood_dir))
    iid = list(splits.get("iid", []))
    _check_predictions(predictions, iid, ood_dir)
    val_ids, answers = _with_iid_val(ood_dir, answers)
    scored = iid + val_ids
    index = {q: i for i, q in enumerate(scored)}
    try:
        gold = [[normalize_vqa_answer(a) for a in answers[q]["answers"]] for q in scored]
    except KeyError as exc:
        raise InputError("question has no answers", path=str(ood_dir / "answers.json"),
                         record=f"question {exc.args[0]}") from None
    # VQA-VS reports yes/no, number and other separately; GQA and older directories have no types
    answer_type = {q: answers[q].get("answer_type") for q in scored}
    types = sorted({t for t in answer_type.values() if isinstance(t, str)})
    ood_names = [n for n in SHORTCUT_NAMES if n in splits.get("ood", {})]
    sets = {"IID": iid, **({IID_VAL: val_ids} if val_ids else {}), **{n: splits["ood"][n] for n in ood_names}}
    heads = {n: splits["head"][n] for n in SHORTCUT_NAMES if n in splits.get("head", {})}
    rng = np.random.default_rng(seed)
    models: dict[str, Any] = {}
    for name in sorted(predictions):
        preds = predictions[name]
        scores = np.array([accuracy_normalized(normalize_vqa_answer(preds[q]), gold[i]) if q in preds else 0.0
                           for i, q in enumerate(scored)])

        def subset(ids: Sequence[str], scores: np.ndarray = scores) -> np.ndarray:
            return scores[[index[q] for q in ids]] if ids else np.zeros(0)

        accuracy = {s: _mean(subset(ids)) for s, ids in sets.items()}
        ood = [accuracy[n] for n in ood_names if accuracy[n] is not None]
        ood_mean = float(np.mean(ood)) if ood else None
        models[name] = {
            "answered": sum(1 for q in iid if q in preds),
            "missing": sum(1 for q in iid if q not in preds),
            "accuracy": accuracy,
            "ood_mean": ood_mean,
            "gap": None if ood_mean is None or accuracy["IID"] is None else accuracy["IID"] - ood_mean,
            "head_accuracy": {n: _mean(subset(ids)) for n, ids in heads.items()},
            "by_answer_type": {t: {s: _mean(subset([q for q in ids if answer_type[q] == t])) for s, ids in sets.items()}
                               for t in types},
            "ci95": {s: bootstrap_ci(subset(ids), rng) for s, ids in sets.items()},
        }
    skipped = {n: s["skipped"] for n, s in stats.get("shortcuts", {}).items() if "skipped" in s}
    return {"benchmark": "vqa-vs", "sets": list(sets), "sizes": {s: len(ids) for s, ids in sets.items()},
            "answer_types": {t: {s: sum(1 for q in ids if answer_type[q] == t) for s, ids in sets.items()}
                             for t in types},
            "skipped": skipped, "models": models}


def evaluate_ood(ood_dir: str | os.PathLike[str], predictions: Predictions, *,
                 out_dir: Path | None = None, seed: int = 0) -> dict:
    """Score models' predictions ({model: {question id: raw answer}}) on an OOD directory.

    GQA-OOD, VQA-VS, Super-CLEVR or a GQA redundancy ladder, as the directory's manifest says
    (`files.manifest`). With `out_dir`, writes
    `ood_report.json` and the figures (`ood_alpha_sweep.png` or `ood_vqavs_accuracy.png`) there.
    """
    from contrastgen.ood.plots import plot_alpha_sweep, plot_vqavs_accuracy

    root = Path(ood_dir)
    kind = artifact_kind(root)  # the directory's manifest (or an older output's layout) says
    if kind not in OOD_KINDS:
        raise InputError("not a GQA-OOD, VQA-VS or Super-CLEVR directory, nor a GQA redundancy ladder "
                         f"({'it is ' + KINDS[kind] if kind else 'it has no manifest, and stats.json names no benchmark'})",
                         path=str(root))
    stats = _read_stats(root)
    if kind == OOD_GQA:
        report = evaluate_gqa_ood(root, stats, predictions, seed=seed)
    elif kind in (OOD_SUPERCLEVR, OOD_SUPERCLEVR_VARIANTS):
        from contrastgen.ood.superclevr_eval import evaluate_superclevr

        report = evaluate_superclevr(root, predictions, seed=seed, ci=bootstrap_ci)
    elif kind == GQA_REDUNDANCY_LADDER:
        from contrastgen.ood.gqa_redundancy_eval import evaluate_ladder

        report = evaluate_ladder(root, predictions, seed=seed, ci=bootstrap_ci)
    else:
        report = evaluate_vqavs(root, stats, predictions, seed=seed)
    report["seed"] = seed
    if out_dir is not None and report["benchmark"] in ("super-clevr", "gqa-redundancy"):
        report["files"] = [REPORT_FILE]
        write_json(Path(out_dir) / REPORT_FILE, report, indent=True)
    elif out_dir is not None:
        out = Path(out_dir)
        figure = "ood_alpha_sweep.png" if report["benchmark"] == "gqa-ood" else "ood_vqavs_accuracy.png"
        report["files"] = [REPORT_FILE, figure]
        if report["benchmark"] == "gqa-ood":
            plot_alpha_sweep(report, out / figure)
        else:
            plot_vqavs_accuracy(report, out / figure)
        write_json(out / REPORT_FILE, report, indent=True)
    return report
