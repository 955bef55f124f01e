"""Reading what a crowd-verification export starts from: contrast sets (validated by
`contrastgen.records`, as every reader of them is) and gold items.

Both are validated once, so that sampling and layout code can index without checks and a
bad line is reported with its file and record instead of surfacing as a KeyError mid-export.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contrastgen import records
from contrastgen.errors import InputError, duplicate_id
from contrastgen.jsonio import read_json, read_jsonl
from contrastgen.terminal.progress import Advance, counted, noop


@dataclass(frozen=True)
class GoldItem:
    """A question with a known answer, mixed into HITs to catch careless workers.

    `answers` holds every acceptable answer (already normalised by the caller's choice of
    wording, compared after `normalize_answer`), because a gold question such as "What colour
    is the bus?" may fairly be answered "red" or "dark red".
    """

    gold_id: str
    image_id: str
    question: str
    answers: tuple[str, ...]
    image_url: str | None = None


def load_contrast_sets(path: str | os.PathLike[str], advance: Advance = noop) -> list[dict[str, Any]]:
    """The records of a contrast file or `generate` output directory, validated by
    `contrastgen.records` (ids as strings); `advance(1)` per record read (a progress bar's)."""
    return [cs.record for cs in records.parse_contrast_sets(counted(records.read_contrast_records(path), advance),
                                                             path=str(records.contrast_file(path)))]


def validate_records(recs: Iterable[Mapping[str, Any]], *, source: str = "<records>") -> list[dict[str, Any]]:
    """Validate records handed to the library API directly."""
    return [cs.record for cs in records.parse_contrast_sets(recs, path=source)]


def _gold_from(obj: Any, *, path: str, record: str) -> GoldItem:
    if not isinstance(obj, Mapping):
        raise InputError("gold item is not an object", path=path, record=record)
    if not isinstance(obj.get("image_id"), (str, int)) or isinstance(obj.get("image_id"), bool):
        raise InputError("gold item lacks 'image_id'", path=path, record=record)
    # workers read the question: a number is not one (an id may be a number, as in VQA)
    if not isinstance(obj.get("question"), str) or not obj["question"].strip():
        raise InputError("gold item lacks 'question' (a string)", path=path, record=record)
    answers = obj.get("answers", [obj["answer"]] if "answer" in obj else None)
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
        raise InputError("gold item needs 'answer' (a string) or 'answers' (a list of strings)",
                         path=path, record=record)
    url = obj.get("image_url")
    if url is not None and not isinstance(url, str):
        raise InputError("gold item's 'image_url' is not a string", path=path, record=record)
    gold_id = str(obj.get("id", record))
    return GoldItem(gold_id=gold_id, image_id=str(obj["image_id"]), question=str(obj["question"]),
                    answers=tuple(answers), image_url=url)


def load_gold(path: str | os.PathLike[str]) -> list[GoldItem]:
    """Load gold items from a JSON list or JSONL file: `{id?, image_id, question, answer|answers, image_url?}`."""
    p = Path(path)
    if p.suffix == ".jsonl":
        rows = list(read_jsonl(p))
        labelled = [(f"line {i}", r) for i, r in enumerate(rows, 1)]
    else:
        data = read_json(p)
        if not isinstance(data, list):
            raise InputError("expected a JSON list of gold items (or a .jsonl file)", path=str(p))
        labelled = [(f"gold item {i}", r) for i, r in enumerate(data, 1)]
    items = [_gold_from(r, path=str(p), record=label) for label, r in labelled]
    if not items:
        raise InputError("no gold items found", path=str(p))
    _refuse_repeats(items, [label for label, _ in labelled], str(p))
    return items


def _refuse_repeats(items: list[GoldItem], labels: list[str], path: str) -> None:
    """Each gold item once: by its id, and by what a worker is shown (its image and question, in
    any case and spacing). Why the second: an item without an id is named by its place, so the
    same question listed twice would pass the id check, and its workers would be scored on it
    twice (or, with two answer lists, against whichever copy their HIT drew)."""
    first_id: dict[str, str] = {}
    first_shown: dict[tuple[str, str], str] = {}
    for label, item in zip(labels, items, strict=True):
        if item.gold_id in first_id:
            raise InputError(duplicate_id("gold", item.gold_id, first_id[item.gold_id], label), path=path,
                             record=label)
        first_id[item.gold_id] = label
        shown = (item.image_id, " ".join(item.question.split()).casefold())
        if shown in first_shown:
            raise InputError(f"gold item (image {item.image_id}, {item.question!r}) is given twice "
                             f"({first_shown[shown]}, and {label}); list each gold question once",
                             path=path, record=label)
        first_shown[shown] = label


def gold_from_dicts(items: Iterable[Any], *, source: str = "<gold>") -> list[GoldItem]:
    """Accept gold items as dicts or `GoldItem`s (library callers), checked as `load_gold` checks a file."""
    out = [g if isinstance(g, GoldItem) else _gold_from(g, path=source, record=f"gold item {i}")
           for i, g in enumerate(items, 1)]
    if not out:
        raise InputError("gold list is empty", path=source)
    _refuse_repeats(out, [f"gold item {i}" for i in range(1, len(out) + 1)], source)
    return out
