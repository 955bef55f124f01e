"""Contrast-set metrics: accuracy before and after perturbation, the drop, contrast consistency.

This is the measurement of Tables 2, 3, 4 and 9 of Bitton et al. (2021): accuracy on the
originals that have perturbations, accuracy on the perturbations, and contrast consistency
(Gardner et al., 2020: the share of contrast sets, original included, whose predictions are all
correct), for the nested sets k = 1, 3, 5, per template and overall. We add what the paper does
not give but a researcher needs to trust and act on the numbers: bootstrap intervals over
contrast sets, breakdowns by the kind of atom changed and by answer direction, the oracle's
disagreement with GQA (annotation noise), and the failing sets with their evidence.

A run is partial when its predictions cover a strict subset of the questions: a harness run with
`--limit`, or a multiple-choice file that holds only the questions with two possible answers.
A partial run is scored on what was asked, as the harness scores it: only the contrast sets
whose original and every perturbation (up to the largest k) have a prediction (in a breakdown,
every perturbation of the group: by change kind, the set's perturbations of that kind); the
report says the run is partial, with the unasked questions and the sets scored. A set half asked
is left out rather than scored on its asked part, because its consistency would then ask less of
the model than a full set's; the exported lmms-eval task applies the same rule, so a `--limit`ed
run scores back to lmms-eval's own figures. `strict=True` refuses a partial run instead. A prediction that normalises to
nothing (empty, punctuation only, a multiple-choice reply naming no option, a request the harness
gave up on) was asked and not answered: wrong, and counted apart as `empty`.

Invariance perturbations (the answer provably stays) are scored apart, the same way: a set is
invariance-consistent when its original and every invariance perturbation are answered right, and
the report gives the accuracy on both beside it. Comparing the answers with the model's own
answer to the original instead would give full marks to a model that answers "yes" to everything,
or nothing at all.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from contrastgen.answers import is_empty, is_right
from contrastgen.errors import InputError
from contrastgen.evaluation.bootstrap import bootstrap_many, bootstrap_sums
from contrastgen.evaluation.groups import group_metrics, has_groups
from contrastgen.records import ContrastSet, Perturbation, parse_contrast_sets
from contrastgen.terminal.progress import Advance, noop
from contrastgen.terminal.progress import progress as progress_bar

DEFAULT_KS: tuple[int, ...] = (1, 3, 5)
METRICS: tuple[str, ...] = ("original_accuracy", "perturbed_accuracy", "drop", "consistency")
ORACLE_NAME = "oracle"
REPORT_VERSION = 1
_BINARY = ("yes", "no")


@dataclass(frozen=True)
class SetScore:
    """One model's correctness on one contrast set; `perturbations` aligns with the set's."""

    original: bool
    original_missing: bool
    perturbations: tuple[bool, ...]
    perturbations_missing: tuple[bool, ...]

    def asked_in_full(self, cs: ContrastSet, max_k: int) -> bool:
        """Whether the original and every perturbation up to rank `max_k` have a prediction."""
        return not self.original_missing and not any(
            m for p, m in zip(cs.perturbations, self.perturbations_missing, strict=True) if p.rank <= max_k)


def score_set(cs: ContrastSet, preds: Mapping[str, str]) -> SetScore:
    """Compare normalised predictions with the gold answers of one set."""
    def judge(qid: str, gold: str) -> tuple[bool, bool]:
        if qid not in preds:
            return False, True
        return is_right(preds[qid], gold), False

    orig, orig_missing = judge(cs.question_id, cs.answer)
    perts = [judge(p.question_id, p.gold) for p in cs.perturbations]
    return SetScore(orig, orig_missing, tuple(c for c, _ in perts), tuple(m for _, m in perts))


def direction(cs: ContrastSet, p: Perturbation) -> str:
    """`yes->no` / `no->yes` for binary questions, `open` for the rest (colour, side)."""
    if cs.answer in _BINARY and p.gold in _BINARY:
        return f"{cs.answer}->{p.gold}"
    return "open"


def _statistic(sums: np.ndarray) -> dict[str, np.ndarray]:
    # columns: sets, original correct, perturbations correct, perturbations, sets all correct
    orig = sums[:, 1] / sums[:, 0]
    pert = sums[:, 2] / sums[:, 3]
    return {"original_accuracy": orig, "perturbed_accuracy": pert, "drop": orig - pert,
            "consistency": sums[:, 4] / sums[:, 0]}


GroupKey = tuple[str, int, str, str]  # model, k, breakdown, group


def cluster_index(sets: Sequence[ContrastSet]) -> dict[str, int]:
    """One bootstrap cluster per original question, in order of first appearance.

    An original matched by two templates (the paper's two "Is the X Rel the Y?" rows) heads
    two sets; they are resampled together.
    """
    index: dict[str, int] = {}
    for cs in sets:
        index.setdefault(cs.question_id, len(index))
    return index


@dataclass(frozen=True)
class FlatSets:
    """The sets as parallel arrays, so every group's counts are a few `np.bincount`s.

    Per set: its cluster and template; per perturbation: its set, rank, change kind and answer
    direction. Built once and shared by every model, k and breakdown.
    """

    set_cluster: np.ndarray
    set_template: np.ndarray
    set_type: np.ndarray  # GQA's types.detailed of the original ("unknown" without types)
    pert_set: np.ndarray
    pert_rank: np.ndarray
    pert_kind: np.ndarray
    pert_direction: np.ndarray

    @classmethod
    def build(cls, sets: Sequence[ContrastSet], clusters: Mapping[str, int]) -> FlatSets:
        perts = [(i, cs, p) for i, cs in enumerate(sets) for p in cs.perturbations]
        return cls(
            set_cluster=np.array([clusters[cs.question_id] for cs in sets], dtype=np.int64),
            set_template=np.array([cs.template for cs in sets], dtype=object),
            set_type=np.array([cs.question_type for cs in sets], dtype=object),
            pert_set=np.array([i for i, _, _ in perts], dtype=np.int64),
            pert_rank=np.array([p.rank for _, _, p in perts], dtype=np.int64),
            pert_kind=np.array([p.change_kind for _, _, p in perts], dtype=object),
            pert_direction=np.array([direction(cs, p) for _, cs, p in perts], dtype=object),
        )


def group_columns(flat: FlatSets, n_clusters: int, original_ok: np.ndarray, pert_ok: np.ndarray,
                  selected: np.ndarray, original_asked: np.ndarray | None = None,
                  pert_asked: np.ndarray | None = None) -> np.ndarray:
    """Per-cluster counts (sets, originals correct, perturbations correct, perturbations, sets
    all correct) over the sets, each restricted to its `selected` perturbations.

    A set none of whose perturbations is selected is left out, so a breakdown by change kind
    compares each original only with the perturbations of that kind. In a partial run
    (`original_asked`, `pert_asked`: which questions have a prediction) a set is left out of a
    group unless its original and all its selected perturbations were asked: the same rule the
    exported lmms-eval task applies to each metric's items.
    """
    n_sets = len(flat.set_cluster)
    if pert_asked is not None and original_asked is not None:
        unasked = np.bincount(flat.pert_set[selected], weights=~pert_asked[selected], minlength=n_sets)
        complete = original_asked & (unasked == 0)
        selected = selected & complete[flat.pert_set]
    asked = np.bincount(flat.pert_set[selected], minlength=n_sets)
    right = np.bincount(flat.pert_set[selected], weights=pert_ok[selected], minlength=n_sets)
    has = asked > 0
    all_ok = has & original_ok & (right == asked)
    per_set = np.stack([has, has & original_ok, right, asked, all_ok], axis=1).astype(np.float64)
    columns = np.zeros((n_clusters, 5), dtype=np.float64)
    np.add.at(columns, flat.set_cluster, per_set)
    return columns


def _metrics(columns: np.ndarray, estimates: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"n_sets": int(columns[:, 0].sum()),
                           "n_perturbations": int(columns[:, 3].sum())}
    out.update({name: estimates[name].to_json() for name in METRICS})
    return out


def template_forms(ids: Sequence[str]) -> dict[str, str]:
    """The question form of each template ("On which side is the X?"), as the paper's tables
    label rows; from the shipped template rules, when available."""
    try:
        from contrastgen.templates.patterns import load_templates

        known = {t.id: t.description for t in load_templates()}
    except Exception:  # noqa: BLE001 - labels are cosmetic; a report must not fail over them
        return {}
    out = {}
    for tid in ids:
        description = known.get(tid, "")
        if "?" in description:
            out[tid] = description[: description.index("?") + 1]
    return out


# Ranks and k values are small (generate's --max-k is at most 50); a bound keeps the arrays sane.
MAX_RANK = 1000


def resolve_ks(sets: Sequence[ContrastSet], ks: Sequence[int] | None = None) -> list[int]:
    """The k values to report: 1, 3, 5 up to the largest rank present, plus that rank."""
    max_rank = max(p.rank for cs in sets for p in cs.perturbations)
    if ks:
        return sorted({int(k) for k in ks if k >= 1})
    return sorted({k for k in DEFAULT_KS if k < max_rank} | {max_rank})


def _group_columns(flat: FlatSets, n_clusters: int, scores: Sequence[SetScore],
                   k: int) -> dict[tuple[str, str], np.ndarray]:
    """Columns of every group reported at k: overall, by template, by GQA question type, by change
    kind, by direction; each over the sets asked in full within the group."""
    original_ok = np.array([sc.original for sc in scores], dtype=bool)
    pert_ok = np.array([c for sc in scores for c in sc.perturbations], dtype=np.float64)
    original_asked = np.array([not sc.original_missing for sc in scores], dtype=bool)
    pert_asked = np.array([not m for sc in scores for m in sc.perturbations_missing], dtype=bool)
    in_k = flat.pert_rank <= k
    asked = {"original_asked": original_asked, "pert_asked": pert_asked}
    out = {("overall", "all"): group_columns(flat, n_clusters, original_ok, pert_ok, in_k, **asked)}
    labels = {"by_template": flat.set_template[flat.pert_set],
              "by_question_type": flat.set_type[flat.pert_set], "by_kind": flat.pert_kind,
              "by_direction": flat.pert_direction}
    for breakdown, label in labels.items():
        for value in sorted(set(label[in_k].tolist())):
            out[(breakdown, value)] = group_columns(flat, n_clusters, original_ok, pert_ok,
                                                    in_k & (label == value), **asked)
    return out


def _difference(sums: np.ndarray) -> dict[str, np.ndarray]:
    other, base = _statistic(sums[:, 5:]), _statistic(sums[:, :5])
    return {name: other[name] - base[name] for name in METRICS}


def _comparisons(groups: Mapping[GroupKey, np.ndarray], models: Sequence[str], ks: Sequence[int],
                 *, seed: int, n_boot: int, advance: Advance = noop) -> dict[str, Any]:
    """Each model minus the first, overall per k, with paired intervals.

    The same seed and clusters give the same resampling weights as the per-model intervals, so
    a difference whose interval excludes 0 is one the data support, not two overlapping bars.
    """
    if len(models) < 2:
        return {}
    base = models[0]
    pairs = {(m, k): np.concatenate([groups[(base, k, "overall", "all")],
                                     groups[(m, k, "overall", "all")]], axis=1)
             for m in models[1:] for k in ks}
    est = bootstrap_many(pairs, _difference, n_boot=n_boot, seed=seed, advance=advance)
    return {f"{m} - {base}": {str(k): {name: est[(m, k)][name].to_json() for name in METRICS}
                              for k in ks} for m in models[1:]}


def _coverage(sets: Sequence[ContrastSet], scores: Sequence[SetScore], preds: Mapping[str, str],
              max_k: int, invariance: set[str], scored: np.ndarray) -> dict[str, Any]:
    """Questions of the contrast sets, predictions, those for no scored question (`ignored`; the
    invariance perturbations are scored in their own section, so not ignored), and the questions
    without an answer: `missing` (not asked: no prediction) and `empty` (one that says nothing).
    `partial` when some were not asked; `sets_scored` of `sets` were asked in full."""
    ids = {cs.question_id for cs in sets} | {p.question_id for cs in sets for p in cs.perturbations
                                              if p.rank <= max_k}
    missing = sorted(set(
        [cs.question_id for cs, sc in zip(sets, scores, strict=True) if sc.original_missing]
        + [p.question_id for cs, sc in zip(sets, scores, strict=True)
           for p, m in zip(cs.perturbations, sc.perturbations_missing, strict=True)
           if m and p.rank <= max_k]))  # an original heading two sets is one question
    empty = sorted(q for q in ids if q in preds and is_empty(preds[q]))
    return {"questions": len(ids), "predictions": len(preds),
            "ignored": sum(1 for q in preds if q not in ids and q not in invariance),
            "missing": len(missing), "missing_examples": missing[:10],
            "empty": len(empty), "empty_examples": empty[:10],
            "partial": bool(missing), "sets": len(sets), "sets_scored": int(scored.sum())}


def _examples(sets: Sequence[ContrastSet], scores: Sequence[SetScore], preds: Mapping[str, str],
              k: int, n: int, seed: int, scored: np.ndarray) -> list[dict[str, Any]]:
    failing = [(cs, sc) for cs, sc, ok in zip(sets, scores, scored, strict=True)
               if ok and not (sc.original and all(c for p, c in zip(cs.perturbations, sc.perturbations,
                                                             strict=True) if p.rank <= k))]
    chosen = random.Random(seed).sample(failing, min(n, len(failing)))
    out = []
    for cs, sc in sorted(chosen, key=lambda pair: (pair[0].question_id, pair[0].template)):
        out.append({
            "question_id": cs.question_id, "image_id": cs.image_id, "template": cs.template,
            "question": cs.question, "answer": cs.answer,
            "prediction": preds.get(cs.question_id), "correct": sc.original,
            "perturbations": [
                {"question_id": p.question_id, "question": p.question, "answer": p.gold,
                 "rank": p.rank, "prediction": preds.get(p.question_id), "correct": c,
                 "change": p.change, "evidence": p.evidence}
                for p, c in zip(cs.perturbations, sc.perturbations, strict=True) if p.rank <= k],
        })
    return out


def _oracle_section(sets: Sequence[ContrastSet], preds: Mapping[str, str], name: str, *,
                    seed: int, n_boot: int, advance: Advance = noop) -> dict[str, Any]:
    """How often the scene-graph oracle disagrees with the dataset's gold answer on the originals.

    An oracle that abstains (no prediction) is not counted as disagreeing: the rate is over
    the originals it answered, and the abstentions are reported beside it.
    """
    originals = list({cs.question_id: cs for cs in sets}.values())  # one per original question
    answered = [cs for cs in originals if cs.question_id in preds]
    rows = [(1, int(not is_right(preds[cs.question_id], cs.answer))) for cs in answered]
    est = bootstrap_sums(np.array(rows, dtype=np.float64).reshape(-1, 2),
                         lambda s: {"rate": s[:, 1] / s[:, 0]}, n_boot=n_boot, seed=seed,
                         advance=advance)["rate"]
    perts = [p for cs in sets for p in cs.perturbations if p.question_id in preds]
    pert_ok = sum(is_right(preds[p.question_id], p.gold) for p in perts)
    return {
        "model": name,
        "originals": len(originals), "originals_answered": len(answered),
        "originals_disagreeing": sum(r[1] for r in rows),
        "disagreement_rate": est.to_json(),
        "perturbations": sum(len(cs.perturbations) for cs in sets),
        "perturbations_answered": len(perts),
        "perturbation_accuracy": (round(pert_ok / len(perts), 6) if perts else None),
    }


def evaluate_contrast(records: Sequence[Mapping[str, Any]],
                      predictions: Mapping[str, Mapping[str, str]], *, seed: int = 0,
                      n_boot: int = 1000, examples: int = 0, strict: bool = False,
                      ks: Sequence[int] | None = None, oracle: str | None = None,
                      path: str | None = None, proofs: bool = False, progress: bool = False) -> dict[str, Any]:
    """Evaluate each model's raw predictions on contrast-set records; return the JSON report.

    `predictions` maps a model name to `{question_id: raw answer}`. `oracle` names the model
    whose disagreement with GQA is reported as annotation noise (default: a model called
    "oracle", if any). `path` names the records' file in error messages. With `proofs` (a
    contrast set read from a file) each perturbation's evidence must be shaped as verify reads it:
    a record whose proof is null is not a contrast set, and its answers are not scored.
    `progress`: a bar on a terminal, per model scored and per bootstrap resample.
    """
    if not predictions:
        raise InputError("no predictions given")
    parsed = parse_contrast_sets(records, path=path, proofs=proofs)
    sets = [c for cs in parsed if (c := cs.contrasts()).perturbations]
    if not sets:
        raise InputError("no contrast perturbations (only invariance ones)", path=path)
    k_values = resolve_ks(sets, ks)
    oracle = _oracle_name(predictions, oracle)
    report = _new_report(sets, predictions, seed=seed, n_boot=n_boot, ks=k_values, strict=strict)
    # the bootstraps: every group's, the comparisons' (two models or more), the oracle's
    resamples = n_boot * (1 + (len(predictions) > 1) + (oracle is not None))
    with progress_bar("evaluating contrast sets", len(predictions) + resamples, enabled=progress) as advance:
        groups = _score_models(report, sets, parsed, predictions, k_values, examples=examples, seed=seed,
                               strict=strict, path=path, advance=advance)
        estimates = bootstrap_many(groups, _statistic, n_boot=n_boot, seed=seed, advance=advance)
        _fill_results(report, groups, estimates)
        report["comparisons"] = _comparisons(groups, list(predictions), k_values, seed=seed, n_boot=n_boot,
                                             advance=advance)
        if oracle is not None:
            report["oracle"] = _oracle_section(sets, predictions[oracle], oracle, seed=seed, n_boot=n_boot,
                                               advance=advance)
    _invariance_and_groups(report, parsed, predictions, strict=strict, path=path)
    return report


def _oracle_name(predictions: Mapping[str, Any], oracle: str | None) -> str | None:
    """The model reported as the oracle: the one named, else one called "oracle", if any."""
    if oracle is None and ORACLE_NAME in predictions:
        return ORACLE_NAME
    if oracle is not None and oracle not in predictions:
        raise InputError(f"the oracle {oracle!r} is not among the models {sorted(predictions)}")
    return oracle


def _new_report(sets: Sequence[ContrastSet], predictions: Mapping[str, Any], *, seed: int, n_boot: int,
                ks: list[int], strict: bool) -> dict[str, Any]:
    templates = sorted({cs.template for cs in sets})
    return {
        "kind": "contrast", "version": REPORT_VERSION,
        "settings": {"seed": seed, "n_boot": n_boot, "confidence": 0.95, "ks": ks, "strict": strict},
        "models": list(predictions),
        "templates": templates,
        "template_forms": template_forms(templates),
        "coverage": {}, "results": {}, "examples": {},
    }


def _score_models(report: dict[str, Any], sets: Sequence[ContrastSet], parsed: Sequence[ContrastSet],
                  predictions: Mapping[str, Mapping[str, str]], ks: list[int], *, examples: int, seed: int,
                  strict: bool, path: str | None, advance: Advance) -> dict[GroupKey, np.ndarray]:
    """Score every model on the sets: its coverage and examples into `report`; the columns of each
    of its groups (per k and breakdown), for the bootstrap."""
    max_k = max(ks)
    clusters = cluster_index(sets)
    flat = FlatSets.build(sets, clusters)
    invariance_ids = {q for cs in parsed if any(p.invariance for p in cs.perturbations)
                      for q in (cs.question_id, *(p.question_id for p in cs.perturbations if p.invariance))}
    groups: dict[GroupKey, np.ndarray] = {}
    for name, preds in predictions.items():
        scores = [score_set(cs, preds) for cs in sets]
        scored = np.array([sc.asked_in_full(cs, max_k) for cs, sc in zip(sets, scores, strict=True)], dtype=bool)
        coverage = _coverage(sets, scores, preds, max_k, invariance_ids, scored)
        _check_coverage(name, coverage, scored, strict=strict, path=path)
        report["coverage"][name] = coverage
        for k in ks:
            for (breakdown, group), columns in _group_columns(flat, len(clusters), scores, k).items():
                groups[(name, k, breakdown, group)] = columns
        if examples > 0:
            report["examples"][name] = _examples(sets, scores, preds, max_k, examples, seed, scored)
        advance(1)
    return groups


def _check_coverage(name: str, coverage: Mapping[str, Any], scored: np.ndarray, *, strict: bool,
                    path: str | None) -> None:
    """Refuse a model with unasked questions under `strict`, and one asked no set in full."""
    if strict and coverage["missing"]:
        raise InputError(
            f"model {name!r} has no prediction for {coverage['missing']} questions of the "
            f"contrast set (--strict)", path=path, record=f"question {coverage['missing_examples'][0]}")
    if not scored.any():
        raise InputError(
            f"model {name!r} was asked no contrast set in full ({coverage['missing']} of "
            f"{coverage['questions']} questions have no prediction): are these predictions for "
            "this contrast set?", path=path, record=f"question {coverage['missing_examples'][0]}")


def _fill_results(report: dict[str, Any], groups: Mapping[GroupKey, np.ndarray],
                  estimates: Mapping[Any, Mapping[str, Any]]) -> None:
    """`report["results"][model][k]`: the overall metrics and those of every breakdown's groups."""
    for (name, k, breakdown, group), columns in groups.items():
        res = report["results"].setdefault(name, {}).setdefault(
            str(k), {"overall": None, "by_template": {}, "by_question_type": {}, "by_kind": {},
                     "by_direction": {}})
        metrics = _metrics(columns, estimates[(name, k, breakdown, group)])
        if breakdown == "overall":
            res["overall"] = metrics
        else:
            res[breakdown][group] = metrics


