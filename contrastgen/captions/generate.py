"""`contrastgen captions generate`: captions and their proven negatives for every graph of an input.

A run has two steps:
1. the graphs are read (GQA's file streamed into a temporary file, so the driver's memory does not
   grow with it; CLEVR's scenes whole, they are small) and counted for the corpus counts the
   plausibility scorer needs: per batch of images in the workers, summed, GQA's batches counted
   while the driver reads on;
2. per shard: each image's candidate pairs of every kind (`candidates`), scored by the corpus
   without the image's own counts (`plausibility`), one chosen per kind (`balance`), written as
   records (`records`), each shard's written as it comes back.
Shards run in worker processes (`parallel.tasks.map_tasks`), come back in input order and are
fixed by the input, not the number of workers: the same input and seed give the same bytes.
"""

from __future__ import annotations

import random
import shutil
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from contrastgen.captions import blind
from contrastgen.captions.balance import Balancer, Scored
from contrastgen.captions.candidates import (
    KINDS,
    MATCHED,
    SUGARCREPE,
    Candidate,
    ImageCandidates,
    NounPool,
)
from contrastgen.captions.caption import Caption, caption_text
from contrastgen.captions.domain import Domain, load_domain
from contrastgen.captions.plausibility import CorpusCounts, Plausibility, count_graph
from contrastgen.captions.records import caption_record
from contrastgen.datasets.clevr import is_clevr_scenes, load_scenes
from contrastgen.datasets.question_spill import GraphSlice, GraphSpill, read_graph_slices
from contrastgen.errors import InputError
from contrastgen.files import scratch
from contrastgen.files.atomic import atomic_dir
from contrastgen.files.manifest import CAPTION_SET, write_manifest
from contrastgen.gc_policy import no_gc
from contrastgen.jsonio import dumps
from contrastgen.language.lexicon import Lexicon
from contrastgen.parallel.backend import default_workers
from contrastgen.parallel.tasks import map_tasks
from contrastgen.records import CAPTIONS_FILE
from contrastgen.terminal.progress import progress as progress_bar

SHARD_IMAGES = 256  # images per unit of work; fixed, so the choice does not depend on the workers
# Images per unit of counting. Each unit's counts come back as 10^5 keys or more, which the
# driver adds up one by one while it reads, so units are few and large; any size gives the same sums.
COUNT_IMAGES = 8192
STATS_FILE = "stats.json"
MAX_ABSENCE_BOOST = 20.0


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
    pairs_seen: list[blind.BlindPair] = field(default_factory=list)  # every pair written, for the blind check
    verdicts: dict[str, blind.KindVerdict] = field(default_factory=dict)  # kind -> the blind check's verdict

    def add(self, other: CaptionStats) -> None:
        offset = self.records
        if offset:  # the shard's record numbers, from its first line in the file
            self.pairs_seen.extend([p._replace(record=p.record + offset) for p in other.pairs_seen])
        else:
            self.pairs_seen.extend(other.pairs_seen)
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
                                     if p.split(" ", 1)[0] == k},
                          "blind_check": self.verdicts[k].as_dict() if k in self.verdicts else None}
                      for k in kinds},
            "blind_check": {"enforced": options.balanced, "target": blind.TARGET,
                            "refused": [v.refused for v in self.verdicts.values() if v.refused]},
        }

    def leave_out(self, verdicts: Mapping[str, blind.KindVerdict]) -> set[str]:
        """Take the pairs the blind check leaves out off the counts; their negative ids."""
        self.verdicts = dict(verdicts)
        gone: set[str] = set()
        for verdict in verdicts.values():
            for p in verdict.left_out:
                gone.add(p.negative_id)
                self.pairs[p.kind] -= 1
                self.proofs[f"{p.kind} {p.proof}"] -= 1
                self.scorer_right[p.kind] -= p.plausibility_pick
            if verdict.left_out:
                self.images_with[verdict.kind] = len({p.image_id for p in self.pairs_seen
                                                      if p.kind == verdict.kind and p.negative_id not in gone})
        self.proofs = +self.proofs
        return gone


