"""Answer normalisation shared by every scorer (evaluation, crowd ingest, baselines).

Two normalisations, for two kinds of answers:
- `normalize_answer`, GQA-style: lower case, punctuation and symbols to spaces, a leading article
  dropped, white space collapsed, the number words zero to ten as digits. It is the canonical form
  of a gold answer in every record the generator writes and the verifier reads, and how GQA's own
  metrics (`evaluate --questions`) compare (GQA's gold answers are already in this form).
- `normalize_vqa_answer`, VQA's official normalisation (`vqaEval.py` of the VQA API, its tables in
  `rules/vqa_answer_normalization.json`): its punctuation rules (some marks deleted, some spaced,
  periods stripped unless before a digit, no split of "1,000"), the number words and "none" as
  digits, every article a/an/the dropped wherever it stands, its contractions map ("dont" ->
  "don't"). Models answer contrast-set questions the way they answer VQA: "a dog and a cat".

A contrast-set answer is open and VQA-style, so the contrast-set scorers (`evaluate --contrast`,
its two-image groups, the exported lmms-eval task) compare `score_form`s: the official VQA
normalisation, then the GQA-style clean-up of what it leaves (marks it keeps, such as `*` and the
apostrophe). Two answers the official normaliser makes equal are equal here; the gold answer goes
through the same steps, so a prediction that says the gold answer as the dataset wrote it is right
(a test holds both, the second on every gold answer of the bundled and the real data).

The lmms-eval task that `contrastgen export --format lmms-eval` writes scores answers with its
own copy of `score_form` (it may import nothing of contrastgen); a test holds the two equal.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import orjson
import regex

from contrastgen.resources import rules_resource

_PUNCT = regex.compile(r"[\p{P}\p{S}]+")
_ARTICLES = regex.compile(r"^(?:a|an|the)\s+")
VQA_RULES_FILE = "vqa_answer_normalization.json"


@functools.cache
def number_words() -> dict[str, str]:
    """Number word -> digits, from `rules/answer_numbers.tsv`."""
    table: dict[str, str] = {}
    for line in rules_resource("answer_numbers.tsv").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, digits = line.split("\t")
            table[word] = digits
    return table


def normalize_answer(answer: object) -> str:
    """Lower-case, strip punctuation and a leading article, collapse white space, number words
    as digits."""
    if answer is None:
        return ""
    text = str(answer).lower()
    text = " ".join(_PUNCT.sub(" ", text).split())
    text = _ARTICLES.sub("", text)
    numbers = number_words()
    return " ".join(numbers.get(word, word) for word in text.split())


@dataclass(frozen=True)
class VqaRules:
    """The tables of VQA's official normalisation (`rules/vqa_answer_normalization.json`)."""

    punctuation: tuple[str, ...]
    period_strip: regex.Pattern[str]
    comma_strip: regex.Pattern[str]
    number_words: dict[str, str]
    articles: frozenset[str]
    contractions: dict[str, str]


@functools.cache
def vqa_rules_data() -> dict[str, object]:
    """The tables as the rules file writes them (its `_about` header left out)."""
    data = orjson.loads(rules_resource(VQA_RULES_FILE).read_bytes())
    return {key: value for key, value in data.items() if not key.startswith("_")}


@functools.cache
def vqa_rules() -> VqaRules:
    t = vqa_rules_data()
    return VqaRules(tuple(t["punctuation"]), regex.compile(t["period_strip"]), regex.compile(t["comma_strip"]),
                    dict(t["number_words"]), frozenset(t["articles"]), dict(t["contractions"]))


def _vqa_punctuation(text: str, rules: VqaRules) -> str:
    # A mark beside a space, or anywhere in a text holding a digit-comma-digit, is deleted ("1,000",
    # "yes !"); elsewhere it becomes a space ("red-car"). The test is on the text as given, not as
    # rewritten so far: that is the official order.
    delete_all = rules.comma_strip.search(text) is not None
    out = text
    for mark in rules.punctuation:
        out = out.replace(mark, "" if delete_all or mark + " " in text or " " + mark in text else " ")
    return rules.period_strip.sub("", out)


def _vqa_words(text: str, rules: VqaRules) -> str:
    # number words first (so "none" -> "0"), then articles out, then contractions, as the official
    words = [rules.number_words.get(w, w) for w in text.lower().split()]
    return " ".join(rules.contractions.get(w, w) for w in words if w not in rules.articles)


def normalize_vqa_answer(answer: object) -> str:
    """VQA's official answer normalisation (`vqaEval.py`: processPunctuation, then
    processDigitArticle, after replacing new lines and tabs and trimming)."""
    if answer is None:
        return ""
    return _normalize_vqa(str(answer))


@functools.lru_cache(maxsize=1 << 18)
def _normalize_vqa(answer: str) -> str:
    # Cached: answers repeat heavily ("yes", "2", "white"); VQA's scoring normalises ten per question.
    rules = vqa_rules()
    text = answer.replace("\n", " ").replace("\t", " ").strip()
    return _vqa_words(_vqa_punctuation(text, rules), rules)


@functools.lru_cache(maxsize=1 << 16)
def _score_form(answer: str) -> str:
    return normalize_answer(_normalize_vqa(answer))


def score_form(answer: object) -> str:
    """What the contrast-set scorers compare: VQA's official normalisation, then the GQA-style one
    (`normalize_answer`) over what it leaves. "A dog", "the dog" and "dog" are one answer, "two" is
    "2", "dont" is "don't"."""
    return "" if answer is None else _score_form(str(answer))


def is_right(prediction: object, gold: str, *, normalize: Callable[[object], str] = score_form) -> bool:
    """Whether a raw prediction is the gold answer, both normalised by `normalize` (contrast sets:
    `score_form`; GQA's own metrics pass `normalize_answer`). A prediction that normalises to
    nothing (an empty string, punctuation or an article only, a multiple-choice reply that names no
    option) is no answer, and never right, whatever the gold: otherwise a model that says nothing
    would match a record whose answer is empty, and two empty answers would pass for one kept."""
    said = normalize(prediction)
    return bool(said) and said == normalize(gold)


def is_empty(prediction: object, *, normalize: Callable[[object], str] = score_form) -> bool:
    """Whether a raw prediction says nothing once normalised (scored wrong and counted apart)."""
    return not normalize(prediction)
