"""A contrast-set task's functions for lmms-eval: this file is copied, unchanged, into the task
folder as `utils.py`, and the task's YAML names its functions with `!function utils.<name>`.

lmms-eval loads the file by its path, as a module of its own, so it imports nothing of
contrastgen (which the GPU machine need not have): only the standard library, and PIL, which
lmms-eval installs. The export writes into the copy the tables contrastgen matches answers with
(VQA's official normalisation, `rules/vqa_answer_normalization.json`, as `VQA_RULES`; the number
words of `rules/answer_numbers.tsv`, as `NUMBER_WORDS`), so that this task and `contrastgen evaluate`
score a prediction the same way (a test holds `normalize_answer` here equal to
`contrastgen.answers.score_form`).

How a run is scored. `process_results` marks one question right or wrong and returns the same
item under every metric the row counts towards: the overall ones, and one per template, GQA
question type and edit kind of its sets. The item carries the question's `contrast_ids` and
`role`, so each aggregation rebuilds the contrast sets from the items it is given, whatever their
order or split over ranks. A set is scored under a metric when its original and every contrast
perturbation the metric counts are among the items: the row's `set_sizes` says how many each set
has (of each edit kind, and invariance ones), so a `--limit`ed run scores the sets it asked in
full and leaves out the set it cut (as `contrastgen evaluate` scores a partial run):
- `original_accuracy`: originals right, over the sets;
- `perturbed_accuracy`: contrast perturbations right, over the perturbations;
- `drop`: the first minus the second;
- `consistency`: sets whose original and every contrast perturbation are right, over the sets
  (contrast consistency, Gardner et al. 2020);
- `invariance_consistency`: sets with invariance perturbations (the answer provably stays) whose
  original and every invariance perturbation are right, over those sets;
- `invariance_accuracy`: invariance perturbations right, over them (beside the consistency, so a
  reader sees both).
Right means the gold answer, never the model's own answer to the original: a model that says
"yes" to everything, or nothing, would keep every answer. A request lmms-eval gave up on (its
answer text starts `[LMMS_EVAL_REQUEST_FAILED`) and an answer that normalises to nothing are no
answer: wrong, with no prediction.
These are `contrastgen evaluate --contrast`'s figures for the largest k, per breakdown.

Two-image groups (`generate --groups`; NaturalBench's metrics, Li et al. 2024): a row's `groups`
lists `<group id>:<cell>`, cells 0 and 1 the pair's two questions on its image, 2 and 3 the same
questions on a second image (rows of role `group cell`, scored only here). A group is scored when
its four cells are among the items:
- `group_question_accuracy`: questions right on both images, over the groups' questions (two
  per group);
- `group_image_accuracy`: images whose two questions are both right, over the groups' images;
- `group_accuracy`: groups with all four cells right.
A model that ignores the image gives a question one answer on both images, and a group's first
question has two: it can never score a group.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata

ORIGINAL = "original"
PERTURBATION = "perturbation"
INVARIANCE = "invariance"
GROUP_CELL = "group cell"

OVERALL_METRICS = ("original_accuracy", "perturbed_accuracy", "drop", "consistency")
INVARIANCE_METRICS = ("invariance_consistency", "invariance_accuracy")
BREAKDOWN_METRICS = ("original_accuracy", "perturbed_accuracy", "consistency")
DIMENSIONS = ("template", "type", "kind")
GROUP_METRICS = ("group_question_accuracy", "group_image_accuracy", "group_accuracy")
# cells (question, image): NaturalBench's order
_QUESTIONS_OF_GROUP = ((0, 2), (1, 3))
_IMAGES_OF_GROUP = ((0, 1), (2, 3))

FAILED_REQUEST = "[LMMS_EVAL_REQUEST_FAILED"
_ARTICLE = re.compile(r"^(?:a|an|the)\s+")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]+")
# Number word -> digits (rules/answer_numbers.tsv), written in by the export that copies this file.
NUMBER_WORDS: dict[str, str] = {}
# VQA's official normalisation tables (rules/vqa_answer_normalization.json), written in likewise.
VQA_RULES: dict = {}


def _vqa_normalize(text: str) -> str:
    """VQA's official normalisation (vqaEval.py): marks deleted beside a space or in a text with a
    digit-comma-digit, else spaced; periods stripped unless before a digit; lower case; number
    words and "none" as digits; every article dropped; contractions mapped."""
    text = text.replace("\n", " ").replace("\t", " ").strip()
    delete_all = re.search(VQA_RULES["comma_strip"], text) is not None
    out = text
    for mark in VQA_RULES["punctuation"]:
        out = out.replace(mark, "" if delete_all or mark + " " in text or " " + mark in text else " ")
    out = re.sub(VQA_RULES["period_strip"], "", out)
    words = [VQA_RULES["number_words"].get(w, w) for w in out.lower().split()]
    contractions = VQA_RULES["contractions"]
    return " ".join(contractions.get(w, w) for w in words if w not in VQA_RULES["articles"])


def normalize_answer(answer: object) -> str:
    """VQA's official normalisation, then the GQA-style one over what it leaves: lower case,
    punctuation and symbols to spaces, white space collapsed, a leading article dropped, the number
    words zero to ten as digits."""
    if answer is None:
        return ""
    text = _vqa_normalize(str(answer)).lower()
    text = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)
    text = _ARTICLE.sub("", " ".join(text.split()))
    return " ".join(NUMBER_WORDS.get(word, word) for word in text.split())


def metric_slug(value: str) -> str:
    """A breakdown value as part of a metric name: itself when it is letters, digits and `_`,
    else those characters and a short hash of the value, so two values never share a name."""
    if _PLAIN_NAME.fullmatch(value):
        return value
    base = re.sub(r"[^A-Za-z0-9]+", "_", value).strip("_") or "value"
    return f"{base}_{hashlib.sha1(value.encode('utf-8')).hexdigest()[:8]}"


def breakdowns(doc: dict) -> list[tuple[str, str]]:
    """(dimension, value) of every per-template, per-type and per-kind metric a row counts
    towards: none for an invariance perturbation, or an original with no contrast perturbation."""
    if doc["role"] == INVARIANCE or not doc.get("edit_kinds"):
        return []
    return ([("template", str(t)) for t in doc["templates"]] + [("type", str(doc["question_type"]))]
            + [("kind", str(k)) for k in doc["edit_kinds"]])


_ALL = "all"  # scope: every contrast perturbation of a set
_GROUP = "group"  # scope: a two-image group's four cells


def metric_scopes(doc: dict) -> list[tuple[str, str]]:
    """(metric, scope) of every metric a row counts towards: an invariance perturbation only
    towards the invariance metrics; an original towards those and, like a contrast perturbation,
    towards every overall metric and the metrics of its breakdowns. The scope names what a set
    must hold in full to be scored under the metric: all its contrast perturbations, its
    invariance ones, or (per edit kind) those of the kind."""
    grouped = [(m, _GROUP) for m in GROUP_METRICS] if doc.get("groups") else []
    if doc["role"] == GROUP_CELL:
        return grouped
    invariance = [(m, INVARIANCE) for m in INVARIANCE_METRICS]
    if doc["role"] == INVARIANCE:
        return invariance
    out = [(m, _ALL) for m in OVERALL_METRICS] + grouped
    if doc["role"] == ORIGINAL:
        out += invariance
    for dimension, value in breakdowns(doc):
        scope = "kind:" + value if dimension == "kind" else _ALL
        out += [(f"{metric}_{dimension}_{metric_slug(value)}", scope) for metric in BREAKDOWN_METRICS]
    return out


def metric_names(doc: dict) -> list[str]:
    """The metrics a row counts towards (`metric_scopes`)."""
    return [name for name, _ in metric_scopes(doc)]


def _expected(sizes: dict, scope: str) -> int:
    """How many perturbations of a set (`sizes`: by edit kind) a metric of `scope` counts."""
    if scope == INVARIANCE:
        return int(sizes.get(INVARIANCE, 0))
    if scope.startswith("kind:"):
        return int(sizes.get(scope[len("kind:"):], 0))
    return sum(int(n) for kind, n in sizes.items() if kind != INVARIANCE)


def doc_to_visual(doc: dict) -> list:
    """The question's image, embedded in the row (`image`) or at the path it names (`image_path`)."""
    image = doc.get("image")
    if image is None:
        from PIL import Image

        path = doc.get("image_path")
        try:
            image = Image.open(path)
        except (OSError, TypeError, AttributeError) as exc:
            raise FileNotFoundError(f"question {doc.get('question_id')}: cannot open its image "
                                    f"{path!r} ({exc})") from exc
    return [image.convert("RGB")]


def doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['question']}{kwargs.get('post_prompt', '')}"


def process_results(doc: dict, results: list) -> dict:
    """The row's item under every metric it counts towards. `results` holds the model's answer
    (the first, when a task repeats a question)."""
    answer = results[0] if results else ""
    while isinstance(answer, (list, tuple)):
        answer = answer[0] if answer else ""
    said = "" if str(answer).startswith(FAILED_REQUEST) else normalize_answer(answer)
    prediction = said or None  # a failed request or an empty answer: no answer, never right
    item = {"question_id": str(doc["question_id"]), "role": doc["role"],
            "contrast_ids": [str(c) for c in doc["contrast_ids"]], "prediction": prediction,
            "correct": int(prediction is not None and prediction == normalize_answer(doc["answer"]))}
    if doc.get("groups"):
        item["groups"] = [str(g) for g in doc["groups"]]
    sizes = json.loads(doc.get("set_sizes") or "{}")  # absent from tasks exported before it
    scoped: dict[str, dict] = {}
    out = {}
    for name, scope in metric_scopes(doc):
        if scope not in scoped:
            scoped[scope] = item if not sizes or scope == _GROUP else {
                **item, "sizes": {cid: _expected(sizes[cid], scope) for cid in item["contrast_ids"] if cid in sizes}}
        out[name] = scoped[scope]
    return out


