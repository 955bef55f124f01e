"""VQA-VS from GQA question files of any size, in three passes that never hold the questions.

Why: the in-memory build (`build_vqavs`) holds every sample, its record and its concepts: about
6 KB a question, 5.9 GiB for a million, well over 100 GB for GQA's 22 million. The construction
needs much less at any one time:

1. the MI statistics: word and object counts against answers (bounded by the vocabulary);
2. each sample's concepts, found as it streams by. Its concept labels go to a spill file,
   serialised as `concepts.jsonl` holds them, and its concept key to each shortcut's partitioned
   column (`group_columns`);
3. each shortcut's groups are split a partition at a time, which places each sample (head or
   tail of each shortcut); the records of the OOD samples are then read again from the input and
   spilled.

Passes 1 and 2 are batches of pure work (`parallel.tasks`): the local pool or Ray runs
them, and the results come back in input order. What stays in memory is a `QuestionIndex` (the id
at a fixed width and its file), the answer's number, two bit sets of places and a record's place
in the spill: about 40 bytes a question. The outputs are then written from the spills, in the
order the in-memory writer gives them (question order for lists and `concepts.jsonl`, id order
for the keyed files), so they are byte-identical to `write_vqavs(build_vqavs(...))`. Only GQA
data streams: VQA v2 is at most a million questions, in files that must be joined with their
annotations.
"""

from __future__ import annotations

import itertools
import os
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from contrastgen.datasets.gqa import gqa_json, stream_questions
from contrastgen.datasets.inputs import json_files
from contrastgen.datasets.question_index import (
    ROWS_AT_ONCE,
    QuestionIndex,
    RecordSpill,
    keyed_records,
)
from contrastgen.datasets.samples import Sample, iter_gqa_samples
from contrastgen.errors import InputError
from contrastgen.files import scratch
from contrastgen.files.atomic import atomic_dir
from contrastgen.jsonio import dumps, keyed_object, write_chunks
from contrastgen.ood.concepts import ConceptLabeller, MutualInformation, count_features
from contrastgen.ood.group_columns import (
    KEY_BYTES,
    PartitionedColumn,
    concept_key,
    split_partitions,
)
from contrastgen.ood.imbalance import GroupSplit
from contrastgen.ood.vqavs import (
    ShortcutSplit,
    VqaVsConfig,
    buildable_shortcuts,
    overlap_shares,
    requested_splits,
    vqavs_stats,
    write_summary,
)
from contrastgen.parallel.backend import LOCAL, Backend
from contrastgen.parallel.tasks import map_tasks, one_session
from contrastgen.terminal.progress import progress as progress_bar

PathLike = str | os.PathLike[str]
_SPILL_BUFFER = 1 << 20
_KEY_OPTS = orjson.OPT_SORT_KEYS  # a value inside an object, as `jsonio.dumps` writes it
# Samples a task counts or labels: about a second of work, a few MB to send back
BATCH_SAMPLES = 10_000
_Row = tuple[str, str, str, str, "str | None"]  # id, image, question, answer, question type: what a task gets


@dataclass
class _Labelled:
    """What pass two keeps in memory: the index, and each sample's answer as a number."""

    index: QuestionIndex
    answers: list[str]  # answer number -> answer
    answer_of: np.ndarray  # sample -> answer number
    without_objects: int


@dataclass(frozen=True)
class Workers:
    """Where the counting and labelling run (`parallel.tasks`) and how many samples a task takes."""

    backend: Backend = LOCAL
    workers: int = 1
    batch: int = BATCH_SAMPLES


