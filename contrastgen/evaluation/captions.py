"""`contrastgen evaluate --captions`: an image-text model's similarity scores on a caption set,
per kind, beside the two blind baselines.

The model's file gives a score per (image, caption): one row for the positive and one for each
negative, keyed by the ids in `captions.jsonl`. A pair is right when the positive scores strictly
higher than the negative (SugarCrepe's rule: a tie is wrong, so a model that scores everything
the same is at 0%, not 50%). Missing scores count as wrong and are counted (`--strict` makes them
an error): a run that skipped pairs must not look better for it.

Why the blind baselines sit beside the model: a caption set tests the image only where a model
that never sees it is near chance, so each kind's accuracy is shown with the TF-IDF classifier's
and the corpus plausibility scorer's (`caption_baselines`) on the same pairs. The intervals are a
percentile bootstrap over images (a record's pairs share an image), the same resamples for the
model and both baselines, so the three are compared on paired intervals.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from contrastgen.errors import InputError, duplicate_id
from contrastgen.evaluation.bootstrap import bootstrap_many
from contrastgen.evaluation.caption_baselines import (
    Pair,
    by_kind,
    classifier_picks,
    pairs_of,
    plausibility_picks,
)
from contrastgen.files.csv_reading import csv_rows
from contrastgen.jsonio import read_jsonl
from contrastgen.terminal.progress import Advance, noop

SCORE_FIELDS = ("image_id", "caption_id", "score")
MODELS = ("model", "classifier", "plausibility")


def _rows(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(line, row) of a similarity file: JSON lines, or CSV / TSV with a header."""
    if path.suffix == ".jsonl":
        yield from enumerate(read_jsonl(path), 1)
        return
    delimiter = "\t" if path.suffix in (".tsv", ".tab") else ","
    with csv_rows(path, delimiter=delimiter) as reader:
        missing = [f for f in SCORE_FIELDS if f not in (reader.fieldnames or ())]
        if missing:
            raise InputError(f"the header lacks {', '.join(missing)} (needs {', '.join(SCORE_FIELDS)})",
                             path=str(path))
        yield from enumerate(reader, 2)


def read_similarities(path: str | os.PathLike[str]) -> dict[str, float]:
    """caption id -> score, from a file of (image_id, caption_id, score) rows; a caption scored
    twice, or a score that is not a finite number, is an error naming the line."""
    p = Path(path)
    if not p.is_file():
        raise InputError("similarity file not found", path=str(p))
    scores: dict[str, float] = {}
    first: dict[str, int] = {}
    for line, row in _rows(p):
        where = f"line {line}"
        if not isinstance(row, Mapping) or any(row.get(f) in (None, "") for f in SCORE_FIELDS):
            raise InputError(f"a row needs {', '.join(SCORE_FIELDS)}", path=str(p), record=where)
        key = str(row["caption_id"])
        try:
            score = float(row["score"])
        except (TypeError, ValueError):
            score = math.nan
        if isinstance(row["score"], bool) or not math.isfinite(score):
            raise InputError(f"score {row['score']!r} is not a finite number", path=str(p), record=where)
        if key in scores:
            raise InputError(duplicate_id("caption", key, f"line {first[key]}", where), path=str(p), record=where)
        scores[key], first[key] = score, line
    if not scores:
        raise InputError("no scores in the similarity file", path=str(p))
    return scores


def model_picks(pairs: list[Pair], scores: Mapping[str, float], *, strict: bool = False,
                path: str | None = None) -> tuple[np.ndarray, int]:
    """(1 where the positive scores strictly higher, the number of pairs missing a score)."""
    out = np.zeros(len(pairs))
    missing = 0
    for i, p in enumerate(pairs):
        a, b = scores.get(p.positive_id), scores.get(p.negative_id)
        if a is None or b is None:
            if strict:
                absent = p.positive_id if a is None else p.negative_id
                raise InputError(f"no score for caption {absent!r} (--strict)", path=path)
            missing += 1
            continue
        out[i] = 1.0 if a > b else 0.0
    return out, missing


def _accuracy(sums: np.ndarray) -> dict[str, np.ndarray]:
    return {"accuracy": sums[:, 0] / sums[:, 1]}


def evaluate_captions(records: Iterable[Mapping[str, Any]], scores: Mapping[str, float], *,
                      n_boot: int = 1000, seed: int = 0, strict: bool = False,
                      path: str | None = None, advance: Advance = noop) -> dict[str, Any]:
    """Per kind, the model's accuracy and the two blind baselines', each with its interval
    (`advance(b)` per b bootstrap resamples done)."""
    pairs = pairs_of(records)
    if not pairs:
        raise InputError("the caption set has no pairs", path=path)
    picks, missing = model_picks(pairs, scores, strict=strict, path=path)
    known = set(scores)
    unused = len(known - {i for p in pairs for i in (p.positive_id, p.negative_id)})
    images = {img: n for n, img in enumerate(dict.fromkeys(p.image_id for p in pairs))}
    cluster = np.array([images[p.image_id] for p in pairs])
    kinds = by_kind(pairs)
    blind = {"plausibility": plausibility_picks(pairs)}
    classifier = np.full(len(pairs), np.nan)
    for idx in kinds.values():
        found = classifier_picks([pairs[i] for i in idx], seed=seed)
        if found is not None:
            classifier[idx] = found
    blind["classifier"] = classifier
    columns = {"model": picks, **blind}
    groups: dict[tuple[str, str], np.ndarray] = {}
    for kind, idx in [("all", list(range(len(pairs)))), *kinds.items()]:
        for name in MODELS:
            values = columns[name][idx]
            if np.isnan(values).any():
                continue
            m = np.zeros((len(images), 2))
            np.add.at(m, (cluster[idx], 0), values)
            np.add.at(m, (cluster[idx], 1), 1.0)
            groups[kind, name] = m
    estimates = bootstrap_many(groups, _accuracy, n_boot=n_boot, seed=seed, advance=advance)
    out_kinds = {}
    for kind, idx in [("all", list(range(len(pairs)))), *kinds.items()]:
        out_kinds[kind] = {"pairs": len(idx),
                           **{name: estimates[kind, name]["accuracy"].to_json() if (kind, name) in estimates else None
                              for name in MODELS}}
    return {"pairs": len(pairs), "images": len(images), "missing_scores": missing,
            "unused_scores": unused, "rule": "positive scores strictly higher (a tie is wrong)",
            "kinds": out_kinds}


def render_caption_table(report: Mapping[str, Any]) -> str:
    """The report as a plain table: accuracy [95% CI] per kind for the model and the baselines."""

    def cell(e: Mapping[str, Any] | None) -> str:
        if e is None or e["value"] is None:
            return "-"
        low, high = e["ci"]
        ci = f" [{100 * low:.1f}, {100 * high:.1f}]" if low is not None else ""
        return f"{100 * e['value']:.1f}{ci}"

    lines = [f"{'kind':<14} {'pairs':>6}  {'model':<20} {'text classifier':<20} {'plausibility':<20}"]
    for kind, row in report["kinds"].items():
        lines.append(f"{kind:<14} {row['pairs']:>6}  {cell(row['model']):<20} {cell(row['classifier']):<20} "
                     f"{cell(row['plausibility']):<20}")
    lines.append(f"accuracy in % with 95% bootstrap intervals over images; {report['rule']}; "
                 f"{report['missing_scores']} pairs without a score (counted wrong), "
                 f"{report['unused_scores']} scores for captions not in the set")
    return "\n".join(lines)
