"""The training file of `contrastgen augment`: every training question plus its perturbations.

It is one GQA-format file (and, if asked, its LXMERT copy), not a directory, so it is not one of
the registered writers; both files are written in one pass by `writers.base.write_views`, as
one group (`files.atomic.atomic_group`): each path is a link into a store of versions beside the
GQA file, and both switch to the new version in one step. The
perturbations' records are the workers' bytes; only the originals that got no perturbation are
serialised here. `write_augmented_training` takes the questions in memory (the library's call);
`write_augmented_from_files` streams them from their files, for the CLI's runs of any size: the
originals are spilled to disk as they are read and merged in id order with the run's entries
(themselves on disk), so the same bytes are written while an index of the originals is held
(and, with `--replace`, their ids, to draw the dropped ones).

`--replace` replaces at most a share of the originals (`REPLACE_SHARE`, half by default): a
size-matched training set that has lost its original questions is not the control anyone asks
for. Where the run made more perturbations than that share, the perturbations of the lowest
ranks are kept (drawn by the seed within a rank) and the rest left out, so the size still matches.
"""

from __future__ import annotations

import heapq
import random
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson

from contrastgen.datasets.gqa import gqa_json, validate_question
from contrastgen.datasets.inputs import InputPaths, json_files
from contrastgen.datasets.lxmert import lxmert_item
from contrastgen.datasets.question_index import QuestionIndex, RecordSpill
from contrastgen.datasets.streaming import stream_records
from contrastgen.errors import InputError
from contrastgen.files.atomic import atomic_group
from contrastgen.gc_policy import no_gc
from contrastgen.results.generation import Generation
from contrastgen.results.view_bytes import ViewEntry
from contrastgen.writers import base


def lxmert_path(out_file: str | Path) -> Path:
    """Where the LXMERT copy of an augmented file goes: `train_aug.json` -> `train_aug.lxmert.json`."""
    path = Path(out_file)
    return path.with_name(f"{path.stem}.lxmert{path.suffix or '.json'}")


REPLACE_SHARE = 0.5  # of the originals, at most, that `--replace` replaces by default


def write_augmented_training(gen: Generation, questions: dict[str, dict], out_file: str | Path, *,
                             replace: bool, seed: int, lxmert_file: str | Path | None = None,
                             replace_share: float = REPLACE_SHARE) -> dict[str, int]:
    """Training questions plus perturbations in GQA format (the paper's augmentation), and the
    same questions in LXMERT's input format in `lxmert_file` when given (the order is the GQA
    file's, by question id).

    `replace` drops as many originals as perturbations are added, chosen by the seed among the
    questions that were not perturbed (then, if those run out, among the perturbed ones), so the
    size stays the same (the paper's control run); at most `replace_share` of the originals are
    dropped, and the perturbations beyond that are left out (`left_out`).
    """
    with no_gc():
        entries = {e.key: e for e in gen.views}
        left_out: set[str] = set()
        if replace:
            left_out = _left_out([(e.key, e.rank) for e in entries.values() if e.rank], len(questions),
                                 replace_share, seed)
            for key in left_out:
                del entries[key]
        added = sum(1 for e in entries.values() if e.rank)
        for qid, q in questions.items():
            if qid not in entries:
                _check_answered(qid, q, None)
                lxmert = orjson.dumps(lxmert_item(qid, q), option=orjson.OPT_SORT_KEYS) if lxmert_file else b""
                entries[qid] = ViewEntry(qid, 0, gqa_json(q), lxmert)
        dropped = 0
        if replace:
            perturbed = set(gen.perturbed)
            for qid in _replaced(sorted(q for q in questions if q not in perturbed), perturbed, added, seed):
                del entries[qid]
                dropped += 1
        total, _ = _write((entries[k] for k in sorted(entries)), out_file, lxmert_file)
    return {"original": len(questions), "added": added, "dropped": dropped, "total": total,
            "left_out": len(left_out)}


def _left_out(perturbations: list[tuple[str, int]], originals: int, share: float, seed: int) -> set[str]:
    """The perturbations (key, rank) `--replace` leaves out so that it replaces at most `share`
    of the `originals`: the lowest ranks are kept (a rank-1 contrast says the most), drawn by the
    seed within a rank."""
    room = int(originals * share)
    if len(perturbations) <= room:
        return set()
    order = sorted(perturbations)
    random.Random(f"{seed}/replace-share").shuffle(order)
    order.sort(key=lambda item: item[1])  # stable: by rank, the seed's order within one
    return {key for key, _ in order[room:]}


