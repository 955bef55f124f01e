"""The bytes of a run's views: each question's GQA- and LXMERT-format entry (`ViewEntry`),
serialised question by question in the workers.

Why in the workers: at GQA scale the outputs hold hundreds of thousands of questions in several
views (original, augmented, k = 1, k = 3) and two formats. Serialising each question once, in the
worker process that produced it, and joining bytes in the parent avoids a serial phase that
would serialise every original eight times (a fifth of a 1M-question run). The joined bytes are
exactly what orjson writes for the whole dict or list with sorted keys; a test holds the two
equal.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import orjson

from contrastgen.datasets.gqa import gqa_json, perturbation_as_gqa
from contrastgen.datasets.lxmert import lxmert_item

_SORTED = orjson.OPT_SORT_KEYS


class ViewEntry(NamedTuple):
    """One question of the outputs: an original (rank 0) or a perturbation (its rank)."""

    key: str  # question id
    rank: int
    gqa: bytes  # the GQA-format record, sorted keys, no newline
    lxmert: bytes  # the LXMERT-format item, sorted keys, no newline


def _entry(qid: str, rank: int, q: dict[str, Any], gqa: bytes | None = None) -> ViewEntry:
    return ViewEntry(qid, rank, gqa if gqa is not None else gqa_json(q),
                     orjson.dumps(lxmert_item(qid, q), option=_SORTED))


def view_entries(qid: str, original: dict[str, Any], records: Iterable[dict[str, Any]], *,
                 original_json: bytes | None = None) -> list[ViewEntry]:
    """The original question and every perturbation in `records` (its contrast_sets.jsonl records).

    `original_json`, if given, is `gqa_json(original)`, computed earlier (by the packing loader).
    """
    out = [_entry(qid, 0, original, original_json)]
    for rec in records:
        for p in rec["perturbations"]:
            out.append(_entry(p["question_id"], p["rank"], perturbation_as_gqa(rec, p, original)))
    return out
