"""Questions streamed from disk and packed per image: what a large generation run holds of them.

Why: parsed with `gqa.load_questions`, a GQA question record takes about 6 KB of memory, so a
million of them cost 6 GiB before any work starts, and the worker processes forked from that
parent copy every page they touch. A generation run needs, per image, the text of every question
(to recognise duplicates) and the whole record only of questions a template may match. This
module streams the files (ijson's C backend, so memory does not grow with the file), validates
every record exactly as `gqa` does, and keeps one compact blob per image: question ids and texts,
plus the JSON of the records worth keeping. A worker unpacks the blob of the image it works on.

The packed records are serialised as the views hold them (`datasets.gqa.gqa_json`), so a worker writes
an original into `original.json` and the other views without serialising it again.
"""

from __future__ import annotations

import os
import pickle
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ijson

from contrastgen.datasets.gqa import gqa_json, json_files, validate_question
from contrastgen.errors import InputError

# (question id, question text, the record as sorted-key JSON or None if no template may match)
PackedQuestion = tuple[str, str, bytes | None]


@dataclass
class PackedQuestions:
    order: list[str]  # every question id, in input order
    blobs: dict[str, bytes]  # image id -> pickled list of PackedQuestion, in input order
    full: int  # questions whose whole record was kept

    def __len__(self) -> int:
        return len(self.order)

    @property
    def image_ids(self) -> list[str]:
        """In order of first appearance."""
        return list(self.blobs)

    def questions_of(self, image_id: str) -> list[PackedQuestion]:
        return pickle.loads(self.blobs[image_id])


def pack_questions(path: str | os.PathLike[str], keep_full: Callable[[str], bool]) -> PackedQuestions:
    """Stream GQA questions (one file or a directory of shards) into a PackedQuestions."""
    groups: dict[str, list[PackedQuestion]] = defaultdict(list)
    order: list[str] = []
    seen: set[str] = set()
    full = 0
    for file in json_files(Path(path)):
        for qid, q in _stream_records(file):
            if qid in seen:
                raise InputError("question id appears twice", path=str(file), record=f"question {qid}")
            seen.add(qid)
            q = validate_question(qid, q, path=str(file))
            text = q["question"]
            record = gqa_json(q) if keep_full(text) else None
            full += record is not None
            groups[q["imageId"]].append((qid, text, record))
            order.append(qid)
    if not order:
        raise InputError("no questions found", path=str(path))
    blobs = {image: pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL) for image, items in groups.items()}
    return PackedQuestions(order=order, blobs=blobs, full=full)


def _stream_records(file: Path) -> Iterator[tuple[str, Any]]:
    """(question id, record) pairs of one file's top-level object, read incrementally."""
    try:
        fh = file.open("rb")
    except FileNotFoundError:
        raise InputError("file not found", path=str(file)) from None
    except IsADirectoryError:
        raise InputError("expected a file, got a directory", path=str(file)) from None
    with fh:
        first = _first_byte(fh)
        if first is None:
            raise InputError("file is empty", path=str(file))
        if first != b"{":
            raise InputError("expected an object keyed by question id", path=str(file))
        fh.seek(0)
        last = None
        try:
            for qid, q in ijson.kvitems(fh, "", use_float=True):
                last = str(qid)
                yield last, q
        except ijson.JSONError as exc:
            after = f" after question {last}" if last is not None else ""
            raise InputError(f"malformed JSON{after} ({exc})", path=str(file)) from None


def _first_byte(fh) -> bytes | None:
    while chunk := fh.read(4096):
        stripped = chunk.lstrip()
        if stripped:
            return stripped[:1]
    return None
