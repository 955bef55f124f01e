"""How plausible a caption is under the corpus's own statistics: how often its words occur together
in the scene graphs of the whole input.

Why: a negative that is false and also odd ("a purple elephant", "a car wearing a man") is told
apart from its positive by the text alone; SugarCrepe showed that text-only models beat CLIP on
ARO and CREPE that way. This is the corpus n-gram scorer the balancing matches negatives against,
and one of the two blind baselines `evaluate --captions` reports.

A caption is a chain of links, each scored as a smoothed log-probability from counts over every
graph of the input:
- each noun: how often its kind is an object (`n`);
- each attribute: how often it is listed for objects of that kind (`a`);
- a relation: how often its subject's kind has it (`s`) and its object's kind receives it (`o`);
- two phrases joined by "and": how often the two kinds are in one image (`c`).
The score is the mean over the links, so that a caption with one more phrase is not less
plausible for its length alone. Each image's captions are scored without that image's own counts
(leave one image out): a positive's words must not look plausible because this very graph says
them, which is what a model that has not seen the image could not know.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from contrastgen.captions.caption import Caption

SMOOTHING = 0.5

Key = tuple[str, ...]


def count_graph(graph: Mapping[str, Any], kind_of: Callable[[str], str],
                into: dict[Key, int] | None = None) -> dict[Key, int]:
    """The counts one image contributes, from its graph as given: objects per kind, attributes
    per kind, relations from and to each kind, and (once per image) each kind and each pair of
    kinds; added to `into` where given (a shard's counts summed in place, never copied). Read
    straight from the graph (no index is built): it runs once per image before any caption is
    made, and again for each image's own counts."""
    counts: dict[Key, int] = {} if into is None else into
    get = counts.get
    objects = graph["objects"]
    kind = {oid: kind_of(str(o["name"]).strip().lower()) for oid, o in objects.items()}
    for oid, o in objects.items():
        k = kind[oid]
        key: Key = ("n", k)
        counts[key] = get(key, 0) + 1
        for a in o.get("attributes") or ():
            key = ("a", a.strip().lower(), k)
            counts[key] = get(key, 0) + 1
        for r in o.get("relations") or ():
            other = kind.get(str(r["object"]))
            if other is None:
                continue
            name = r["name"].strip().lower()
            key = ("s", k, name)
            counts[key] = get(key, 0) + 1
            key = ("o", name, other)
            counts[key] = get(key, 0) + 1
    kinds = sorted(set(kind.values()))
    for i, a in enumerate(kinds):
        key = ("i", a)
        counts[key] = get(key, 0) + 1
        for b in kinds[i + 1:]:
            key = ("c", a, b)
            counts[key] = get(key, 0) + 1
    counts["images",] = get(("images",), 0) + 1
    return counts


@dataclass
class Plausibility:
    """The corpus counts, with the totals the probabilities are normalised by."""

    counts: Counter[Key]
    totals: Counter[Key] = field(default_factory=Counter)

    @classmethod
    def fit(cls, parts: Iterable[Mapping[Key, int]]) -> Plausibility:
        counts: Counter[Key] = Counter()
        for part in parts:
            counts.update(part)
        return cls(counts, _totals(counts))

    def scorer(self, own: Mapping[Key, int], kind_of: Callable[[str], str]) -> Callable[[Caption], float]:
        """A scorer of one image's captions: the corpus counts less `own`, that image's."""
        counts, totals = self.counts, self.totals
        own_totals = _image_totals(own)
        vocab = {name: max(1, totals["vocab", name]) for name in ("n", "a", "r")}

        def n(key: Key) -> int:
            return counts.get(key, 0) - own.get(key, 0)

        def total(key: Key) -> int:
            return totals.get(key, 0) - own_totals.get(key, 0)

        def logp(hits: int, of: int, size: int) -> float:
            return math.log((max(hits, 0) + SMOOTHING) / (max(of, 0) + SMOOTHING * size))

        phrase_links: dict[tuple[str, str], tuple[str, list[float]]] = {}

        def phrase(noun: str, attribute: str) -> tuple[str, list[float]]:
            found = phrase_links.get((noun, attribute))
            if found is None:
                k = kind_of(noun)
                links = [logp(n(("n", k)), total(("objects",)), vocab["n"])]
                if attribute:
                    links.append(logp(n(("a", attribute, k)), n(("n", k)), vocab["a"]))
                found = phrase_links[noun, attribute] = (k, links)
            return found

        def score(caption: Caption) -> float:
            kinds, links = [], []
            for p in caption.phrases:
                k, own_links = phrase(p.noun, p.attribute)
                kinds.append(k)
                links += own_links
            if caption.shape == "relation":
                a, b = kinds
                links.append(logp(n(("s", a, caption.relation)), total(("out", a)), vocab["r"]))
                links.append(logp(n(("o", caption.relation, b)), total(("in", b)), vocab["r"]))
            elif caption.shape == "pair":
                a, b = sorted(kinds)
                both = n(("c", a, b))
                links.append((logp(both, n(("i", a)), vocab["n"]) + logp(both, n(("i", b)), vocab["n"])) / 2)
            return sum(links) / len(links)

        return score


def _image_totals(counts: Mapping[Key, int]) -> dict[Key, int]:
    """`_totals` of one image's counts, less the vocabulary sizes (a scorer takes those from the
    corpus alone): what each image's scorer subtracts, so it is kept to one pass."""
    totals: dict[Key, int] = {}
    get = totals.get
    for key, value in counts.items():
        head = key[0]
        if head == "n":
            total: Key = ("objects",)
        elif head == "s":
            total = ("out", key[1])
        elif head == "o":
            total = ("in", key[2])
        else:
            continue
        totals[total] = get(total, 0) + value
    return totals


def _totals(counts: Mapping[Key, int]) -> Counter[Key]:
    """Sums the probabilities are normalised by: objects, relations out of and into each kind,
    and the vocabulary sizes (kinds, attributes, relations)."""
    totals: Counter[Key] = Counter()
    seen: dict[str, set[str]] = {"n": set(), "a": set(), "r": set()}
    for key, value in counts.items():
        head = key[0]
        if head == "n":
            totals["objects",] += value
            seen["n"].add(key[1])
        elif head == "a":
            seen["a"].add(key[1])
        elif head == "s":
            totals["out", key[1]] += value
            seen["r"].add(key[2])
        elif head == "o":
            totals["in", key[2]] += value
    for name, values in seen.items():
        totals["vocab", name] = len(values)
    return totals
