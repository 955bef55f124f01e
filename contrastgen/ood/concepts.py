"""The nine VQA-VS shortcut concepts of a sample, chosen by mutual information with the answer.

Si et al. (2022, Sec. 3.3 and App. B.3) label each sample with the concept a model could use as a
shortcut: its question type (QT), the question word most associated with the answer (KW), the two
most associated words (KWP), the image object most associated with the answer (KO), the top two
objects (KOP), and five combinations. "Most associated" is pointwise mutual information,

    MI(w, a) = log f(w, a) / (f(w) f(a) / K),

where f counts samples (a word counts once per question, an object once per image) and K is the
number of samples. The paper publishes no code, so the choices it leaves open are made here and
documented in docs/ood.md: the question-type words are the question's longest prefix in VQA's type
list; ties in MI go to the word that comes first in the question; KWP and KOP keep MI order (the
pair is "sequence-dependent"); a sample with no candidate word or object gets no concept for the
shortcuts that need one and is left out of those shortcuts' groups.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import regex

from contrastgen.datasets.samples import Sample
from contrastgen.ood.rules_data import stopwords, vqa_question_types
from contrastgen.terminal.progress import Advance, counted, noop

_WORD = regex.compile(r"[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*")
NONE_OF_THE_ABOVE = "none of the above"
CONCEPT_SEPARATOR = " + "


@dataclass(frozen=True)
class Shortcut:
    """A VQA-VS shortcut: its name and the sample labels its concept is made of."""

    name: str
    parts: tuple[str, ...]  # labels among "qt", "kw", "kw2", "ko", "ko2"
    family: str  # "language", "visual" or "multi-modality"

    @property
    def needs_objects(self) -> bool:
        return any(p.startswith("ko") for p in self.parts)


SHORTCUTS: tuple[Shortcut, ...] = (
    Shortcut("QT", ("qt",), "language"),
    Shortcut("KW", ("kw",), "language"),
    Shortcut("KWP", ("kw", "kw2"), "language"),
    Shortcut("QT+KW", ("qt", "kw"), "language"),
    Shortcut("KO", ("ko",), "visual"),
    Shortcut("KOP", ("ko", "ko2"), "visual"),
    Shortcut("QT+KO", ("qt", "ko"), "multi-modality"),
    Shortcut("KW+KO", ("kw", "ko"), "multi-modality"),
    Shortcut("QT+KW+KO", ("qt", "kw", "ko"), "multi-modality"),
)
SHORTCUT_NAMES: tuple[str, ...] = tuple(s.name for s in SHORTCUTS)


def tokenize(text: str) -> list[str]:
    """Lower-cased words; apostrophes stay inside words ("what's"), other punctuation splits."""
    return _WORD.findall(text.lower())


@functools.cache
def _types_by_first_word() -> dict[str, tuple[tuple[str, ...], ...]]:
    index: dict[str, list[tuple[str, ...]]] = {}
    for qt in vqa_question_types():  # longest first
        words = tuple(qt.split())
        index.setdefault(words[0], []).append(words)
    return {k: tuple(v) for k, v in index.items()}


def type_prefix(tokens: Sequence[str]) -> tuple[str, ...]:
    """The longest VQA question type that starts the question, as words (empty if none does)."""
    if not tokens:
        return ()
    for words in _types_by_first_word().get(tokens[0], ()):
        if tuple(tokens[: len(words)]) == words:
            return words
    return ()


def question_type(sample: Sample, tokens: Sequence[str]) -> str:
    """The sample's own type when the data carries one (VQA `question_type`, GQA detailed type),
    else the longest matching VQA prefix, else VQA's catch-all 'none of the above'."""
    if sample.question_type:
        return sample.question_type
    prefix = type_prefix(tokens)
    return " ".join(prefix) if prefix else NONE_OF_THE_ABOVE


def keyword_candidates(tokens: Sequence[str], *, drop_stopwords: bool = False) -> list[str]:
    """The question's distinct words after its type prefix, in order of first appearance."""
    rest = tokens[len(type_prefix(tokens)):]
    stop = stopwords() if drop_stopwords else frozenset()
    return list(dict.fromkeys(w for w in rest if w not in stop))


@dataclass
class MutualInformation:
    """Sample counts behind MI(feature, answer); `fit` once, `top` per sample."""

    total: int = 0
    feature_counts: Counter = field(default_factory=Counter)
    answer_counts: Counter = field(default_factory=Counter)
    joint_counts: Counter = field(default_factory=Counter)

    @classmethod
    def fit(cls, rows: Iterable[tuple[Iterable[str], str]]) -> MutualInformation:
        mi = cls()
        for features, answer in rows:
            mi.add(features, answer)
        return mi

    def add(self, features: Iterable[str], answer: str) -> None:
        """Count one sample: each distinct feature once."""
        distinct = set(features)
        self.total += 1
        self.answer_counts[answer] += 1
        self.feature_counts.update(distinct)
        self.joint_counts.update((f, answer) for f in distinct)

    def merge(self, other: MutualInformation) -> None:
        """Add the counts of another part of the same split."""
        self.total += other.total
        for mine, theirs in ((self.feature_counts, other.feature_counts), (self.answer_counts, other.answer_counts),
                             (self.joint_counts, other.joint_counts)):
            mine.update(theirs)

    def score(self, feature: str, answer: str) -> float | None:
        """MI(feature, answer), or None when the pair never occurs in the fitted data."""
        joint = self.joint_counts.get((feature, answer), 0)
        if joint == 0:
            return None
        return math.log(joint * self.total / (self.feature_counts[feature] * self.answer_counts[answer]))

    def top(self, features: Sequence[str], answer: str, n: int = 2) -> list[str]:
        """The `n` features with the highest MI with `answer`; ties keep the features' order."""
        if n != 2:
            scored = [(s, i, f) for i, f in enumerate(features) if (s := self.score(f, answer)) is not None]
            scored.sort(key=lambda t: (-t[0], t[1]))
            return [f for _, _, f in scored[:n]]
        # the labelling's hot path: the best two in one scan, each score as `score` computes it
        # (the same expression, so the same ties), the earlier feature first on a tie
        joint_counts, feature_counts = self.joint_counts, self.feature_counts
        answer_count, total, log = self.answer_counts[answer], self.total, math.log
        best: tuple[float, str] | None = None
        second: tuple[float, str] | None = None
        for f in features:
            joint = joint_counts.get((f, answer), 0)
            if joint == 0:
                continue
            s = log(joint * total / (feature_counts[f] * answer_count))
            if best is None or s > best[0]:
                best, second = (s, f), best
            elif second is None or s > second[0]:
                second = (s, f)
        return [] if best is None else [best[1]] if second is None else [best[1], second[1]]


