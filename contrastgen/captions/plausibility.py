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
                into: Counter[Key] | None = None) -> Counter[Key]:
    """The counts one image contributes, from its graph as given: objects per kind, attributes
    per kind, relations from and to each kind, and (once per image) each kind; added to `into`
    where given (a batch's counts summed in place, never copied). Which pairs of kinds are in one
    image is not a count here: `CorpusCounts` keeps it as each kind's set of images (an image's
    pairs are a hundred keys, more than all its other counts together), and a scorer asks its own
    image's pairs of the `("i", kind)` counts. Read straight from the graph (no index is built):
    it runs once per image before any caption is made, and again for each image's own counts. The
    keys are listed and then counted at once (`Counter.update` counts an iterable in C): a graph
    has hundreds of them."""
    counts: Counter[Key] = Counter() if into is None else into
    _count(graph, kind_of, counts)
    return counts


def _count(graph: Mapping[str, Any], kind_of: Callable[[str], str], counts: Counter[Key]) -> set[str]:
    """`count_graph` into `counts`; the image's kinds."""
    objects = graph["objects"]
    kind = {oid: kind_of(str(o["name"]).strip().lower()) for oid, o in objects.items()}
    keys: list[Key] = []
    add = keys.append
    for oid, o in objects.items():
        k = kind[oid]
        add(("n", k))
        attributes = o.get("attributes")
        if attributes:
            keys.extend([("a", a.strip().lower(), k) for a in attributes])
        for r in o.get("relations") or ():
            other = kind.get(str(r["object"]))
            if other is not None:
                name = r["name"].strip().lower()
                add(("s", k, name))
                add(("o", name, other))
    kinds = set(kind.values())
    keys.extend([("i", a) for a in kinds])
    add(("images",))
    counts.update(keys)
    return kinds


@dataclass
class CorpusCounts:
    """The counts of a batch of images (`count_graph`'s, summed) and, for each kind, the images
    of the batch that have an object of it (their places in the batch): how many images have both
    of two kinds is then counted from the two kinds' images when a caption asks, where listing
    every pair of kinds of every image cost most of the counting and of the corpus's keys."""

    counts: Counter[Key] = field(default_factory=Counter)
    present: dict[str, list[int]] = field(default_factory=dict)  # kind -> the images with it
    images: int = 0  # images counted

    def add(self, graph: Mapping[str, Any], kind_of: Callable[[str], str]) -> None:
        image, present = self.images, self.present
        for kind in _count(graph, kind_of, self.counts):
            found = present.get(kind)
            if found is None:
                present[kind] = [image]
            else:
                found.append(image)
        self.images += 1


# A kind in at least one image in DENSE of the corpus keeps its images as the bits of an int (one
# bit an image: no bigger than the list it replaces, and two kinds' common images are one AND);
# a rarer kind as a set, so that a corpus of many rare kinds takes memory in step with its size.
DENSE = 32
# A rare kind in at least one image in AS_BITS is counted against others as bits too, made from its
# set in the process that asks, once: its bits take no more memory than its set (some 60 bytes an
# image), and an AND replaces a walk over its images for every pair it is asked with.
AS_BITS = 480


