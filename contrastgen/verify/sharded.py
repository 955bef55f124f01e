"""`contrastgen verify` of a contrast file in bounded memory, its shards on the pool or on Ray.

Why: held whole, a million questions' contrast set (`--mode both`: two million perturbations) and
GQA's graphs took 4-5.5 GiB in one process. Here nothing grows with the set but 8 bytes a key and
the report: the GQA graphs stream into a file first (`question_spill.GraphSpill`, each validated as
the whole-file loader validates it); then the records stream by once and are cut, as they come,
into shards of consecutive records over at most `SHARD_IMAGES` images (`generate` writes an
image's records together, so an image is indexed once; a file in another order costs only indexes
built again), each shard, with the graphs its records need (their images, and the second image of
each two-image group), one task of `parallel.tasks.map_tasks`, in this process, in forked workers
or on Ray, checked while the driver reads on. A shard sent to another process carries its records
as the lines they were read from, parsed there (cheaper to send and parse than the objects).

Every check is the in-memory path's (`checker.check_record`), so the report is the same bytes
whatever the workers: the failures are put back in file order. The checks that span the whole
file (a question given twice for a template, a perturbation id given twice) need every earlier
key: the shards check each record as if its keys were new, while the driver keeps one 8-byte hash
per key; at the end the hashes that clash name the few keys to compare (a second pass over the
file), and the records that repeat an earlier key are checked again, here, knowing it.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from contrastgen.datasets.clevr import is_clevr_scenes, load_scenes
from contrastgen.datasets.question_spill import SpilledGraphs, spill_scene_graphs
from contrastgen.files import scratch
from contrastgen.gc_policy import no_gc
from contrastgen.parallel.backend import LOCAL, Backend
from contrastgen.parallel.tasks import map_tasks
from contrastgen.records import Failure, VerifyReport, read_contrast_records
from contrastgen.verify.checker import (
    CHECKS,
    IndexCache,
    SeenInStream,
    check_record,
    identity_checked,
    image_of,
    record_key,
)
from contrastgen.verify.rules import VerifyRules

SHARD_IMAGES = 200  # images per shard: a few thousand perturbations, a second or two of one core
_RECORD = 0  # the index that stands for a record's own key among its perturbations' (1, 2, ...)


@dataclass(frozen=True)
class Repeats:
    """`checker.Seen` from the (record, perturbation) places whose key an earlier record gave,
    decided over the whole file."""

    places: frozenset[tuple[int, int]]

    def record_repeated(self, n: int, key: tuple[str, str]) -> bool:
        return (n, _RECORD) in self.places

    def perturbation_repeated(self, n: int, i: int, pid: str) -> bool:
        return (n, i) in self.places


_NO_REPEATS = Repeats(frozenset())  # what a shard assumes; the few records that do repeat are checked again


@dataclass
class ShardTask:
    """One shard: its records by place in the file (parsed, for a shard checked in this process;
    else the lines they were read from, parsed where the shard is checked), and the graphs they
    need (their JSON, parsed when looked up; CLEVR's scenes as they are)."""

    records: list[tuple[int, Any]]
    parsed: bool
    graphs: Mapping[str, Any]

    def take(self) -> Iterator[tuple[int, Any]]:
        """(place in the file, record) of each of the shard's records, which the task then no
        longer holds: the collection at the shard's end (`gc_policy.one_collection`) walks none."""
        records, self.records = self.records, []
        for n, record in records:
            yield n, record if self.parsed else orjson.loads(record)


@dataclass
class ShardChecked:
    records: int = 0
    perturbations: int = 0
    groups: int = 0
    failures: list[tuple[int, list[Failure]]] = field(default_factory=list)  # by place in the file


def check_shard(rules: VerifyRules, task: ShardTask) -> ShardChecked:
    """Every record of one shard checked, as `checker.verify_contrast_sets` checks it, each
    record's keys taken as new (`verify_contrast_file` checks again the few that are not)."""
    indexes = IndexCache(task.graphs)
    out = ShardChecked()
    for n, record in task.take():
        checked = check_record(n, record, indexes, rules, _NO_REPEATS)
        out.records += 1
        out.perturbations += checked.perturbations
        out.groups += checked.groups
        if checked.failures:
            out.failures.append((n, checked.failures))
    return out


def graphs_on_disk(path: Path, folder: Path) -> Mapping[str, Any]:
    """The graphs at `path` by image id, in memory that does not grow with them: GQA's spilled to
    `folder` (each validated as the whole-file loader validates it) and parsed when looked up,
    CLEVR's scenes (a few thousand) held."""
    if is_clevr_scenes(path):
        return load_scenes(path)
    with no_gc():  # the spill allocates only acyclic data: the collector's passes would be waste
        return spill_scene_graphs(path, folder)


class _Graphs:
    """The run's graphs by image id (`graphs_on_disk`)."""

    def __init__(self, path: Path, folder: Path):
        self.all = graphs_on_disk(path, folder)

    def __contains__(self, image_id: str) -> bool:
        return image_id in self.all

    def subset(self, image_ids: Iterable[str]) -> Mapping[str, Any]:
        """The graphs of some images (those there), for one shard."""
        if isinstance(self.all, SpilledGraphs):
            return self.all.subset(image_ids)
        return {i: self.all[i] for i in image_ids if i in self.all}


@dataclass
class _Keys:
    """The hashes of every key the whole-file checks compare, in file order."""

    records: array = field(default_factory=lambda: array("q"))
    perturbations: array = field(default_factory=lambda: array("q"))


def verify_contrast_file(lines: Iterable[tuple[bytes, Any]], path: Path, scene_graphs: Path, *,
                         rules: VerifyRules, backend: Backend = LOCAL, workers: int = 1,
                         advance: Callable[[int], None] = lambda n: None) -> VerifyReport:
    """The report of `checker.verify_contrast_sets` over the records of the contrast file at
    `path` (`lines`, its stream of (line, record): `records.read_contrast_lines`) and the graphs
    at `scene_graphs`, in memory that does not grow with the set."""
    in_process = backend.name != "ray" and workers <= 1
    with scratch.folder("verify-") as folder:
        graphs = _Graphs(scene_graphs, folder)
        keys = _Keys()
        report = VerifyReport(checked=0, check_order=CHECKS)
        by_place: dict[int, list[Failure]] = {}
        shards = _shards(lines, graphs, keys, in_process)
        for checked in map_tasks(check_shard, rules, shards, backend=backend, workers=workers, ordered=False,
                                 batch_gc=True):
            report.checked += checked.perturbations
            report.groups += checked.groups
            by_place.update(checked.failures)
            advance(checked.records)
        repeats, again = _repeated(keys, path, graphs)
        if again:  # records that repeat an earlier key, checked again knowing it
            indexes = IndexCache(graphs.all)
            for n, record in again.items():
                by_place[n] = check_record(n, record, indexes, rules, repeats).failures
    report.failures = [f for n in sorted(by_place) for f in by_place[n]]
    return report


def _shards(lines: Iterable[tuple[bytes, Any]], graphs: _Graphs, keys: _Keys, in_process: bool) -> Iterator[ShardTask]:
    """The records cut into shards of consecutive records over at most `SHARD_IMAGES` images (one
    with no graph, which none needs, joins the shard at hand), as they stream by; the hashes of
    their keys into `keys`."""
    records: list[tuple[int, Any]] = []
    own: set[str] = set()  # the images whose records the shard checks
    needed: set[str] = set()  # those and the second images of their groups

    def task() -> ShardTask:
        return ShardTask(records, in_process, graphs.subset(sorted(needed)))

    for n, (line, record) in enumerate(lines, 1):
        image = _graph_of(record, graphs)
        if image is not None and image not in own:
            if len(own) >= SHARD_IMAGES:
                full, records, own, needed = task(), [], set(), set()  # held here no longer while it is checked
                yield full
            own.add(image)
        if image is not None:
            needed.add(image)
            needed.update(_second_images(record))
        if _has_perturbations(record):
            keys.records.append(hash(record_key(record, n)))
            keys.perturbations.extend(hash(pid) for _, pid in identity_checked(record, image is not None))
        records.append((n, record if in_process else line))
    if records:
        yield task()


def _has_perturbations(record: Any) -> bool:
    perturbations = record.get("perturbations") if isinstance(record, dict) else None
    return isinstance(perturbations, list) and bool(perturbations)


def _graph_of(record: Any, graphs: _Graphs) -> str | None:
    """The image whose graph the record is checked on; None where it has none to check."""
    image = image_of(record) if _has_perturbations(record) else None
    return image if image is not None and image in graphs else None


def _second_images(record: dict[str, Any]) -> Iterator[str]:
    """The second image of each two-image group (`generate --groups`) of the record."""
    for p in record["perturbations"]:
        group = p.get("group") if isinstance(p, dict) else None
        images = group.get("images") if isinstance(group, dict) else None
        if isinstance(images, list) and len(images) >= 2:
            yield str(images[1])


def _clashes(hashes: array) -> set[int]:
    """The hashes given more than once."""
    ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
    return set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())


def _repeated(keys: _Keys, path: Path, graphs: _Graphs) -> tuple[Repeats, dict[int, Any]]:
    """The (record, perturbation) places whose key an earlier record gave, and the records at
    them by place: where hashes clash, the keys themselves, from a second pass over the file."""
    record_clashes, perturbation_clashes = _clashes(keys.records), _clashes(keys.perturbations)
    if not record_clashes and not perturbation_clashes:
        return _NO_REPEATS, {}
    seen, places, again = SeenInStream(), set(), {}
    for n, record in enumerate(read_contrast_records(path), 1):
        if not _has_perturbations(record):
            continue
        key = record_key(record, n)
        if hash(key) in record_clashes and seen.record_repeated(n, key):
            places.add((n, _RECORD))
            again[n] = record
        for i, pid in identity_checked(record, _graph_of(record, graphs) is not None):
            if hash(pid) in perturbation_clashes and seen.perturbation_repeated(n, i, pid):
                places.add((n, i))
                again[n] = record
    return Repeats(frozenset(places)), again
