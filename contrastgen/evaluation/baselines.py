"""Reference models whose predictions are evaluated like any model's: constant, prior and oracle.

- A constant model gives one answer to every question ("yes"): it reads neither the image nor
  the question. Every metric must rank it low; a metric it wins measures nothing (invariance
  consistency once did, when it compared answers with the model's own answer to the original).

- The prior answers every question with the most frequent training answer for its template:
  the language shortcut a contrast set is built to defeat. On originals it can look decent;
  on perturbations, whose answers were flipped on purpose, it should collapse. A model that
  degrades as much as the prior has learnt little beyond it.
- The oracle answers from the scene graph with the very logic that proves perturbation
  answers (`contrastgen.evaluation.oracle.oracle_answer`). It must score 100% on perturbations (a check
  of the generator and the evidence); on originals, its disagreement with GQA's answer
  measures annotation noise, the part of a model's drop that is not the model's fault.

Questions the prior has no template for back off to GQA's `types.detailed`, then to the
question's first words, then to the most frequent answer overall, always the most specific
key seen in training. Ties between answers go to the alphabetically first, for determinism.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contrastgen.answers import normalize_answer
from contrastgen.terminal.progress import Advance, noop

if TYPE_CHECKING:
    from contrastgen.engine import Engine

# How many leading words stand for a question's type when it has no template nor GQA type
# ("is there a", "what color is", "on which side"): enough to separate yes/no from colour
# and side questions, few enough to be shared by many training questions.
FIRST_WORDS = 3

TemplateOf = Callable[[str, Mapping[str, Any]], "str | None"]


def first_words(question: Mapping[str, Any], n: int = FIRST_WORDS) -> str:
    words = normalize_answer(question.get("question", "")).split()
    return " ".join(words[:n])


def prior_keys(question: Mapping[str, Any], template: str | None) -> list[str]:
    """The back-off keys of a question, most specific first."""
    keys = []
    if template:
        keys.append(f"template:{template}")
    detailed = (question.get("types") or {}).get("detailed")
    if detailed:
        keys.append(f"detailed:{detailed}")
    keys.append(f"words:{first_words(question)}")
    keys.append("all")
    return keys


@dataclass
class PriorModel:
    """Answer counts per back-off key, fitted on training questions."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)

    def fit(self, questions: Mapping[str, Mapping[str, Any]], template_of: TemplateOf,
            advance: Advance = noop) -> PriorModel:
        for qid, q in questions.items():
            advance(1)
            answer = normalize_answer(q.get("answer"))
            if not answer:
                continue
            for key in prior_keys(q, template_of(qid, q)):
                self.counts.setdefault(key, Counter())[answer] += 1
        return self

    def answer(self, question: Mapping[str, Any], template: str | None) -> tuple[str | None, str]:
        """The prior's answer and the key it came from (None when nothing was fitted)."""
        for key in prior_keys(question, template):
            counts = self.counts.get(key)
            if counts:
                return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0], key.split(":")[0]
        return None, "none"


def prior_predictions(train: Mapping[str, Mapping[str, Any]],
                      questions: Mapping[str, Mapping[str, Any]],
                      template_of: TemplateOf, advance: Advance = noop) -> tuple[dict[str, str], dict[str, int]]:
    """Prior answers for `questions` fitted on `train`; also how many came from each key kind.
    `advance(1)` per training question fitted and per question answered."""
    model = PriorModel().fit(train, template_of, advance)
    preds: dict[str, str] = {}
    sources: Counter[str] = Counter()
    for qid in sorted(questions):
        advance(1)
        answer, source = model.answer(questions[qid], template_of(qid, questions[qid]))
        sources[source] += 1
        if answer is not None:
            preds[qid] = answer
    return preds, dict(sorted(sources.items()))


def constant_predictions(questions: Mapping[str, Mapping[str, Any]], answer: str) -> tuple[dict[str, str], dict[str, int]]:
    """`answer` to every question, as it is written (the evaluator normalises it)."""
    return {qid: answer for qid in sorted(questions)}, {"answered": len(questions)}


def oracle_predictions(questions: Mapping[str, Mapping[str, Any]],
                       scene_graphs: Mapping[str, Mapping[str, Any]],
                       engine: Engine, advance: Advance = noop) -> tuple[dict[str, str], dict[str, int]]:
    """Scene-graph answers where the oracle can ground the question; it abstains elsewhere
    (`advance(1)` per question)."""
    from contrastgen.evaluation.oracle import (
        oracle_answers,  # the engine is heavy; load only when asked
    )

    answers = oracle_answers({qid: dict(questions[qid]) for qid in sorted(questions)},
                             dict(scene_graphs), engine, advance)
    preds: dict[str, str] = {}
    stats: Counter[str] = Counter()
    for qid in sorted(answers):
        answer = answers[qid]
        if answer is not None:
            stats["answered"] += 1
            preds[qid] = answer
        elif str(questions[qid].get("imageId")) not in scene_graphs:
            stats["no_scene_graph"] += 1
        else:
            stats["abstained"] += 1
    return preds, dict(sorted(stats.items()))


def to_submission(preds: Mapping[str, str]) -> list[dict[str, str]]:
    """GQA's submission format, sorted by question id."""
    return [{"questionId": qid, "prediction": preds[qid]} for qid in sorted(preds)]