@dataclass
class SampleConcepts:
    """A sample's base labels and its concept for each shortcut (None: not labelled)."""

    question_id: str
    labels: dict[str, str | None]
    concepts: dict[str, str | None]


def count_features(source: Iterable[Sample], objects: Mapping[str, Sequence[str]] | None, *,
                   drop_stopwords: bool) -> tuple[MutualInformation, MutualInformation | None]:
    """The word and object counts of `source` against answers (objects: None without annotations).
    Counts of parts of a split `merge` into the counts of the whole."""
    words = MutualInformation()
    seen_objects = MutualInformation() if objects is not None else None
    for s in source:
        # the words are found again when labelling rather than kept: a million questions' token
        # lists would take about a gigabyte
        words.add(keyword_candidates(tokenize(s.question), drop_stopwords=drop_stopwords), s.answer)
        # an image missing from the annotations says nothing about objects: left out, not "none"
        if seen_objects is not None and s.image_id in objects:  # type: ignore[operator]
            seen_objects.add(objects[s.image_id], s.answer)  # type: ignore[index]
    return words, seen_objects


class ConceptLabeller:
    """The MI statistics, fitted once, and the labelling of one sample at a time: what the in-memory
    build does for a list, a streamed build (`vqavs_stream`) does as the questions go by."""

    def __init__(self, word_mi: MutualInformation, object_mi: MutualInformation | None,
                 objects: Mapping[str, Sequence[str]] | None, drop_stopwords: bool):
        self.word_mi = word_mi
        self.object_mi = object_mi
        self.objects = objects
        self.drop_stopwords = drop_stopwords
        self.shortcuts = [s for s in SHORTCUTS if objects is not None or not s.needs_objects]
        self._parts = [(sc.name, sc.parts) for sc in self.shortcuts]  # what `label` reads per sample, unpacked once

    @classmethod
    def fit(cls, source: Iterable[Sample], *, objects: Mapping[str, Sequence[str]] | None = None,
            source_objects: Mapping[str, Sequence[str]] | None = None,
            drop_stopwords: bool = False) -> ConceptLabeller:
        """Count words and objects against answers in one pass over `source` (the samples, or
        another split such as training); `source_objects` are its images' objects (default: `objects`)."""
        source_objects = objects if source_objects is None else source_objects
        words, seen_objects = count_features(source, source_objects, drop_stopwords=drop_stopwords)
        return cls(words, seen_objects, objects, drop_stopwords)

    def label(self, s: Sample) -> SampleConcepts:
        """The sample's base labels and its concept for each shortcut its data can have."""
        tokens = tokenize(s.question)
        kws = self.word_mi.top(keyword_candidates(tokens, drop_stopwords=self.drop_stopwords), s.answer)
        labels: dict[str, str | None] = {
            "qt": question_type(s, tokens),
            "kw": kws[0] if kws else None,
            "kw2": kws[1] if len(kws) > 1 else None,
        }
        if self.object_mi is not None and self.objects is not None and s.image_id in self.objects:
            kos = self.object_mi.top(self.objects[s.image_id], s.answer)
            labels["ko"] = kos[0] if kos else None
            labels["ko2"] = kos[1] if len(kos) > 1 else None
        elif self.objects is not None:
            labels["ko"] = labels["ko2"] = None
        concepts: dict[str, str | None] = {}
        for name, parts in self._parts:
            values = [labels[p] for p in parts]
            concepts[name] = None if None in values else CONCEPT_SEPARATOR.join(values)  # type: ignore[arg-type]
        return SampleConcepts(s.question_id, labels, concepts)


def label_samples(samples: Sequence[Sample], *, objects: Mapping[str, Sequence[str]] | None = None,
                  mi_samples: Sequence[Sample] | None = None,
                  mi_objects: Mapping[str, Sequence[str]] | None = None,
                  drop_stopwords: bool = False, advance: Advance = noop) -> list[SampleConcepts]:
    """Label every sample with the nine concepts (the object ones only when `objects` is given),
    calling `advance(1)` per sample labelled (a progress bar's).

    MI statistics come from `mi_samples` (e.g. the training split, as the paper's concepts are
    training-set statistics) or, by default, from `samples` themselves.
    """
    labeller = ConceptLabeller.fit(samples if mi_samples is None else mi_samples, objects=objects,
                                   source_objects=mi_objects, drop_stopwords=drop_stopwords)
    return [labeller.label(s) for s in counted(samples, advance)]