def _check_answered(qid: str, q: dict, path: str | None) -> None:
    """Training questions need their answer (LXMERT's label is made of it)."""
    if not isinstance(q.get("answer"), str):
        raise InputError("question has no answer: training questions need one", path=path,
                         record=f"question {qid}")


def _replaced(unperturbed: list[str], perturbed: set[str], added: int, seed: int) -> list[str]:
    """The originals `--replace` drops to make room for `added` perturbations: drawn by the seed
    among the unperturbed (`unperturbed`: their ids sorted), then, if those run out, among the
    perturbed."""
    rng = random.Random(seed)
    pool: list[str] = []
    for group in (unperturbed, sorted(perturbed)):
        rng.shuffle(group)
        pool.extend(group)
    return pool[:added]


def _write(entries: Iterable[ViewEntry], out_file: str | Path, lxmert_file: str | Path | None) -> tuple[int, int]:
    """The GQA file, and the LXMERT one if asked, in one pass over `entries` (in key order);
    returns how many entries each holds, and how many of them are perturbations."""
    outputs = [Path(out_file)] + ([Path(lxmert_file)] if lxmert_file is not None else [])
    count = perturbations = 0

    def counted() -> Iterator[ViewEntry]:
        nonlocal count, perturbations
        for entry in entries:
            count += 1
            perturbations += entry.rank > 0
            yield entry

    # the two files are one result: both change at once, or neither does
    with atomic_group(outputs) as paths:
        files = [base.ViewFile(paths[0], None, base.gqa_item, (b"{", b"}\n"))]
        if lxmert_file is not None:
            files.append(base.ViewFile(paths[1], None, base.lxmert_item, (b"[", b"]\n")))
        base.write_views(files, counted())
    return count, perturbations


def write_augmented_from_files(gen: Generation, questions: InputPaths, out_file: str | Path, *, replace: bool,
                               seed: int, lxmert_file: str | Path | None = None,
                               replace_share: float = REPLACE_SHARE) -> dict[str, int]:
    """`write_augmented_training` for questions in files (one, or a directory of shards): the same
    files, byte for byte, without holding the questions. With `replace`, the ids of the originals
    are held to draw the dropped ones, as the in-memory writer draws them."""
    perturbed = set(gen.perturbed)
    with tempfile.TemporaryFile(prefix="contrastgen-aug-") as gqa_fh, \
            tempfile.TemporaryFile(prefix="contrastgen-aug-lxmert-") as lxmert_fh:
        index, gqa, lxmert, originals = _spill_originals(json_files(questions), perturbed, RecordSpill(gqa_fh),
                                                         RecordSpill(lxmert_fh) if lxmert_file else None)
        dropped: set[str] = set()
        left_out: set[str] = set()
        if replace:  # how many to drop is known only from the entries: one more pass over them
            left_out = _left_out([(e.key, e.rank) for e in gen.views if e.rank], originals, replace_share, seed)
            added = sum(1 for e in gen.views if e.rank) - len(left_out)
            # the index's order is the ids sorted
            dropped = set(_replaced([qid for _, qid in index.qids(index.order)], perturbed, added, seed))
        unperturbed = (ViewEntry(qid, 0, gqa.read(row), lxmert.read(row) if lxmert else b"")
                       for row, qid in index.qids(index.order))
        skipped = dropped | left_out
        kept = (e for e in heapq.merge(gen.views, unperturbed, key=lambda e: e.key) if e.key not in skipped)
        total, added = _write(kept, out_file, lxmert_file)
    return {"original": originals, "added": added, "dropped": len(dropped), "total": total,
            "left_out": len(left_out)}


def _spill_originals(files: list[Path], perturbed: set[str], gqa: RecordSpill, lxmert: RecordSpill | None
                     ) -> tuple[QuestionIndex, RecordSpill, RecordSpill | None, int]:
    """The originals that got no perturbation, serialised as the in-memory writer serialises them
    and spilled; the perturbed ones are among the run's entries already. Returns how many
    originals there are in all."""
    index = QuestionIndex(files)
    originals = 0
    for n, file in enumerate(files):
        for qid, q in stream_records(file, "question"):
            originals += 1
            if qid in perturbed:
                continue
            q = validate_question(qid, q, path=str(file))
            _check_answered(qid, q, str(file))
            index.add(qid, n)
            gqa.add(gqa_json(q))
            if lxmert is not None:
                lxmert.add(orjson.dumps(lxmert_item(qid, q), option=orjson.OPT_SORT_KEYS))
    index.freeze()
    gqa.freeze()
    if lxmert is not None:
        lxmert.freeze()
    return index, gqa, lxmert, originals