def run_vqavs_gqa_streamed(questions: PathLike, out_dir: PathLike, *,
                           objects: Mapping[str, Sequence[str]] | None = None,
                           mi_questions: PathLike | None = None,
                           mi_objects: Mapping[str, Sequence[str]] | None = None,
                           config: VqaVsConfig | None = None, workers: Workers | None = None,
                           progress: bool = False) -> dict[str, Any]:
    """Build VQA-VS from GQA questions (a file or a directory of shards) into `out_dir`, atomically;
    return its stats. `mi_questions` (GQA too) and `mi_objects` as for `build_vqavs`; `workers`
    (default: this process alone) does not change the output. `progress`: a bar per pass (on a
    terminal), advanced here by each batch's questions as its result comes back."""
    config = config or VqaVsConfig()
    workers = workers or Workers()
    built = buildable_shortcuts(config, with_objects=objects is not None)
    files = json_files(questions)
    with scratch.folder("vqavs-") as work:
        concept_lines = Path(work, "concepts.jsonl")
        with one_session(workers.backend):  # one Ray connection (or local instance) for both passes
            labeller = _fit(questions if mi_questions is None else mi_questions,
                            objects, objects if mi_objects is None else mi_objects, config, workers,
                            own_ids=mi_questions is not None, progress=progress)
            columns = [PartitionedColumn(Path(work), f"keys-{i}") for i in range(len(built))]
            labelled = _label(questions, files, labeller, built, objects, concept_lines, columns, workers,
                              progress=progress)
        splits, head, tail = _split(config, built, labelled, columns, concept_lines)
        stats = vqavs_stats(config, "gqa", len(labelled.index), labelled.without_objects,
                            "input" if mi_questions is None else "separate", splits, _overlap(built, tail))
        index = labelled.index
        with Path(work, "records").open("w+b", buffering=_SPILL_BUFFER) as fh:
            spill = _spill_records(Path(questions), tail, RecordSpill(fh))
            with atomic_dir(out_dir) as tmp:
                for i, name in enumerate(built):
                    rows = index.order[(tail[index.order] & (1 << i)) != 0]
                    write_chunks(tmp / "ood" / f"{name}.json", keyed_records(index, spill, rows))
                write_chunks(tmp / "splits.json", _splits_json(index, built, head, tail))
                write_chunks(tmp / "answers.json", _answers_json(labelled))
                write_chunks(tmp / "concepts.jsonl", _concept_rows(concept_lines, built, head, tail))
                write_summary(tmp, splits, stats)
    return stats


def _batches(samples: Iterable[Sample], size: int) -> Iterator[list[_Row]]:
    batch: list[_Row] = []
    for s in samples:
        batch.append((s.question_id, s.image_id, s.question, s.answer, s.question_type))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _sample(row: _Row) -> Sample:
    qid, image, question, answer, question_type = row
    return Sample(qid, image, question, answer, [answer], question_type)


def _count_batch(setup: tuple[Mapping[str, Sequence[str]] | None, bool], batch: list[_Row]
                 ) -> tuple[MutualInformation, MutualInformation | None]:
    """A task of pass one: one batch's word and object counts."""
    objects, drop_stopwords = setup
    return count_features(map(_sample, batch), objects, drop_stopwords=drop_stopwords)


def _fit(source: PathLike, objects: Mapping[str, Sequence[str]] | None,
         source_objects: Mapping[str, Sequence[str]] | None, config: VqaVsConfig, workers: Workers, *,
         own_ids: bool, progress: bool = False) -> ConceptLabeller:
    """Pass one: the MI statistics, counted batch by batch and added up. `own_ids`: the source
    is a split of its own (`--mi-questions`), whose ids pass two does not index, so they are
    checked here: a question given twice would be counted twice."""
    index = QuestionIndex(json_files(source)) if own_ids else None

    def samples() -> Iterator[Sample]:
        for n, _, sample in iter_gqa_samples(source, records=False):
            if index is not None:
                index.add(sample.question_id, n)
            yield sample

    words, seen_objects = MutualInformation(), MutualInformation() if objects is not None else None
    # the questions stream, so the bar counts them with no total
    with progress_bar("counting questions", None, enabled=progress) as advance:
        for batch_words, batch_objects in map_tasks(
                _count_batch, (source_objects if objects is not None else None, config.drop_stopwords),
                _batches(samples(), workers.batch), backend=workers.backend, workers=workers.workers):
            words.merge(batch_words)
            if seen_objects is not None and batch_objects is not None:
                seen_objects.merge(batch_objects)
            advance(batch_words.total)
    if not words.total:
        raise InputError("no questions found", path=str(source))
    if index is not None:
        index.freeze()
        index.no_id_twice()
    return ConceptLabeller(words, seen_objects, objects, config.drop_stopwords)


def _label_batch(setup: tuple[ConceptLabeller, list[str]], batch: list[_Row]) -> tuple[bytes, list[bytes]]:
    """A task of pass two: each sample's `concepts.jsonl` line (its place not yet known), and for
    each built shortcut the samples' concept keys (`group_columns.concept_key`), one column each."""
    labeller, built = setup
    lines = []
    columns: list[list[bytes]] = [[] for _ in built]
    for row in batch:
        labels = labeller.label(_sample(row))
        lines.append(dumps({"concepts": labels.concepts, "labels": labels.labels, "question_id": labels.question_id}))
        for column, name in zip(columns, built, strict=True):
            column.append(concept_key(labels.concepts[name]))
    return b"".join(lines), [b"".join(column) for column in columns]


