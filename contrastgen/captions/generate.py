"""`contrastgen captions generate`: captions and their proven negatives for every graph of an input.

A run has three steps:
1. the graphs are read (GQA's file streamed into a temporary file, so the driver's memory does not
   grow with it; CLEVR's scenes whole, they are small);
2. the corpus counts the plausibility scorer needs, per shard of images, summed;
3. per shard: each image's candidate pairs of every kind (`candidates`), scored by the corpus
   without the image's own counts (`plausibility`), one chosen per kind (`balance`), written as
   records (`records`).
Shards run in worker processes (`parallel.tasks.map_tasks`), come back in input order and are
fixed by the input, not the number of workers: the same input and seed give the same bytes.
"""

from __future__ import annotations

import functools
import random
import shutil
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from contrastgen.captions.balance import Balancer, Scored
from contrastgen.captions.candidates import KINDS, MATCHED, SUGARCREPE, ImageCandidates, NounPool
from contrastgen.captions.caption import Caption, caption_text
from contrastgen.captions.domain import Domain, load_domain
from contrastgen.captions.plausibility import Plausibility, count_graph
from contrastgen.captions.records import caption_record
from contrastgen.collector import no_gc, one_collection
from contrastgen.datasets.clevr import is_clevr_scenes, load_scenes
from contrastgen.datasets.question_spill import spill_scene_graphs
from contrastgen.errors import InputError
from contrastgen.files import scratch
from contrastgen.files.atomic import atomic_dir
from contrastgen.jsonio import dumps
from contrastgen.parallel.backend import default_workers
from contrastgen.parallel.tasks import map_tasks
from contrastgen.records import CAPTIONS_FILE

SHARD_IMAGES = 256  # images per unit of work; fixed, so the choice does not depend on the workers
STATS_FILE = "stats.json"
MAX_ABSENCE_BOOST = 20.0
T = TypeVar("T")


@dataclass(frozen=True)
class CaptionOptions:
    per_image: int = 1  # pairs per kind and image
    candidates: int = 3  # candidate pairs an image offers the balancing, per kind
    balanced: bool = True
    seed: int = 0
    kinds: tuple[str, ...] = KINDS
    add_form: str | None = None  # `candidates.ADD_FORMS`; None: matched when balanced, SugarCrepe's when not

    @property
    def adds(self) -> str:
        """The form of add_obj and add_att pairs: unbalanced output is SugarCrepe's benchmark as
        defined, the "before" a balanced set is compared with."""
        return self.add_form or (MATCHED if self.balanced else SUGARCREPE)


@dataclass
class CaptionStats:
    images: int = 0
    records: int = 0
    pairs: Counter[str] = field(default_factory=Counter)  # kind -> pairs written
    images_with: Counter[str] = field(default_factory=Counter)  # kind -> images that had a candidate
    proofs: Counter[str] = field(default_factory=Counter)  # "kind proof" -> pairs
    scorer_right: Counter[str] = field(default_factory=Counter)  # kind -> pairs the scorer picks right (ties: half)

    def add(self, other: CaptionStats) -> None:
        self.images += other.images
        self.records += other.records
        for mine, theirs in ((self.pairs, other.pairs), (self.images_with, other.images_with),
                             (self.proofs, other.proofs), (self.scorer_right, other.scorer_right)):
            mine.update(theirs)

    def as_dict(self, options: CaptionOptions) -> dict[str, Any]:
        kinds = [k for k in KINDS if k in options.kinds]
        return {
            "images": self.images, "records": self.records, "balanced": options.balanced,
            "per_image": options.per_image, "seed": options.seed, "add_form": options.adds,
            "kinds": {k: {"pairs": self.pairs[k], "images_with_a_candidate": self.images_with[k],
                          "images_without": self.images - self.images_with[k],
                          "scorer_picks_positive": round(self.scorer_right[k] / self.pairs[k], 4) if self.pairs[k] else None,
                          "proofs": {p.split(" ", 1)[1]: n for p, n in sorted(self.proofs.items())
                                     if p.split(" ", 1)[0] == k}}
                      for k in kinds},
        }


@dataclass
class _State:
    """What every worker needs, made once in the driver (forked workers share it)."""

    domain: Domain
    graphs: Mapping[str, Any]
    options: CaptionOptions
    plausibility: Plausibility | None = None
    pool: NounPool | None = None


def read_graphs(path: Path, folder: Path) -> tuple[str, Mapping[str, Any]]:
    """(the family, the graphs by image id): CLEVR scenes in memory, GQA graphs spilled to `folder`."""
    if is_clevr_scenes(path):
        return "clevr", load_scenes(path)
    graphs = spill_scene_graphs(path, folder)
    return "gqa", graphs


