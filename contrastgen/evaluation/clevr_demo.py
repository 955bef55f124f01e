"""The CLEVR half of `make demo`: a prior and a program oracle on the CLEVR contrast set.

The same point as the GQA demo, on synthetic scenes: a prior that answers from the question's
family and first words alone (a shortcut) loses accuracy on the perturbations, and executing
each question's program on its scene (what a model that truly reasons would do) does not.
The prior answers within the question's answer type: it is fitted per question family
(`template_filename` and `question_family_index`, which fix what the answer is: a count, yes/no,
a colour...), backing off to the family's answer type, then to the first words and the most
common answer. Keyed by the template file alone, one file's count and yes/no families would
share one answer, and the prior would answer "yes" to "How many ...?".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import RenderableType

from contrastgen.clevr.executor import Execution, execute
from contrastgen.clevr.scene_view import clevr_scene
from contrastgen.datasets.clevr_templates import load_families
from contrastgen.datasets.clevr_vocab import load_vocabulary
from contrastgen.evaluation.baselines import prior_predictions, to_submission
from contrastgen.evaluation.contrast import evaluate_contrast
from contrastgen.evaluation.report import render_report, write_report
from contrastgen.evaluation.run_baselines import is_perturbation
from contrastgen.jsonio import read_json, write_json
from contrastgen.records import contrast_file, load_contrast_records


def _family(qid: str, q: Mapping[str, Any]) -> str | None:
    family = load_families().get((str(q.get("template_filename")), _index(q)))
    return family.key if family is not None else None


def _index(q: Mapping[str, Any]) -> int:
    try:
        return int(q.get("question_family_index", -1))
    except (TypeError, ValueError):
        return -1


def with_answer_types(questions: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The questions, each typed (`types.detailed`, the prior's second back-off) by its family's
    answer type."""
    families = load_families()
    out = {}
    for qid, q in questions.items():
        family = families.get((str(q.get("template_filename")), _index(q)))
        out[qid] = {**q, "types": {"detailed": family.answer_type}} if family is not None else dict(q)
    return out


def program_oracle(questions: Mapping[str, Mapping[str, Any]],
                   scenes: Mapping[str, dict[str, Any]]) -> dict[str, str]:
    """Each question's answer from executing its own program on its scene (abstains without one)."""
    vocab = load_vocabulary()
    views = {}
    out: dict[str, str] = {}
    for qid in sorted(questions):
        q = questions[qid]
        image = str(q.get("imageId"))
        if not isinstance(q.get("program"), list) or image not in scenes:
            continue
        scene = views.get(image) or views.setdefault(image, clevr_scene(image, scenes[image]))
        result = execute(q["program"], scene)
        if isinstance(result, Execution):
            out[qid] = vocab.answer_words(result.answer)
    return out


def clevr_demo_loop(contrast_dir: str | os.PathLike[str], scenes: Mapping[str, dict[str, Any]],
                    out_dir: str | os.PathLike[str], *, seed: int = 0, n_boot: int = 1000) -> RenderableType:
    """Prior and oracle predictions for contrast_dir/augmented.json, evaluated under out_dir."""
    contrast_dir, out = Path(contrast_dir), Path(out_dir)
    augmented = read_json(contrast_dir / "augmented.json")
    originals = {q: v for q, v in augmented.items() if not is_perturbation(q, v)}
    prior, _ = prior_predictions(with_answer_types(originals), with_answer_types(augmented), _family)
    oracle = program_oracle(augmented, scenes)
    write_json(out / "predictions" / "prior.json", to_submission(prior))
    write_json(out / "predictions" / "oracle.json", to_submission(oracle))
    report = evaluate_contrast(load_contrast_records(contrast_dir), {"prior": prior, "oracle": oracle},
                               seed=seed, n_boot=n_boot, examples=3, path=str(contrast_file(contrast_dir)))
    write_report(report, out / "report")
    return render_report(report)