def _invariance_and_groups(report: dict[str, Any], parsed: Sequence[ContrastSet],
                           predictions: Mapping[str, Mapping[str, str]], *, strict: bool,
                           path: str | None) -> None:
    """The invariance sets' consistency and, with `generate --groups`, NaturalBench's metrics over
    the two-image groups, per model."""
    if any(p.invariance for cs in parsed for p in cs.perturbations):
        report["invariance"] = {name: invariance_consistency(parsed, preds)
                                for name, preds in predictions.items()}
        for name, inv in report["invariance"].items():
            if strict and inv["missing"]:
                raise InputError(f"model {name!r} has no prediction for {inv['missing']} questions of the "
                                 "invariance sets (--strict)", path=path,
                                 record=f"question {inv['missing_examples'][0]}")
    if has_groups(parsed):
        report["groups"] = {name: group_metrics(parsed, preds) for name, preds in predictions.items()}


def invariance_consistency(sets: Sequence[ContrastSet], preds: Mapping[str, str]) -> dict[str, Any]:
    """Over the sets with invariance perturbations: the share whose original and every invariance
    perturbation are answered right (`consistency`), beside the accuracy on those originals and on
    those perturbations; overall and per GQA question type.

    Right means the gold answer (an invariance perturbation's is its original's), as the contrast
    metrics score: an empty answer is wrong, and counted (`empty`, over the distinct questions).
    A set whose original or an invariance perturbation was not asked (a partial run) is left out,
    as the contrast metrics leave it out, and its questions are counted `missing`. Agreeing with oneself is not enough: a model that answers "yes" to
    everything, or nothing, would keep every answer.
    """
    counts: dict[str, list[int]] = {}
    overall = [0, 0, 0, 0, 0]  # sets, originals right, sets all right, perturbations, right
    asked: dict[str, str] = {}  # question id -> gold, each question once
    for cs in sets:
        inv = [p for p in cs.perturbations if p.invariance]
        if not inv:
            continue
        asked[cs.question_id] = cs.answer
        asked.update((p.question_id, p.gold) for p in inv)
        if cs.question_id not in preds or any(p.question_id not in preds for p in inv):
            continue
        original = cs.question_id in preds and is_right(preds[cs.question_id], cs.answer)
        right = [p.question_id in preds and is_right(preds[p.question_id], p.gold) for p in inv]
        for c in (overall, counts.setdefault(cs.question_type, [0, 0, 0, 0, 0])):
            c[0] += 1
            c[1] += original
            c[2] += original and all(right)
            c[3] += len(inv)
            c[4] += sum(right)

    def shares(c: list[int]) -> dict[str, Any]:
        return {"consistency": _share(c[2], c[0]), "original_accuracy": _share(c[1], c[0]),
                "perturbed_accuracy": _share(c[4], c[3]), "n_sets": c[0], "n_perturbations": c[3]}

    missing = sorted(q for q in asked if q not in preds)
    empty = sorted(q for q in asked if q in preds and is_empty(preds[q]))
    return {"overall": shares(overall),
            "by_question_type": {t: shares(c) for t, c in sorted(counts.items())},
            "questions": len(asked), "missing": len(missing), "missing_examples": missing[:10],
            "empty": len(empty), "empty_examples": empty[:10]}


def _share(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None
