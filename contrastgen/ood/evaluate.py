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
from dataclasses import dataclass
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
from contrastgen.terminal.progress import Advance, noop
from contrastgen.terminal.progress import progress as progress_bar

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
                     seed: int = 0, alphas: Sequence[float] | None = None, advance: Advance = noop) -> dict[str, Any]:
    """GQA-OOD's figures for each model (`advance(1)` as each is scored)."""
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
        advance(1)
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


@dataclass(frozen=True)
class _VqavsSets:
    """What a VQA-VS directory scores: the questions scored (the IID set, and the IID validation set
    when split), their normalised human answers and answer types, and the named sets over them."""

    iid: list[str]
    scored: list[str]
    index: dict[str, int]
    gold: list[list[str]]
    answer_type: dict[str, Any]
    types: list[str]
    ood_names: list[str]
    sets: dict[str, list[str]]
    heads: dict[str, list[str]]

    def subset(self, scores: np.ndarray, ids: Sequence[str]) -> np.ndarray:
        return scores[[self.index[q] for q in ids]] if ids else np.zeros(0)

    def of_type(self, ids: Sequence[str], answer_type: str) -> list[str]:
        return [q for q in ids if self.answer_type[q] == answer_type]


def _vqavs_sets(ood_dir: Path, predictions: Predictions) -> _VqavsSets:
    splits = read_json(ood_dir / "splits.json")
    answers = read_json(ood_dir / "answers.json")
    if not isinstance(splits, Mapping) or not isinstance(answers, Mapping):
        raise InputError("malformed VQA-VS directory (splits.json / answers.json)", path=str(ood_dir))
    iid = list(splits.get("iid", []))
    _check_predictions(predictions, iid, ood_dir)
    val_ids, answers = _with_iid_val(ood_dir, answers)
    scored = iid + val_ids
    try:
        gold = [[normalize_vqa_answer(a) for a in answers[q]["answers"]] for q in scored]
    except KeyError as exc:
        raise InputError("question has no answers", path=str(ood_dir / "answers.json"),
                         record=f"question {exc.args[0]}") from None
    # VQA-VS reports yes/no, number and other separately; GQA and older directories have no types
    answer_type = {q: answers[q].get("answer_type") for q in scored}
    ood_names = [n for n in SHORTCUT_NAMES if n in splits.get("ood", {})]
    return _VqavsSets(
        iid=iid, scored=scored, index={q: i for i, q in enumerate(scored)}, gold=gold, answer_type=answer_type,
        types=sorted({t for t in answer_type.values() if isinstance(t, str)}), ood_names=ood_names,
        sets={"IID": iid, **({IID_VAL: val_ids} if val_ids else {}), **{n: splits["ood"][n] for n in ood_names}},
        heads={n: splits["head"][n] for n in SHORTCUT_NAMES if n in splits.get("head", {})})


def _vqavs_model(data: _VqavsSets, preds: Mapping[str, str], rng: np.random.Generator) -> dict[str, Any]:
    """One model's VQA accuracy on every set, the OOD mean and gap, per answer type, with intervals."""
    scores = np.array([accuracy_normalized(normalize_vqa_answer(preds[q]), data.gold[i]) if q in preds else 0.0
                       for i, q in enumerate(data.scored)])
    accuracy = {s: _mean(data.subset(scores, ids)) for s, ids in data.sets.items()}
    ood = [accuracy[n] for n in data.ood_names if accuracy[n] is not None]
    ood_mean = float(np.mean(ood)) if ood else None
    return {
        "answered": sum(1 for q in data.iid if q in preds),
        "missing": sum(1 for q in data.iid if q not in preds),
        "accuracy": accuracy,
        "ood_mean": ood_mean,
        "gap": None if ood_mean is None or accuracy["IID"] is None else accuracy["IID"] - ood_mean,
        "head_accuracy": {n: _mean(data.subset(scores, ids)) for n, ids in data.heads.items()},
        "by_answer_type": {t: {s: _mean(data.subset(scores, data.of_type(ids, t))) for s, ids in data.sets.items()}
                           for t in data.types},
        "ci95": {s: bootstrap_ci(data.subset(scores, ids), rng) for s, ids in data.sets.items()},
    }


def evaluate_vqavs(ood_dir: Path, stats: Mapping[str, Any], predictions: Predictions, *,
                   seed: int = 0, advance: Advance = noop) -> dict[str, Any]:
    """VQA-VS's figures for each model (`advance(1)` as each is scored)."""
    data = _vqavs_sets(ood_dir, predictions)
    rng = np.random.default_rng(seed)
    models: dict[str, Any] = {}
    for name in sorted(predictions):
        models[name] = _vqavs_model(data, predictions[name], rng)
        advance(1)
    skipped = {n: s["skipped"] for n, s in stats.get("shortcuts", {}).items() if "skipped" in s}
    return {"benchmark": "vqa-vs", "sets": list(data.sets), "sizes": {s: len(ids) for s, ids in data.sets.items()},
            "answer_types": {t: {s: len(data.of_type(ids, t)) for s, ids in data.sets.items()} for t in data.types},
            "skipped": skipped, "models": models}


def evaluate_ood(ood_dir: str | os.PathLike[str], predictions: Predictions, *,
                 out_dir: Path | None = None, seed: int = 0, progress: bool = False) -> dict:
    """Score models' predictions ({model: {question id: raw answer}}) on an OOD directory.

    GQA-OOD, VQA-VS, Super-CLEVR or a GQA redundancy ladder, as the directory's manifest says
    (`files.manifest`). With `out_dir`, writes
    `ood_report.json` and the figures (`ood_alpha_sweep.png` or `ood_vqavs_accuracy.png`) there.
    `progress`: a bar on a terminal, per model scored.
    """
    from contrastgen.ood.plots import plot_alpha_sweep, plot_vqavs_accuracy

    root = Path(ood_dir)
    kind = artifact_kind(root)  # the directory's manifest (or an older output's layout) says
    if kind not in OOD_KINDS:
        raise InputError("not a GQA-OOD, VQA-VS or Super-CLEVR directory, nor a GQA redundancy ladder "
                         f"({'it is ' + KINDS[kind] if kind else 'it has no manifest, and stats.json names no benchmark'})",
                         path=str(root))
    stats = _read_stats(root)
    with progress_bar("scoring models", len(predictions), enabled=progress) as advance:
        report = _evaluate_benchmark(root, kind, stats, predictions, seed=seed, advance=advance)
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


def _evaluate_benchmark(root: Path, kind: str, stats: Mapping[str, Any], predictions: Predictions, *, seed: int,
                        advance: Advance) -> dict[str, Any]:
    """The report of the benchmark the directory's manifest names."""
    if kind == OOD_GQA:
        return evaluate_gqa_ood(root, stats, predictions, seed=seed, advance=advance)
    if kind in (OOD_SUPERCLEVR, OOD_SUPERCLEVR_VARIANTS):
        from contrastgen.ood.superclevr_eval import evaluate_superclevr

        return evaluate_superclevr(root, predictions, seed=seed, ci=bootstrap_ci, advance=advance)
    if kind == GQA_REDUNDANCY_LADDER:
        from contrastgen.ood.gqa_redundancy_eval import evaluate_ladder

        return evaluate_ladder(root, predictions, seed=seed, ci=bootstrap_ci, advance=advance)
    return evaluate_vqavs(root, stats, predictions, seed=seed, advance=advance)