@dataclass
class _State:
    """What every worker needs, made once in the driver (forked workers share it)."""

    domain: Domain
    graphs: Mapping[str, Any]
    options: CaptionOptions
    plausibility: Plausibility | None = None
    pool: NounPool | None = None


def read_graphs(path: Path, folder: Path, domain: Domain, workers: int) -> tuple[Mapping[str, Any], Plausibility]:
    """(the graphs by image id, the corpus counts): CLEVR scenes in memory, GQA graphs spilled to
    `folder`. GQA's graphs are counted by the workers while the driver is still reading the rest
    of the file (`GraphSpill` gives them out in batches as they land), so the reading, one
    process's work, does not leave the other cores idle."""
    if domain.name == "clevr":
        graphs = load_scenes(path)
        return graphs, count_corpus(domain, graphs, workers)
    spill = GraphSpill(path, folder)
    with no_gc():
        plausibility = Plausibility.fit(map_tasks(_count_slices, _Counting(domain, spill.out_path),
                                                  spill.batches(COUNT_IMAGES), workers=workers, ordered=False))
    return spill.graphs(), plausibility


def count_corpus(domain: Domain, graphs: Mapping[str, Any], workers: int) -> Plausibility:
    """The corpus counts of graphs in memory."""
    state = _State(domain, graphs, CaptionOptions())
    with no_gc():
        return Plausibility.fit(map_tasks(_count_shard, state, _shards(list(graphs), COUNT_IMAGES), workers=workers))


def generate_captions(scene_graphs: Path, out: Path, options: CaptionOptions, *,
                      workers: int | None = None, progress: bool = False) -> CaptionStats:
    """Write `out/captions.jsonl` and `out/stats.json` (the directory replaced atomically)."""
    workers = default_workers() if workers is None else max(1, workers)
    domain = load_domain("clevr" if is_clevr_scenes(scene_graphs) else "gqa")
    folder = scratch.make_dir("captions-")
    try:
        with scratch.writing(folder):
            graphs, plausibility = read_graphs(scene_graphs, folder, domain, workers)
        if not graphs:
            raise InputError("no scene graphs to caption")
        with atomic_dir(out) as tmp:
            with (tmp / CAPTIONS_FILE).open("wb") as fh:
                stats = write_captions(fh, domain, graphs, options, plausibility, workers=workers,
                                       progress=progress)
            if options.balanced:
                enforce_blind_check(tmp / CAPTIONS_FILE, stats, options, workers=workers)
            stats.pairs_seen = []
            (tmp / STATS_FILE).write_bytes(dumps(stats.as_dict(options), indent=True))
            write_manifest(tmp, CAPTION_SET, "contrastgen captions generate")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return stats


def write_captions(fh: BinaryIO, domain: Domain, graphs: Mapping[str, Any], options: CaptionOptions,
                   plausibility: Plausibility, *, workers: int = 1, progress: bool = False) -> CaptionStats:
    """Every shard's records as JSON lines into `fh`, in input order, and the run's counts; with
    `progress`, a bar (on a terminal) advanced here, per image, as each shard comes back."""
    state = _State(domain, graphs, options, plausibility, noun_pool(plausibility, domain))
    stats = CaptionStats()
    # The collector stays paused for the whole pass (forked workers inherit the pause): a caption
    # shard makes no reference cycles (tests/captions/test_captions_generate.py holds it to that),
    # so each collection would only walk the workers' caches and free nothing.
    shards = _shards(list(graphs), SHARD_IMAGES)
    with no_gc(), progress_bar("captioning", len(graphs), enabled=progress) as advance:
        for shard, (chunk, shard_stats) in zip(shards, map_tasks(_caption_shard, state, shards, workers=workers),
                                               strict=True):
            fh.write(chunk)
            stats.add(shard_stats)
            advance(len(shard))
    return stats


