"""Which candidate pair each image gives for each kind: the one that keeps the text from telling
the positive from the negative.

Two blind models are what the pairs are balanced against (`evaluation.caption_baselines`
measures both): the corpus n-gram plausibility scorer (`plausibility`), which picks the caption
its counts find more plausible, and a bag-of-n-grams classifier trained on the pairs, which
learns every word or word pair that occurs more often on one side. So the choice, made image by
image in a fixed order, keeps two running tallies per kind and takes the first candidate that
keeps both within tolerance, or, where none of the first `limit` does, the one that moves them
least (candidates are drawn as they are read, so an image pays for a second only where the
first would unbalance the kind):
- words: for each word and pair of adjacent words, how many more times the chosen positives said
  it than the chosen negatives. A candidate's cost is how much it would widen those gaps (the
  words both captions share cancel out);
- plausibility: how many more chosen pairs the scorer gets right than wrong. A candidate whose
  scorer verdict would widen that gap costs `PLAUSIBILITY_WEIGHT`.
"Within tolerance": the pair widens no word gap past TOLERANCE and leaves the scorer at most one
pair off even. Ties go to the pair whose two captions are closest in plausibility, then to the
order drawn. With more than one pair per image (`per_image`), every candidate is read first.

Without balancing (`balanced=False`) each image's pair is drawn uniformly from its candidates:
the same candidates, so the two modes differ only in the choice (but for the add kinds, whose
form each mode sets by default: `candidates`).

The tallies are kept per shard of images (`generate.SHARD_IMAGES`), which keeps the choice the
same whatever the number of workers; shards are balanced each on its own, so the whole is too.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import NamedTuple

from contrastgen.captions.candidates import Candidate

PLAUSIBILITY_WEIGHT = 2.0
TOLERANCE = 2


class Scored(NamedTuple):
    """A candidate as the balancing reads it (a named tuple: one is made per candidate read)."""

    candidate: Candidate
    positive_text: str
    negative_text: str
    positive_plausibility: float
    negative_plausibility: float

    @property
    def scorer_verdict(self) -> int:
        """+1 if the plausibility scorer picks the positive, -1 the negative, 0 a tie."""
        d = self.positive_plausibility - self.negative_plausibility
        return (d > 0) - (d < 0)


@functools.lru_cache(maxsize=1 << 16)  # a positive's text recurs across its kinds' candidates
def ngrams(text: str) -> frozenset[str | tuple[str, str]]:
    """The words of a caption and its pairs of adjacent words, as a text-only classifier sees them
    (each once: a caption rarely says a word twice, and the tally only needs which it says)."""
    words = text.split()
    return frozenset(words).union(zip(words, words[1:], strict=False))


@functools.lru_cache(maxsize=1 << 10)  # the pair chosen is asked again when its kind's tally takes it
def difference(positive: str, negative: str) -> tuple[tuple[str | tuple[str, str], int], ...]:
    """The n-grams one caption of a pair says and the other does not: +1 for the positive's, -1
    for the negative's (the ones both say cancel out of every tally)."""
    p, n = ngrams(positive), ngrams(negative)
    return (*[(g, 1) for g in p - n], *[(g, -1) for g in n - p])


@dataclass
class _Tally:
    words: dict[str | tuple[str, str], int] = field(default_factory=dict)  # positive minus negative counts
    plausibility: int = 0  # pairs the scorer gets right minus pairs it gets wrong


class Balancer:
    def __init__(self, *, balanced: bool, per_image: int):
        self.balanced, self.per_image = balanced, per_image
        self._tallies: dict[str, _Tally] = {}

    def choose(self, kind: str, scored: Iterable[Scored], rng: random.Random, limit: int) -> list[Scored]:
        """Up to `per_image` pairs of `kind` for one image, each with another positive, from at
        most `limit` of the image's candidates, taken from `scored` as they are needed."""
        tally = self._tallies.setdefault(kind, _Tally())
        if self.balanced and self.per_image == 1:
            pick = self._first_within(tally, islice(scored, limit))
            if pick is None:
                return []
            self._record(tally, pick)
            return [pick]
        pool = list(islice(scored, limit))
        rng.shuffle(pool)
        chosen: list[Scored] = []
        while pool and len(chosen) < self.per_image:
            pick = self._best(tally, pool) if self.balanced else pool[0]
            chosen.append(pick)
            self._record(tally, pick)
            pool = [s for s in pool if s.candidate.positive != pick.candidate.positive]
        return chosen

    @staticmethod
    def _first_within(tally: _Tally, scored: Iterable[Scored]) -> Scored | None:
        """The first candidate that keeps both tallies within tolerance (it widens no word gap past
        TOLERANCE and leaves the scorer at most one pair off even), else the cheapest of them all.

        Why the first: a candidate that moves no tally past its bound is as good as the balance
        needs, and each further candidate costs a draw, its proofs and its scoring; so an image
        draws a second or third only where the first would unbalance the kind."""
        pool: list[Scored] = []
        for s in scored:
            moved, plausibility = _moves(tally, s)
            if moved <= 0 and abs(plausibility) <= 1:
                return s
            pool.append(s)
        return Balancer._best(tally, pool) if pool else None

    @staticmethod
    def _best(tally: _Tally, pool: list[Scored]) -> Scored:
        def cost(s: Scored) -> tuple[float, float]:
            moved, plausibility = _moves(tally, s)
            widened = abs(plausibility) - abs(tally.plausibility)
            return moved + PLAUSIBILITY_WEIGHT * widened, abs(s.positive_plausibility - s.negative_plausibility)

        return min(pool, key=cost)

    @staticmethod
    def _record(tally: _Tally, s: Scored) -> None:
        words = tally.words
        for g, d in difference(s.positive_text, s.negative_text):
            words[g] = words.get(g, 0) + d
        tally.plausibility += s.scorer_verdict


def _moves(tally: _Tally, s: Scored) -> tuple[int, int]:
    """(how far the pair would widen the word gaps past TOLERANCE, less how far it narrows
    them; the scorer tally after it)."""
    words = tally.words
    moved = 0
    for g, d in difference(s.positive_text, s.negative_text):
        now = words.get(g, 0)
        if -TOLERANCE < now < TOLERANCE:
            continue  # a step of one from inside the bound ends at most on it: no move past it
        moved += max(0, abs(now + d) - TOLERANCE) - max(0, abs(now) - TOLERANCE)
    return moved, tally.plausibility + s.scorer_verdict
