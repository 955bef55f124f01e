"""The caption record: one line of `captions.jsonl`, a true caption with its chosen negatives.

Why ids from the words: a caption's id is its image and a hash of its text, a negative's the
caption's id and its kind, so the ids of the same caption agree across runs, balancing modes and
exports, and a model's similarity file keyed by them can be scored against any of them.

The record (docs/captions.md describes every field):

    {"id", "image_id", "dataset", "shape", "caption", "plausibility", "region", "image_size",
     "evidence": {"version", "reading", "facts"},
     "negatives": [{"id", "kind", "caption", "change", "plausibility",
                    "evidence": {"version", "reading", "proof", "facts"}}]}
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from contrastgen.captions.candidates import KINDS, Candidate
from contrastgen.captions.caption import caption_text, reading
from contrastgen.captions.world import World
from contrastgen.language.lexicon import Lexicon
from contrastgen.perturb import (
    EVIDENCE_VERSION,  # one evidence schema version for every proof the generator writes
)

_ID_HASH_CHARS = 10


def caption_id(image_id: str, text: str) -> str:
    """`<image id>_<10 hex digits of the text's SHA-1>`: the same caption has the same id in
    every run."""
    return f"{image_id}_{hashlib.sha1(text.encode('utf-8')).hexdigest()[:_ID_HASH_CHARS]}"


def negative_id(positive_id: str, kind: str) -> str:
    return f"{positive_id}_{kind}"


def region(world: World, witnesses: tuple[str, ...]) -> list[int]:
    """The box around the caption's objects, in whole pixels inside the image (ARO crops each
    image to it; PIL fills a box past the edge with black)."""
    boxes = [world.thing(oid).box for oid in witnesses]  # type: ignore[union-attr]  # a witness is a thing
    x0 = math.floor(min(b[0] for b in boxes))
    y0 = math.floor(min(b[1] for b in boxes))
    x1 = math.ceil(max(b[0] + b[2] for b in boxes))
    y1 = math.ceil(max(b[1] + b[3] for b in boxes))
    width, height = int(world.width), int(world.height)
    x0, y0 = max(0, x0), max(0, y0)
    x1 = min(width, x1) if width else x1
    y1 = min(height, y1) if height else y1
    return [x0, y0, max(1, x1 - x0), max(1, y1 - y0)]


def _score(value: float) -> float:
    return round(value, 6)


def caption_record(image_id: str, world: World, lex: Lexicon,
                   chosen: list[tuple[Candidate, float, float]]) -> dict[str, Any]:
    """One positive with its chosen negatives: (candidate, the positive's plausibility, the
    negative's), every candidate of the same positive and witnesses."""
    first = chosen[0][0]
    text = caption_text(first.positive, lex)
    pid = caption_id(image_id, text)
    negatives = []
    for cand, _, plausibility in sorted(chosen, key=lambda c: KINDS.index(c[0].kind)):
        negatives.append({
            "id": negative_id(pid, cand.kind), "kind": cand.kind, "caption": caption_text(cand.negative, lex),
            "change": cand.change, "plausibility": _score(plausibility),
            "evidence": {"version": EVIDENCE_VERSION, "reading": reading(cand.negative, lex),
                         "proof": cand.proof.kind, "facts": cand.proof.facts},
        })
    return {
        "id": pid, "image_id": image_id, "dataset": world.dataset, "shape": first.positive.shape,
        "caption": text, "plausibility": _score(chosen[0][1]),
        "region": region(world, first.witnesses), "image_size": [int(world.width), int(world.height)],
        "evidence": {"version": EVIDENCE_VERSION, "reading": reading(first.positive, lex),
                     "facts": list(first.positive_facts)},
        "negatives": negatives,
    }
