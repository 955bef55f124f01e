"""`contrastgen verify` of a contrast file in bounded memory, its shards on the pool or on Ray.

Why: held whole, a million questions' contrast set (`--mode both`: two million perturbations) and
GQA's graphs took 4-5.5 GiB in one process. Here nothing grows with the set but the report: the
records stream by once and are spilled to a file in shards of images (an image's shard is fixed
when it first appears), as `generate` spills its questions; the GQA graphs stream into a file of
their own (`question_spill.GraphSpill`, each validated as the whole-file loader validates it);
each shard's records and the graphs they need (their images, and the second image of each
two-image group) are read back and checked by one task of `parallel.tasks.map_tasks`, in this
process, in forked workers or on Ray.

Every check is the in-memory path's (`checker.check_record`), so the report is the same bytes
whatever the workers: the failures are put back in file order, and the checks that span the
whole file (a question given twice for a template, a perturbation id given twice) are decided
before any shard runs, from one 8-byte hash per key (a second pass over the file names the few
whose hashes clash), so each shard knows which of its records repeat an earlier one.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from contrastgen.datasets.clevr import is_clevr_scenes, load_scenes
from contrastgen.datasets.packing import append_frame, read_frames
from contrastgen.datasets.question_spill import OffsetFile, SpilledGraphs, spill_scene_graphs
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
_FLUSH = 256 << 10  # a shard's spilled records are written out once its buffer holds this much
_RECORD = 0  # the index that stands for a record's own key among its perturbations' (1, 2, ...)


@dataclass(frozen=True)
class Repeats:
    """`checker.Seen` for one shard: the (record, perturbation) places whose key an earlier
    record gave, decided over the whole file before the shards run."""

    places: frozenset[tuple[int, int]]

    def record_repeated(self, n: int, key: tuple[str, str]) -> bool:
        return (n, _RECORD) in self.places

    def perturbation_repeated(self, n: int, i: int, pid: str) -> bool:
        return (n, i) in self.places


@dataclass(frozen=True)
class ShardTask:
    """One shard: its records as frames of (place in the file, record), and the graphs they need
    (their JSON, parsed when looked up; CLEVR's scenes as they are)."""

    records: bytes
    graphs: Mapping[str, Any]


@dataclass
class ShardChecked:
    records: int = 0
    perturbations: int = 0
    groups: int = 0
    failures: list[tuple[int, list[Failure]]] = field(default_factory=list)  # by place in the file


@dataclass(frozen=True)
class ShardState:
    rules: VerifyRules
    repeats: Repeats


def check_shard(state: ShardState, task: ShardTask) -> ShardChecked:
    """Every record of one shard checked, as `checker.verify_contrast_sets` checks it."""
    indexes = IndexCache(task.graphs)
    out = ShardChecked()
    for n, record in read_frames(task.records):
        checked = check_record(n, record, indexes, state.rules, state.repeats)
        out.records += 1
        out.perturbations += checked.perturbations
        out.groups += checked.groups
        if checked.failures:
            out.failures.append((n, checked.failures))
    return out


class _Graphs:
    """The run's graphs by image id: GQA's spilled to a file (each validated as the whole-file
    loader validates it), CLEVR's scenes (a few thousand) held."""

    def __init__(self, path: Path, folder: Path):
        self._all: Mapping[str, Any] = load_scenes(path) if is_clevr_scenes(path) else spill_scene_graphs(path, folder)

    def __contains__(self, image_id: str) -> bool:
        return image_id in self._all

    def subset(self, image_ids: Iterable[str]) -> Mapping[str, Any]:
        """The graphs of some images (those there), for one shard."""
        if isinstance(self._all, SpilledGraphs):
            return self._all.subset(image_ids)
        return {i: self._all[i] for i in image_ids if i in self._all}


@dataclass
class _Spill:
    """The records streamed into shards of images on disk, with the hashes of the keys the
    whole-file checks compare."""

    store: OffsetFile
    chunks: list[list[tuple[int, int]]] = field(default_factory=list)  # per shard, (offset, length)
    images: list[set[str]] = field(default_factory=list)  # per shard, the graphs its records need
    record_hashes: array = field(default_factory=lambda: array("q"))
    perturbation_hashes: array = field(default_factory=lambda: array("q"))


def verify_contrast_file(records: Iterable[Any], path: Path, scene_graphs: Path, *, rules: VerifyRules,
                         backend: Backend = LOCAL, workers: int = 1,
                         advance: Callable[[int], None] = lambda n: None) -> VerifyReport:
    """The report of `checker.verify_contrast_sets` over the records of the contrast file at
    `path` (`records`, its stream) and the graphs at `scene_graphs`, in memory that does not grow
    with the set."""
    with scratch.folder("verify-") as folder:
        with no_gc():  # the spill allocates only acyclic data: the collector's passes would be waste
            graphs = _Graphs(scene_graphs, folder)
            spill = _spill_records(records, graphs, folder)
        state = ShardState(rules, Repeats(_repeated_places(spill, path, graphs)))
        report = VerifyReport(checked=0, check_order=CHECKS)
        by_place: list[tuple[int, list[Failure]]] = []
        for checked in map_tasks(check_shard, state, _tasks(spill, graphs), backend=backend, workers=workers,
                                 ordered=False, batch_gc=True):
            report.checked += checked.perturbations
            report.groups += checked.groups
            by_place += checked.failures
            advance(checked.records)
    by_place.sort(key=lambda item: item[0])
    report.failures = [f for _, failures in by_place for f in failures]
    return report


def _spill_records(records: Iterable[Any], graphs: _Graphs, folder: Path) -> _Spill:
    """Each record into its image's shard, as a frame (one with no graph, which none needs, into
    the latest shard); the hashes of every key the whole-file checks compare."""
    spill = _Spill(OffsetFile(folder / "records.bin"))
    shard_of: dict[str, int] = {}
    buffers: list[bytearray] = []
    with spill.store.path.open("wb") as fh:
        def flush(s: int) -> None:
            spill.chunks[s].append((fh.tell(), len(buffers[s])))
            fh.write(buffers[s])
            buffers[s].clear()

        def shard(image: str | None) -> int:
            s = shard_of.get(image) if image is not None else max(len(buffers) - 1, 0)
            if s is None:
                s = shard_of[image] = len(shard_of) // SHARD_IMAGES
            if s == len(buffers):
                buffers.append(bytearray())
                spill.chunks.append([])
                spill.images.append(set())
            return s

        for n, record in enumerate(records, 1):
            image = _graph_of(record, graphs)
            s = shard(image)
            if image is not None:
                spill.images[s].add(image)
                spill.images[s].update(_second_images(record))
            if _has_perturbations(record):
                spill.record_hashes.append(hash(record_key(record, n)))
                spill.perturbation_hashes.extend(hash(pid) for _, pid in identity_checked(record, image is not None))
            append_frame(buffers[s], (n, record))
            if len(buffers[s]) >= _FLUSH:
                flush(s)
        for s, buffer in enumerate(buffers):
            if buffer:
                flush(s)
    return spill


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


def _tasks(spill: _Spill, graphs: _Graphs) -> Iterator[ShardTask]:
    """Each shard's records and graphs, read back as the workers ask for them."""
    for chunks, images in zip(spill.chunks, spill.images, strict=True):
        records = b"".join(spill.store.read(offset, length) for offset, length in chunks)
        yield ShardTask(records, graphs.subset(sorted(images)))


def _clashes(hashes: array) -> set[int]:
    """The hashes given more than once."""
    ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
    return set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())


def _repeated_places(spill: _Spill, path: Path, graphs: _Graphs) -> frozenset[tuple[int, int]]:
    """The (record, perturbation) places whose key an earlier record gave: where hashes clash,
    the keys themselves, from a second pass over the file."""
    record_clashes, perturbation_clashes = _clashes(spill.record_hashes), _clashes(spill.perturbation_hashes)
    if not record_clashes and not perturbation_clashes:
        return frozenset()
    seen, places = SeenInStream(), set()
    for n, record in enumerate(read_contrast_records(path), 1):
        if not _has_perturbations(record):
            continue
        key = record_key(record, n)
        if hash(key) in record_clashes and seen.record_repeated(n, key):
            places.add((n, _RECORD))
        for i, pid in identity_checked(record, _graph_of(record, graphs) is not None):
            if hash(pid) in perturbation_clashes and seen.perturbation_repeated(n, i, pid):
                places.add((n, i))
    return frozenset(places)