def enforce_blind_check(path: Path, stats: CaptionStats, options: CaptionOptions, *, workers: int = 1) -> None:
    """Measure every kind written to `path` with the blind models (`blind`) and leave out what
    they say must go: `path` is rewritten without those negatives (a caption left with none is
    left out too), and `stats` counts what stays. Only the records that lose a negative are read
    back; the others are copied as they were written. The kinds are judged by `workers` processes."""
    verdicts = blind.check(stats.pairs_seen, options.kinds, workers=workers)
    gone = stats.leave_out(verdicts)
    if not gone:
        return
    touched = {p.record for v in verdicts.values() for p in v.left_out}
    kept_path = path.with_name(path.name + ".kept")
    records = 0
    with path.open("rb") as src, kept_path.open("wb") as dst:
        for n, line in enumerate(src):
            if n not in touched:
                dst.write(line)
                records += 1
                continue
            record = orjson.loads(line)  # our own line, written above
            record["negatives"] = [x for x in record["negatives"] if x["id"] not in gone]
            if record["negatives"]:
                dst.write(dumps(record))
                records += 1
    kept_path.replace(path)
    stats.records = records


def _shards(ids: list[str], size: int) -> list[list[str]]:
    return [ids[i:i + size] for i in range(0, len(ids), size)]


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


def _scoring(score: Callable[[Caption], float], lex: Lexicon) -> Callable[[Candidate], Scored]:
    """A candidate as the balancing reads it, each caption's words and plausibility worked out
    once for one image: a positive recurs across its candidates and its kinds."""
    said: dict[Caption, tuple[str, float]] = {}

    def scored(c: Candidate) -> Scored:
        positive = said.get(c.positive)
        if positive is None:
            positive = said[c.positive] = (caption_text(c.positive, lex), score(c.positive))
        negative = said.get(c.negative)
        if negative is None:
            negative = said[c.negative] = (caption_text(c.negative, lex), score(c.negative))
        return Scored(c, positive[0], negative[0], positive[1], negative[1])

    return scored


def _count_shard(state: _State, image_ids: list[str]) -> CorpusCounts:
    counts = CorpusCounts()
    for image_id in image_ids:
        counts.add(state.graphs[image_id], state.domain.graph_kind)
    return counts


@dataclass
class _Counting:
    """What a worker counting spilled graphs needs: the domain (the kind each object name is) and the spill's file."""

    domain: Domain
    store: Path


def _count_slices(state: _Counting, slices: list[GraphSlice]) -> CorpusCounts:
    counts = CorpusCounts()
    for graph in read_graph_slices(state.store, slices):
        counts.add(graph, state.domain.graph_kind)
    return counts


def _caption_shard(state: _State, image_ids: list[str]) -> tuple[bytes, CaptionStats]:
    assert state.plausibility is not None and state.pool is not None
    domain, options, lex = state.domain, state.options, state.domain.lex
    balancer = Balancer(balanced=options.balanced, per_image=options.per_image)
    stats = CaptionStats()
    out = bytearray()
    for image_id in image_ids:
        graph = state.graphs[image_id]
        world = domain.world(image_id, graph)
        scoring = _scoring(state.plausibility.scorer(count_graph(graph, domain.graph_kind), domain.kind_of), lex)
        image = ImageCandidates(world, domain, state.pool, random.Random(f"{options.seed}:{image_id}"),
                               add_form=options.adds)
        choice = random.Random(f"{options.seed}:{image_id}:choice")
        by_positive: dict[Any, list[tuple[Any, float, float]]] = {}
        stats.images += 1
        for kind in options.kinds:
            chosen = balancer.choose(kind, map(scoring, image.drawn(kind)), choice,
                                     max(options.candidates, options.per_image))
            if not chosen:
                continue
            stats.images_with[kind] += 1
            for s in chosen:
                c = s.candidate
                by_positive.setdefault(c.positive, []).append(
                    (c, s.positive_plausibility, s.negative_plausibility))
                stats.pairs[kind] += 1
                stats.proofs[f"{kind} {c.proof.kind}"] += 1
                stats.scorer_right[kind] += (s.scorer_verdict + 1) / 2
        for chosen in by_positive.values():
            record = caption_record(image_id, world, lex, chosen)
            for negative in record["negatives"]:  # as an outside reader of the file sees them
                stats.pairs_seen.append(blind.BlindPair(
                    negative["kind"], image_id, stats.records, negative["id"], record["caption"], negative["caption"],
                    record["plausibility"], negative["plausibility"], negative["evidence"]["proof"]))
            out += dumps(record)
            stats.records += 1
    return bytes(out), stats
