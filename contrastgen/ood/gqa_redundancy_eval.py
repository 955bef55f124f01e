"""Scoring models on a GQA redundancy ladder (`contrastgen ood gqa-redundancy`): accuracy per level
and its drop from level 0, as the Super-CLEVR paper's Table 3 reports it.

Why the drop is taken on the same questions: a level n holds only the questions with at least n
redundant operations, which are not a random draw of level 0 (they are longer, and ask more of
attributes), so level n's accuracy against all of level 0's would mix the question mix into the
drop. Here the drop at level n is level 0's accuracy on the questions that reach level n minus
level n's accuracy on them, with a paired 95% bootstrap interval of the per-question difference.
The paper's last column (every redundant operation removed) is `deepest`: every question at its
deepest level (a question with none stays at level 0) against level 0, over all questions.

A question without a prediction counts as wrong and is reported as missing, as in the rest of
`evaluate --ood`; answers compare after GQA's answer normalisation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from contrastgen.answers import normalize_answer
from contrastgen.datasets.ladder_files import LADDER, read_levels
from contrastgen.errors import InputError
from contrastgen.terminal.progress import Advance, noop

Interval = Callable[[np.ndarray, np.random.Generator], "list[float] | None"]


def read_ladder(ood_dir: Path) -> list[dict[str, tuple[str, str]]]:
    """Per level: {original id: (this level's question id, gold answer)}."""
    levels: list[dict[str, tuple[str, str]]] = []
    for n, records in enumerate(read_levels(ood_dir)):
        level: dict[str, tuple[str, str]] = {}
        for qid, record in records.items():
            original = str(record[LADDER].get("original_id", ""))
            if not isinstance(record.get("answer"), str):
                raise InputError("record has no answer", path=str(ood_dir / f"level_{n}.json"), record=f"question {qid}")
            if n and original not in levels[n - 1]:
                raise InputError(f"its original {original!r} is not at level {n - 1}",
                                 path=str(ood_dir / f"level_{n}.json"), record=f"question {qid}")
            level[original] = (str(qid), record["answer"])
        levels.append(level)
    return levels


def evaluate_ladder(ood_dir: Path, predictions: Mapping[str, Mapping[str, Any]], *, seed: int = 0,
                    ci: Interval, advance: Advance = noop) -> dict[str, Any]:
    """Per model: accuracy per level, the drop from level 0 on the questions reaching each level,
    and the drop with every question at its deepest level; each with a 95% interval (`ci`).
    `advance(1)` as each model is scored."""
    levels = read_ladder(ood_dir)
    known = {qid for level in levels for qid, _ in level.values()}
    for name, preds in predictions.items():
        if not isinstance(preds, Mapping) or not known.intersection(preds):
            raise InputError("predictions cover none of the questions of this ladder", path=str(ood_dir),
                             record=f"model {name}")
    originals = list(levels[0])
    deepest = {o: max(n for n, level in enumerate(levels) if o in level) for o in originals}
    rng = np.random.default_rng(seed)
    models: dict[str, Any] = {}
    for name in sorted(predictions):
        preds = predictions[name]

        def right(level: int, original: str, preds: Mapping[str, Any] = preds) -> float:
            qid, gold = levels[level][original]
            return float(qid in preds and normalize_answer(preds[qid]) == normalize_answer(gold))

        per_level = []
        for n, level in enumerate(levels):
            here = np.array([right(n, o) for o in level])
            base = np.array([right(0, o) for o in level])
            per_level.append({
                "level": n, "questions": len(level), "accuracy": float(here.mean()) if here.size else None,
                "accuracy_ci95": ci(here, rng),
                "level_0_accuracy_same_questions": float(base.mean()) if base.size else None,
                "drop": float((base - here).mean()) if here.size else None,
                "drop_ci95": ci(base - here, rng) if n else None,
            })
        top = np.array([right(deepest[o], o) for o in originals])
        base_all = np.array([right(0, o) for o in originals])
        models[name] = {
            "answered": sum(1 for q in known if q in preds), "missing": sum(1 for q in known if q not in preds),
            "levels": per_level,
            "deepest": {"questions": len(originals), "accuracy": float(top.mean()) if top.size else None,
                        "drop": float((base_all - top).mean()) if top.size else None,
                        "drop_ci95": ci(base_all - top, rng)},
        }
        advance(1)
    return {"benchmark": "gqa-redundancy", "sizes": {str(n): len(level) for n, level in enumerate(levels)},
            "drop_is_on": "the questions that reach each level (their level-0 accuracy minus this level's)",
            "models": models}


def ladder_table(report: Mapping[str, Any]):
    """A rich table: per model and level, accuracy and its drop from level 0 on the same questions."""
    from rich.table import Table

    t = Table(title="GQA redundancy ladder: accuracy per level (%), and its drop from level 0 on the "
                    "questions that reach that level; 95% CI")
    for col in ("model", "level", "questions", "accuracy", "level 0, same questions", "drop"):
        t.add_column(col, justify="left" if col == "model" else "right")
    for name, m in report["models"].items():
        for row in m["levels"]:
            t.add_row(name, str(row["level"]), str(row["questions"]), _pct(row["accuracy"]) + _ci(row["accuracy_ci95"]),
                      _pct(row["level_0_accuracy_same_questions"]),
                      _pct(row["drop"]) + _ci(row["drop_ci95"]) if row["level"] else "-")
        d = m["deepest"]
        t.add_row(name, "deepest", str(d["questions"]), _pct(d["accuracy"]), _pct(m["levels"][0]["accuracy"]),
                  _pct(d["drop"]) + _ci(d["drop_ci95"]))
    return t


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def _ci(ci: list[float] | None) -> str:
    return "" if not ci else f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