class _Set:
    __slots__ = ("original", "perturbations", "invariance", "size")

    def __init__(self) -> None:
        self.original: int | None = None
        self.perturbations: list[int] = []
        self.invariance: list[int] = []
        self.size: int | None = None  # perturbations the metric counts; None: unknown (older export)

    def full(self, answered: list[int]) -> bool:
        """Whether the original and every perturbation the metric counts were asked."""
        return self.original is not None and bool(answered) and (self.size is None or len(answered) == self.size)


def _sets(items: list) -> list[_Set]:
    sets: dict[str, _Set] = {}
    for item in items:
        sizes = item.get("sizes") or {}
        for cid in item["contrast_ids"]:
            s = sets.setdefault(cid, _Set())
            if cid in sizes:
                s.size = int(sizes[cid])
            if item["role"] == ORIGINAL:
                s.original = int(item["correct"])
            elif item["role"] == PERTURBATION:
                s.perturbations.append(int(item["correct"]))
            elif item["role"] == INVARIANCE:
                s.invariance.append(int(item["correct"]))
    return [sets[cid] for cid in sorted(sets)]


def _contrast_sets(items: list) -> list[_Set]:
    return [s for s in _sets(items) if s.full(s.perturbations)]


def _share(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else float("nan")


def original_accuracy(items: list) -> float:
    sets = _contrast_sets(items)
    return _share(sum(s.original for s in sets), len(sets))


def perturbed_accuracy(items: list) -> float:
    sets = _contrast_sets(items)
    return _share(sum(sum(s.perturbations) for s in sets), sum(len(s.perturbations) for s in sets))


def drop(items: list) -> float:
    return original_accuracy(items) - perturbed_accuracy(items)


def consistency(items: list) -> float:
    sets = _contrast_sets(items)
    return _share(sum(1 for s in sets if s.original and all(s.perturbations)), len(sets))


def _invariance_sets(items: list) -> list[_Set]:
    return [s for s in _sets(items) if s.full(s.invariance)]


def invariance_consistency(items: list) -> float:
    sets = _invariance_sets(items)
    return _share(sum(1 for s in sets if s.original and all(s.invariance)), len(sets))


def invariance_accuracy(items: list) -> float:
    sets = _invariance_sets(items)
    return _share(sum(sum(s.invariance) for s in sets), sum(len(s.invariance) for s in sets))


def _groups(items: list) -> list[dict[int, int]]:
    """Each group whose four cells are among the items: cell -> right (1) or wrong (0)."""
    groups: dict[str, dict[int, int]] = {}
    for item in items:
        for entry in item.get("groups") or ():
            group, _, cell = str(entry).rpartition(":")
            groups.setdefault(group, {})[int(cell)] = int(item["correct"])
    return [groups[g] for g in sorted(groups) if len(groups[g]) == 4]


def group_question_accuracy(items: list) -> float:
    groups = _groups(items)
    return _share(sum(all(g[c] for c in cells) for g in groups for cells in _QUESTIONS_OF_GROUP), 2 * len(groups))


def group_image_accuracy(items: list) -> float:
    groups = _groups(items)
    return _share(sum(all(g[c] for c in cells) for g in groups for cells in _IMAGES_OF_GROUP), 2 * len(groups))


def group_accuracy(items: list) -> float:
    groups = _groups(items)
    return _share(sum(all(g.values()) for g in groups), len(groups))