def _label(questions: PathLike, files: list[Path], labeller: ConceptLabeller, built: list[str],
           objects: Mapping[str, Sequence[str]] | None, concept_lines: Path, columns: list[PartitionedColumn],
           workers: Workers, *, progress: bool = False) -> _Labelled:
    """Pass two: each sample's concepts, spilled: its `concepts.jsonl` line, and its concept key
    in each shortcut's partitioned column. The driver indexes the samples as it hands them out."""
    index = QuestionIndex(files)
    answer_number: dict[str, int] = {}
    answer_of = array("i")
    without = 0

    def indexed() -> Iterator[Sample]:
        nonlocal without
        for n, _, sample in iter_gqa_samples(questions, records=False):
            index.add(sample.question_id, n)
            answer_of.append(answer_number.setdefault(sample.answer, len(answer_number)))
            if objects is not None and sample.image_id not in objects:
                without += 1
            yield sample

    row = 0
    with (concept_lines.open("wb", buffering=_SPILL_BUFFER) as lines,
          progress_bar("labelling questions", None, enabled=progress) as advance):
        try:
            for batch_lines, batch_keys in map_tasks(_label_batch, (labeller, built),
                                                        _batches(indexed(), workers.batch),
                                                        backend=workers.backend, workers=workers.workers):
                lines.write(batch_lines)
                size = len(batch_keys[0]) // KEY_BYTES  # the batch's samples
                answers = np.array(answer_of[row:row + size], dtype=np.int32)
                for column, keys in zip(columns, batch_keys, strict=True):
                    column.add(np.frombuffer(keys, dtype=f"V{KEY_BYTES}"), row, answers)
                row += len(answers)
                advance(len(answers))
        finally:
            for column in columns:
                column.close()
    if not len(index):
        raise InputError("no questions found", path=str(questions))
    index.freeze()
    index.no_id_twice()
    return _Labelled(index, list(answer_number), np.frombuffer(answer_of, dtype=np.int32), without)


def _split(config: VqaVsConfig, built: list[str], labelled: _Labelled, columns: list[PartitionedColumn],
           concept_lines: Path) -> tuple[dict[str, ShortcutSplit], np.ndarray, np.ndarray]:
    """Every requested shortcut's groups, split as `build_vqavs` splits them, one column at a time;
    and each sample's places as bit sets (bit i: shortcut `built[i]`): in a kept group's head, in
    its tail."""
    n = len(labelled.index)
    head = np.zeros(n, dtype=np.uint16)
    tail = np.zeros(n, dtype=np.uint16)
    splits = requested_splits(config, built)
    kept: dict[str, tuple[dict[int, GroupSplit], dict[int, int]]] = {}
    for i, name in enumerate(built):
        column = split_partitions(columns[i], n, labelled.answers, entropy_threshold=config.entropy_threshold,
                                  tail_factor=config.tail_factor)
        head |= column.head.astype(np.uint16) << i
        tail |= column.tail.astype(np.uint16) << i
        split = splits[name]
        split.unlabelled = column.unlabelled
        split.group_count = column.groups
        split.head, split.tail = int(np.count_nonzero(column.head)), int(np.count_nonzero(column.tail))
        kept[name] = (column.kept, column.sample_of)  # the places are in `head` and `tail` now
    _name_kept_groups(splits, kept, concept_lines)
    return splits, head, tail


def _name_kept_groups(splits: dict[str, ShortcutSplit], kept: dict[str, tuple[dict[int, GroupSplit], dict[int, int]]],
                      concept_lines: Path) -> None:
    """Each kept group's concept, read from the spilled line of one of its samples. Two kept
    groups of a shortcut never read as one concept (that would take two concepts with one key)."""
    wanted: dict[int, list[tuple[str, int]]] = {}
    for name, (_, sample_of) in kept.items():
        for group, row in sample_of.items():
            wanted.setdefault(row, []).append((name, group))
    named: dict[str, dict[str, GroupSplit]] = {name: {} for name in kept}
    with concept_lines.open("rb", buffering=_SPILL_BUFFER) as lines:
        at = 0  # the row of the next line
        for row in sorted(wanted):
            line = next(itertools.islice(lines, row - at, None))
            at = row + 1
            concepts = orjson.loads(line)["concepts"]
            for name, group in wanted[row]:
                found = kept[name][0][group]
                found.key = concepts[name]
                named[name][found.key] = found
    for name, groups in named.items():
        if len(groups) != len(kept[name][0]):
            raise RuntimeError(f"{name}: two kept groups read as one concept")
        splits[name].groups = groups


