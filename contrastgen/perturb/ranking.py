"""The one driver every path's proposals go through: drop what the image already asks, keep
contrasts first and invariances in the ranks left, up to `max_k`, and number what is kept.

Why contrasts first: a k = 1 or k = 3 contrast set is the paper's test (the answer changes); an
invariance (the answer provably stays) is a second, labelled test that fills the ranks the
contrasts leave. So an invariance beyond those ranks is never kept, and a path searches until
`max_k` contrasts are found or nothing is left to try (`full`). Because a path proposes in a
seeded order that does not depend on `max_k`, the k = 1 set is a prefix of the k = 3 set, which
is a prefix of the k = 5 set.

Determinism: each path seeds its own generator for each question (`seeded_rng`) from a seed
string of its own, declared where the path lives and listed by its dataset family
(`families.base.Family.seed_keys`, which the registry holds distinct), so results do not depend
on processing order, sharding or the number of workers.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import regex

from contrastgen.perturb.record import Perturbation, Proposal, perturbation_id

_NORM = regex.compile(r"[^\p{L}\p{N} ]+")
_ASCII_PUNCT = str.maketrans({c: " " for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"})

def seeded_rng(key: str, seed: int, question_id: str, template: str = "") -> random.Random:
    """The random order one path draws its candidates in for one question (and template). `key`
    is the path's seed string (`{seed}`, `{question}`, `{template}` filled in): fixed, since
    changing it changes every output of that path."""
    return random.Random(key.format(seed=seed, question=question_id, template=template))


def normalize_question(text: str) -> str:
    """The form in which two questions count as the same question."""
    low = text.lower()
    if low.isascii():  # the common case, without a regex
        return " ".join(low.translate(_ASCII_PUNCT).split())
    return " ".join(_NORM.sub(" ", low).split())


class Ranking:
    """One question's perturbations on one path, as its proposer offers them.

    `existing` are the normalised texts of the image's questions: a proposal that repeats one of
    them, or an earlier proposal, is dropped (and counted in `duplicates`). `max_k` None: no
    limit, every new proposal is kept (contrasts still first), for a caller that wants every
    proven edit (the GQA redundancy ladder looks for its removals among them)."""

    def __init__(self, existing: set[str], max_k: int | None):
        self.existing = existing
        self.max_k = max_k
        self.contrasts: list[Proposal] = []
        self.invariances: list[Proposal] = []
        self.keys: set[str] = set()
        self.duplicates = 0

    def asked(self, question: str) -> bool:
        """Does the image (or a kept proposal) already ask this question?"""
        key = normalize_question(question)
        return key in self.existing or key in self.keys

    def offer(self, p: Proposal) -> bool:
        """Keep `p` if it has a rank to take and asks something new; whether it was kept."""
        if p.invariance and not self.wants_invariance:
            return False
        key = normalize_question(p.question)
        if key in self.existing or key in self.keys:
            self.duplicates += 1
            return False
        self.keys.add(key)
        (self.invariances if p.invariance else self.contrasts).append(p)
        return True

    def take(self, proposals: Iterable[Proposal]) -> None:
        """Offer proposals until `max_k` contrasts are kept (the rest are never made)."""
        if self.full:
            return
        for p in proposals:
            self.offer(p)
            if self.full:
                return

    @property
    def wants_invariance(self) -> bool:
        """Could one more invariance still get a rank? (Contrasts found later only take ranks.)"""
        return self.max_k is None or len(self.invariances) < self.max_k - len(self.contrasts)

    @property
    def full(self) -> bool:
        return self.max_k is not None and len(self.contrasts) >= self.max_k

    @property
    def kept(self) -> list[Proposal]:
        """The proposals in rank order: the contrasts, then the invariances that fit."""
        return (self.contrasts + self.invariances)[:self.max_k]  # [:None]: all of them

    def numbered(self, question_id: str, suffix: str) -> list[Perturbation]:
        """The kept proposals as a record's `perturbations`, numbered `<question id>_<suffix><rank>`."""
        return [p.numbered(perturbation_id(question_id, suffix, rank), rank) for rank, p in enumerate(self.kept, 1)]
