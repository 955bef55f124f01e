"""Scoring models on what `contrastgen ood superclevr` builds, with the paper's metrics: accuracy,
and the Relative Degrade of each domain-shift factor (`relative_degrade`, the one definition).

Two layouts:
- variants (`--variant`): the paper's setting. A model is trained on one variant and tested on
  each variant's test part; its predictions are named `MODEL@VARIANT` (`-p nscl@long=preds.json`:
  NSCL trained on long). One file may answer several test parts (question ids are
  `<variant>/<id>`); a test part it answers none of is not tested (no accuracy), one it answers
  part of counts the rest as wrong and says how many. RD per factor needs, per training variant,
  the accuracies its definition uses (e.g. a model trained on long, tested on bal, long, head,
  tail and oppo); training variants without them are named, never guessed.
- splits (no `--variant`): one model scored on splits of one test set. It is a one-training-
  variant case of the same definition, the model's training data assumed like the in-domain split:
  redundancy from `rd` to `rd-` and `rd+`; concept distribution from `head` to `tail` over the
  accuracy on every concept question (`head`, `tail` and `none`: the paper divides by its balanced
  variant); compositionality from `co_train` to `co_test`.
An answer is right when it equals the gold answer as CLEVR writes answers (yes/no, digits,
words), compared case- and space-insensitively.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from contrastgen.errors import InputError
from contrastgen.jsonio import read_json
from contrastgen.ood.relative_degrade import Factor, paper_factors, relative_degrade
from contrastgen.terminal.progress import Advance, noop

SPLITS = ("head", "tail", "none", "co_train", "co_test", "rd-", "rd", "rd+")
CONCEPT_QUESTIONS = "concept"  # the pooled head, tail and none splits
SPLIT_FACTORS = {
    "redundancy": Factor("redundancy", ("rd",), (("rd", "rd-"), ("rd", "rd+"))),
    "concept": Factor("concept", ("head",), (("head", "tail"),), CONCEPT_QUESTIONS),
    "compositionality": Factor("compositionality", ("co_train",), (("co_train", "co_test"),)),
}
TRAINED_ON = "@"  # MODEL@VARIANT: the model, and the variant it was trained on
UNKNOWN = "unknown"  # the training variant of a model named without one
CI = Callable[[np.ndarray, np.random.Generator], Any]


def answer_words(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return " ".join(str(value).lower().split())


def question_id(q: Mapping[str, Any], i: int) -> str:
    return str(q.get("question_index", i))


def _gold(path: Path) -> dict[str, str]:
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
    return gold


def read_splits(ood_dir: Path) -> dict[str, dict[str, str]]:
    """split -> {question id: gold answer}, for the splits the directory holds."""
    out = {name: _gold(ood_dir / f"{name}.json") for name in SPLITS if (ood_dir / f"{name}.json").is_file()}
    if not out:
        raise InputError("no Super-CLEVR split here", path=str(ood_dir))
    return out


def read_variant_tests(ood_dir: Path, variants: Sequence[str]) -> dict[str, dict[str, str]]:
    """variant -> {question id: gold answer} of each variant's test part."""
    out = {}
    for v in variants:
        path = ood_dir / "variants" / v / "test.json"
        if not path.is_file():
            raise InputError(f"variant {v} has no test part", path=str(path))
        out[v] = _gold(path)
    return out


def _correct(gold: Mapping[str, str], preds: Mapping[str, Any]) -> np.ndarray:
    return np.array([q in preds and answer_words(preds[q]) == a for q, a in gold.items()], dtype=float)


def _check_coverage(known: set[str], predictions: Mapping[str, Mapping[str, Any]], ood_dir: Path) -> None:
    for name, preds in predictions.items():
        if not isinstance(preds, Mapping) or not known.intersection(preds):
            raise InputError("predictions cover none of the questions of this OOD directory",
                             path=str(ood_dir), record=f"model {name}")


def evaluate_superclevr(ood_dir: Path, predictions: Mapping[str, Mapping[str, Any]], *, seed: int = 0,
                        ci: CI | None = None, advance: Advance = noop) -> dict[str, Any]:
    """Accuracy (with a bootstrap interval when `ci` is given) and Relative Degrade per factor, per
    model, on either layout (stats.json says which); `advance(1)` as each model is scored."""
    stats = read_json(ood_dir / "stats.json")
    if isinstance(stats, Mapping) and stats.get("layout") == "variants":
        return evaluate_variants(ood_dir, stats, predictions, seed=seed, ci=ci, advance=advance)
    return evaluate_splits(ood_dir, predictions, seed=seed, ci=ci, advance=advance)


def evaluate_splits(ood_dir: Path, predictions: Mapping[str, Mapping[str, Any]], *, seed: int = 0,
                    ci: CI | None = None, advance: Advance = noop) -> dict[str, Any]:
    splits = read_splits(ood_dir)
    known = sorted({q for gold in splits.values() for q in gold})
    _check_coverage(set(known), predictions, ood_dir)
    rng = np.random.default_rng(seed)
    models: dict[str, Any] = {}
    for name in sorted(predictions):
        preds = predictions[name]
        correct = {s: _correct(gold, preds) for s, gold in splits.items()}
        accuracy: dict[str, float | None] = {s: float(c.mean()) if c.size else None for s, c in correct.items()}
        pooled = np.concatenate([correct[s] for s in ("head", "tail", "none") if s in correct] or [np.zeros(0)])
        tested = {**accuracy, CONCEPT_QUESTIONS: float(pooled.mean()) if pooled.size else None}
        rd = {}
        for factor in SPLIT_FACTORS.values():
            (in_domain,) = factor.variants
            if all(s in splits for pair in factor.shifts for s in pair):
                rd[factor.name] = relative_degrade(factor, {in_domain: tested}).to_json()
        models[name] = {
            "answered": sum(1 for q in known if q in preds), "missing": sum(1 for q in known if q not in preds),
            "accuracy": accuracy, "relative_degrade": rd,
            "ci95": {s: ci(c, rng) for s, c in correct.items()} if ci is not None else {},
        }
        advance(1)
    return {"benchmark": "super-clevr", "layout": "splits", "sizes": {s: len(g) for s, g in splits.items()},
            "models": models}