def _overlap(built: list[str], tail: np.ndarray) -> dict[str, dict[str, float | None]]:
    """The shares of each OOD set found in each other, from how many samples have each bit set."""
    per_set = np.bincount(tail, minlength=1 << len(built)).tolist()
    sets = range(len(per_set))
    return overlap_shares({a: {b: sum(per_set[m] for m in sets if m >> i & 1 and m >> j & 1)
                               for j, b in enumerate(built)} for i, a in enumerate(built)})


def _spill_records(questions: Path, tail: np.ndarray, spill: RecordSpill) -> RecordSpill:
    """Pass three: the records of the samples in some OOD set, serialised as the output holds them."""
    wanted = tail != 0
    row = 0
    for _, file, _, q in stream_questions(questions):
        if row >= len(wanted):
            raise InputError("the question files changed while they were read", path=str(file))
        spill.add(gqa_json(q) if wanted[row] else None)
        row += 1
    if row != len(wanted):
        raise InputError("the question files changed while they were read", path=str(questions))
    spill.freeze()
    return spill


def _id_list(index: QuestionIndex, rows: np.ndarray) -> Iterator[bytes]:
    """A JSON list of the ids of `rows`, in their order, as `orjson` writes it."""
    yield b"["
    for start in range(0, len(rows), ROWS_AT_ONCE):
        ids = [qid for _, qid in index.qids(rows[start:start + ROWS_AT_ONCE])]
        yield (b"," if start else b"") + orjson.dumps(ids)[1:-1]
    yield b"]"


def _by_shortcut(index: QuestionIndex, built: list[str], places: np.ndarray) -> Iterator[bytes]:
    """{shortcut: [ids in question order]} over the shortcuts in key order."""
    yield b"{"
    for k, name in enumerate(sorted(built)):
        i = built.index(name)
        yield (b"," if k else b"") + orjson.dumps(name) + b":"
        yield from _id_list(index, np.flatnonzero(places & (1 << i)))
    yield b"}"


def _splits_json(index: QuestionIndex, built: list[str], head: np.ndarray, tail: np.ndarray) -> Iterator[bytes]:
    """splits.json: {"head": ..., "iid": [every id], "ood": ...}, keys sorted as `jsonio.dumps` sorts them."""
    yield b'{"head":'
    yield from _by_shortcut(index, built, head)
    yield b',"iid":'
    yield from _id_list(index, np.arange(len(index)))
    yield b',"ood":'
    yield from _by_shortcut(index, built, tail)
    yield b"}\n"


def _answers_json(labelled: _Labelled) -> Iterator[bytes]:
    """answers.json: {id: the answers a prediction is scored against}, in id order."""
    scored = [orjson.dumps({"answer": a, "answers": [a], "answer_type": None}, option=_KEY_OPTS)
              for a in labelled.answers]
    answer_of = labelled.answer_of
    index = labelled.index
    return keyed_object((qid, scored[answer_of[row]]) for row, qid in index.qids(index.order))


def _concept_rows(concept_lines: Path, built: list[str], head: np.ndarray, tail: np.ndarray) -> Iterator[bytes]:
    """concepts.jsonl: each spilled line with the sample's place in every built shortcut added."""
    placed: dict[tuple[int, int], bytes] = {}

    def place(h: int, t: int) -> bytes:
        split = {n: "tail" if t >> i & 1 else "head" if h >> i & 1 else None for i, n in enumerate(built)}
        return b',"split":' + orjson.dumps(split, option=_KEY_OPTS) + b"}\n"

    with concept_lines.open("rb", buffering=_SPILL_BUFFER) as lines:
        for start in range(0, len(head), ROWS_AT_ONCE):
            stop = start + ROWS_AT_ONCE
            for h, t in zip(head[start:stop].tolist(), tail[start:stop].tolist(), strict=True):
                end = placed.get((h, t))
                if end is None:
                    end = placed[h, t] = place(h, t)
                yield next(lines)[:-2] + end