@dataclass
class Plausibility:
    """The corpus counts, with the totals the probabilities are normalised by, and each kind's
    images over the whole corpus (bits or a set, by how common the kind is: `DENSE`)."""

    counts: Counter[Key]
    totals: Counter[Key] = field(default_factory=Counter)
    present: dict[str, int | frozenset[int]] = field(default_factory=dict)
    _together: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    _bytes: dict[str, bytes] = field(default_factory=dict, repr=False)
    _rare_bits: dict[str, int] = field(default_factory=dict, repr=False)  # `_as_bits`, once asked

    @classmethod
    def fit(cls, parts: Iterable[CorpusCounts]) -> Plausibility:
        """The corpus from its batches, taken in any order (each batch's images are given places
        of their own)."""
        counts: Counter[Key] = Counter()
        images: dict[str, list[int]] = {}
        offset = 0
        for part in parts:
            counts.update(part.counts)
            for kind, local in part.present.items():
                found = images.get(kind)
                if found is None:
                    found = images[kind] = []
                found.extend([i + offset for i in local] if offset else local)
            offset += part.images
        present: dict[str, int | frozenset[int]] = {}
        for kind, where in images.items():
            if len(where) * DENSE >= offset:
                bits = bytearray((offset + 7) // 8)
                for i in where:
                    bits[i >> 3] |= 1 << (i & 7)
                present[kind] = int.from_bytes(bits, "little")
            else:
                present[kind] = frozenset(where)
        return cls(counts, _totals(counts), present)

    @classmethod
    def of_graphs(cls, graphs: Iterable[Mapping[str, Any]], kind_of: Callable[[str], str]) -> Plausibility:
        """The corpus of graphs in memory, counted here."""
        part = CorpusCounts()
        for graph in graphs:
            part.add(graph, kind_of)
        return cls.fit([part])

    def together(self, a: str, b: str) -> int:
        """How many images of the corpus have an object of kind `a` and one of kind `b` (a != b);
        remembered, as a run asks of the same pairs over and over."""
        found = self._together.get((a, b))
        if found is None:
            found = self._together[a, b] = self._count_together(a, b)
        return found

    def _count_together(self, a: str, b: str) -> int:
        x, y = self._as_bits(a), self._as_bits(b)
        if x is None or y is None:
            return 0
        if isinstance(x, int) and isinstance(y, int):
            return (x & y).bit_count()
        if isinstance(x, frozenset) and isinstance(y, frozenset):
            return len(x & y)
        (rare, dense), common = ((x, y), b) if isinstance(x, frozenset) else ((y, x), a)
        assert isinstance(rare, frozenset) and isinstance(dense, int)
        bits = self._bytes.get(common)
        if bits is None:
            bits = self._bytes[common] = dense.to_bytes((dense.bit_length() + 7) // 8, "little")
        size = len(bits)
        return sum(1 for i in rare if i >> 3 < size and bits[i >> 3] >> (i & 7) & 1)

    def _as_bits(self, kind: str) -> int | frozenset[int] | None:
        """The kind's images, as bits where it is common or not much rarer (`AS_BITS`), else its set."""
        found = self.present.get(kind)
        if not isinstance(found, frozenset) or len(found) * AS_BITS < self.counts.get(("images",), 0):
            return found
        bits = self._rare_bits.get(kind)
        if bits is None:
            array = bytearray((max(found) >> 3) + 1)
            for i in found:
                array[i >> 3] |= 1 << (i & 7)
            bits = self._rare_bits[kind] = int.from_bytes(array, "little")
        return bits

    def scorer(self, own: Mapping[Key, int], kind_of: Callable[[str], str]) -> Callable[[Caption], float]:
        """A scorer of one image's captions: the corpus counts less `own`, that image's."""
        counts, totals = self.counts, self.totals
        own_totals = _image_totals(own)
        vocab = {name: max(1, totals["vocab", name]) for name in ("n", "a", "r")}

        count, own_count = counts.get, own.get  # bound once: a run scores millions of links
        together = self.together
        n_size, a_size, r_size = vocab["n"], vocab["a"], vocab["r"]

        def n(key: Key) -> int:
            return count(key, 0) - own_count(key, 0)

        def total(key: Key) -> int:
            return totals.get(key, 0) - own_totals.get(key, 0)

        def logp(hits: int, of: int, size: int) -> float:
            return math.log((max(hits, 0) + SMOOTHING) / (max(of, 0) + SMOOTHING * size))

        objects = total(("objects",))
        phrase_links: dict[tuple[str, str], tuple[str, list[float]]] = {}

        def phrase(noun: str, attribute: str) -> tuple[str, list[float]]:
            found = phrase_links.get((noun, attribute))
            if found is None:
                k = kind_of(noun)
                of_kind = n(("n", k))
                links = [logp(of_kind, objects, n_size)]
                if attribute:
                    links.append(logp(n(("a", attribute, k)), of_kind, a_size))
                found = phrase_links[noun, attribute] = (k, links)
            return found

        def score(caption: Caption) -> float:
            phrases = caption.phrases
            first, links = phrase(phrases[0].noun, phrases[0].attribute)
            if len(phrases) == 1:
                return sum(links) / len(links)
            second, more = phrase(phrases[1].noun, phrases[1].attribute)
            links = links + more
            if caption.shape == "relation":
                relation = caption.relation
                links.append(logp(n(("s", first, relation)), total(("out", first)), r_size))
                links.append(logp(n(("o", relation, second)), total(("in", second)), r_size))
            elif caption.shape == "pair":
                a, b = (first, second) if first <= second else (second, first)
                # an image counts once for a pair of two different kinds it has both of
                both = 0 if a == b else together(a, b) - min(own_count(("i", a), 0), own_count(("i", b), 0))
                links.append((logp(both, n(("i", a)), n_size) + logp(both, n(("i", b)), n_size)) / 2)
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