def generate_captions(scene_graphs: Path, out: Path, options: CaptionOptions, *,
                      workers: int | None = None) -> CaptionStats:
    """Write `out/captions.jsonl` and `out/stats.json` (the directory replaced atomically)."""
    workers = default_workers() if workers is None else max(1, workers)
    folder = scratch.make_dir("captions-")
    try:
        with no_gc(), scratch.writing(folder):
            family, graphs = read_graphs(scene_graphs, folder)
        chunks, stats = caption_chunks(family, graphs, options, workers=workers)
        with atomic_dir(out) as tmp:
            with (tmp / CAPTIONS_FILE).open("wb") as fh:
                fh.writelines(chunks)
            (tmp / STATS_FILE).write_bytes(dumps(stats.as_dict(options), indent=True))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return stats


def caption_chunks(family: str, graphs: Mapping[str, Any], options: CaptionOptions, *,
                   workers: int = 1) -> tuple[list[bytes], CaptionStats]:
    """Every shard's records as JSON lines, in input order, and the run's counts."""
    if not graphs:
        raise InputError("no scene graphs to caption")
    domain = load_domain(family)
    state = _State(domain, graphs, options)
    ids = list(graphs)
    shards = [ids[i:i + SHARD_IMAGES] for i in range(0, len(ids), SHARD_IMAGES)]
    state.plausibility = Plausibility.fit(map_tasks(_count_shard, state, shards, workers=workers))
    state.pool = noun_pool(state.plausibility, domain)
    stats = CaptionStats()
    chunks = []
    for chunk, shard_stats in map_tasks(_caption_shard, state, shards, workers=workers):
        chunks.append(chunk)
        stats.add(shard_stats)
    return chunks, stats


def noun_pool(plausibility: Plausibility, domain: Domain) -> NounPool:
    """The corpus's nouns, most frequent first (ties by name), weighted so that the nouns a
    negative adds or puts in a noun's place come out about as often as positives say them.

    A noun can be a negative's only where no object the noun may denote is there, so a noun is
    drawn with its object count divided by the share of images without any of the kinds it may
    denote (taken as independent; at most `MAX_ABSENCE_BOOST` times its count). Without that,
    "woman", which may be any adult or player, would hardly ever be a negative's noun, and a
    text-only classifier would learn that people nouns are true."""
    counts = plausibility.counts
    images = max(1, counts.get(("images",), 0))
    weighted = []
    for key, n in counts.items():
        if key[0] != "n":
            continue
        absent = 1.0
        for kind in domain.may_kinds(domain.noun_of(key[1])):
            absent *= 1.0 - counts.get(("i", kind), 0) / images
        weighted.append((key[1], n, n / max(absent, 1.0 / MAX_ABSENCE_BOOST)))
    nouns, cum, total = [], [], 0.0
    for kind, _, weight in sorted(weighted, key=lambda kw: (-kw[1], kw[0])):
        total += weight
        nouns.append(domain.noun_of(kind))
        cum.append(total)
    return NounPool(tuple(nouns), tuple(cum))


def _memo(fn: Callable[[Caption], T]) -> Callable[[Caption], T]:
    """`fn` remembered per caption for one image: a positive recurs across its candidates."""
    seen: dict[Caption, T] = {}

    def call(caption: Caption) -> T:
        found = seen.get(caption)
        if found is None:
            found = seen[caption] = fn(caption)
        return found

    return call


def _count_shard(state: _State, image_ids: list[str]) -> Counter:
    counts: Counter = Counter()
    with one_collection():
        for image_id in image_ids:
            counts.update(count_graph(state.graphs[image_id], state.domain.graph_kind))
    return counts


def _caption_shard(state: _State, image_ids: list[str]) -> tuple[bytes, CaptionStats]:
    assert state.plausibility is not None and state.pool is not None
    domain, options = state.domain, state.options
    balancer = Balancer(balanced=options.balanced, per_image=options.per_image)
    stats = CaptionStats()
    out = bytearray()
    with one_collection():
        for image_id in image_ids:
            graph = state.graphs[image_id]
            world = domain.world(image_id, graph)
            score = _memo(state.plausibility.scorer(count_graph(graph, domain.graph_kind), domain.kind_of))
            text = _memo(functools.partial(caption_text, lex=domain.lex))
            image = ImageCandidates(world, domain, state.pool, random.Random(f"{options.seed}:{image_id}"),
                                   add_form=options.adds)
            choice = random.Random(f"{options.seed}:{image_id}:choice")
            by_positive: dict[Any, list[tuple[Any, float, float]]] = {}
            stats.images += 1
            for kind in options.kinds:
                found = image.of_kind(kind, max(options.candidates, options.per_image))
                if not found:
                    continue
                stats.images_with[kind] += 1
                scored = [Scored(c, text(c.positive), text(c.negative), score(c.positive), score(c.negative))
                          for c in found]
                for s in balancer.choose(kind, scored, choice):
                    c = s.candidate
                    by_positive.setdefault(c.positive, []).append(
                        (c, s.positive_plausibility, s.negative_plausibility))
                    stats.pairs[kind] += 1
                    stats.proofs[f"{kind} {c.proof.kind}"] += 1
                    stats.scorer_right[kind] += (s.scorer_verdict + 1) / 2
            for chosen in by_positive.values():
                out += dumps(caption_record(image_id, world, domain.lex, chosen))
                stats.records += 1
    return bytes(out), stats