def model_and_variant(name: str) -> tuple[str, str]:
    """`nscl@long` -> ("nscl", "long"); a name without `@` -> (name, "unknown")."""
    model, sep, variant = name.rpartition(TRAINED_ON)
    return (model, variant) if sep and model and variant else (name, UNKNOWN)


def evaluate_variants(ood_dir: Path, stats: Mapping[str, Any], predictions: Mapping[str, Mapping[str, Any]], *,
                      seed: int = 0, ci: CI | None = None, advance: Advance = noop) -> dict[str, Any]:
    from contrastgen.ood.superclevr_variants import VARIANTS

    built = stats.get("variants", {})
    variants = [v for v in VARIANTS if v in built]
    tests = read_variant_tests(ood_dir, variants)
    _check_coverage({q for gold in tests.values() for q in gold}, predictions, ood_dir)
    known_variants = set(variants) | {v for f in paper_factors().values() for v in f.variants}
    rng = np.random.default_rng(seed)
    models: dict[str, Any] = {}
    for name in sorted(predictions):
        model, trained_on = model_and_variant(name)
        if trained_on != UNKNOWN and trained_on not in known_variants:
            raise InputError(f"{name!r} says the model was trained on {trained_on!r}, which is no Super-CLEVR variant "
                             f"(the variants: {', '.join(sorted(known_variants))})", record=f"model {name}")
        entry = models.setdefault(model, {"accuracy": {}, "answered": {}, "missing": {}, "ci95": {}})
        if trained_on in entry["accuracy"]:
            raise InputError(f"two prediction files for {model} trained on {trained_on}", record=f"model {name}")
        preds = predictions[name]
        accuracy, answered, missing, intervals = {}, {}, {}, {}
        for v, gold in tests.items():
            hits = sum(1 for q in gold if q in preds)
            if not hits:
                continue  # not tested on this variant
            c = _correct(gold, preds)
            accuracy[v], answered[v], missing[v] = float(c.mean()), hits, len(gold) - hits
            if ci is not None:
                intervals[v] = ci(c, rng)
        entry["accuracy"][trained_on], entry["answered"][trained_on] = accuracy, answered
        entry["missing"][trained_on], entry["ci95"][trained_on] = missing, intervals
        advance(1)
    order = {v: i for i, v in enumerate([*VARIANTS, UNKNOWN])}
    for entry in models.values():
        for key in ("accuracy", "answered", "missing", "ci95"):
            entry[key] = dict(sorted(entry[key].items(), key=lambda kv: order[kv[0]]))
        entry["relative_degrade"] = {f.name: relative_degrade(f, entry["accuracy"]).to_json()
                                     for f in paper_factors().values()
                                     if any(v in entry["accuracy"] for v in f.variants)}
    return {"benchmark": "super-clevr", "layout": "variants", "sizes": {v: len(g) for v, g in tests.items()},
            "models": models}


def superclevr_table(report: Mapping[str, Any]):
    """Rich tables: per model, accuracy per split (or, for variants, per training and test
    variant) and Relative Degrade per factor."""
    from rich.console import Group
    from rich.table import Table

    sizes: Sequence[str] = list(report["sizes"])
    if report.get("layout") != "variants":
        t = Table(title="Super-CLEVR splits: accuracy (%), and Relative Degrade (%) per factor")
        t.add_column("model")
        for s in sizes:
            t.add_column(f"{s} ({report['sizes'][s]})", justify="right")
        factors = [f for f in SPLIT_FACTORS if any(f in m["relative_degrade"] for m in report["models"].values())]
        for f in factors:
            t.add_column(f"RD {f}", justify="right")
        for name, m in report["models"].items():
            cells = [_pct(m["accuracy"].get(s)) for s in sizes]
            cells += [_pct(m["relative_degrade"].get(f, {}).get("value")) for f in factors]
            t.add_row(name, *cells)
        return t
    parts: list[Any] = []
    for name, m in report["models"].items():
        trained = list(m["accuracy"])
        t = Table(title=f"{name}: accuracy (%)")
        t.add_column("tested on \\ trained on")
        for v in trained:
            t.add_column(v, justify="right")
        for s in sizes:
            t.add_row(f"{s} ({report['sizes'][s]})", *[_pct(m["accuracy"][v].get(s)) for v in trained])
        parts.append(t)
    rd = Table(title="Relative Degrade (%), the paper's Table 2", caption="-: no training variant with every test")
    rd.add_column("model")
    factors = list(paper_factors())
    for f in factors:
        rd.add_column(f, justify="right")
    for name, m in report["models"].items():
        rd.add_row(name, *[_pct(m["relative_degrade"].get(f, {}).get("value")) for f in factors])
    parts.append(rd)
    return Group(*parts)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"
