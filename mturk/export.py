"""Export a blinded crowd-verification batch for Mechanical Turk.

The paper's check (Section 2.3) only means something if workers cannot tell generated questions
from GQA's: otherwise they might second-guess the odd-looking ones. So everything a worker (or
anyone holding the upload files) sees is role-free: item tokens are seeded random hex, every
question is typeset the same way, items are shuffled within and across HITs, and the two
questions about one image are put in different HITs. What maps a token back to its question,
role and computed answer lives only in the private `manifest.json`, next to (never inside) the
`upload/` directory.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import random
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from contrastgen.answers import normalize_answer
from contrastgen.errors import InputError
from contrastgen.files.atomic import atomic_dir
from contrastgen.files.csv_cells import neutral_row
from contrastgen.jsonio import dumps, write_json, write_text
from contrastgen.terminal.progress import Advance, counted, noop

from .inputs import GoldItem, gold_from_dicts, validate_records
from .layout import (
    DEFAULT_FRAME_HEIGHT,
    DEFAULT_TITLE,
    answer_fields,
    csv_columns,
    display_question,
    fill_layout,
    layout_variables,
    render_layout,
    render_question_xml,
)
from .sampling import SampledPair, sample_pairs

MANIFEST_FORMAT = "contrastgen-mturk-manifest"
MANIFEST_VERSION = 1
UPLOAD_DIR = "upload"
BATCH_CSV = "batch_input.csv"
LAYOUT_HTML = "hit_layout.html"
QUESTION_XML = "question.xml"
API_HITS = "api_hits.jsonl"
HIT_PROPERTIES = "hit_properties.json"
MANIFEST = "manifest.json"

# Roles an item can have in the manifest. Padding items repeat a real item to fill the last
# HIT when no gold is available; their answers are not scored.
ROLES = ("original", "perturbed", "gold", "padding")


@dataclass
class HitItem:
    """One question shown in one slot of one HIT, with what the manifest needs to score it."""

    token: str
    role: str
    image_id: str
    image_url: str
    question: str
    answers: list[str]
    template: str | None = None
    pair_id: str | None = None
    question_id: str | None = None
    rank: int | None = None
    change: dict[str, Any] | None = None
    evidence: dict[str, Any] | None = None
    gold_id: str | None = None
    source_token: str | None = None

    def manifest_entry(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None and k != "token"}


@dataclass
class Hit:
    token: str
    items: list[HitItem] = field(default_factory=list)

    def row(self) -> dict[str, str]:
        row = {"hit_token": self.token}
        for slot, item in enumerate(self.items, 1):
            row[f"item{slot}_token"] = item.token
            row[f"item{slot}_image_url"] = item.image_url
            row[f"item{slot}_question"] = item.question
        return row


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote; returned by `export_hits` and printed by the CLI."""

    out_dir: str
    n_images: int
    n_hits: int
    n_items: int
    n_gold_slots: int
    n_padding_slots: int
    assignments: int
    reward: str
    cost_estimate: str
    per_template: dict[str, int]
    warnings: list[str]


class _Tokens:
    """Seeded, unique, opaque 12-hex-digit tokens."""

    def __init__(self, rng: random.Random):
        self._rng = rng
        self._seen: set[str] = set()

    def new(self) -> str:
        while True:
            tok = f"{self._rng.getrandbits(48):012x}"
            if tok not in self._seen:
                self._seen.add(tok)
                return tok


def image_url(base: str, image_id: str, file_name: str | None = None) -> str:
    """`{base}/{image_id}.jpg` (GQA's and VQA's images are JPEGs named by id), or `{base}/{file_name}`
    when the image's real file is known (CLEVR's renders are PNGs)."""
    return f"{base.rstrip('/')}/{urllib.parse.quote(file_name or image_id + '.jpg')}"


IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


def image_files(folder: str | Path) -> dict[str, str]:
    """Image id -> file name of the images in `folder` (`{image_id}.jpg|jpeg|png`)."""
    path = Path(folder)
    if not path.is_dir():
        raise InputError("--images must be a folder of {image_id}.jpg|png files", path=str(path))
    found: dict[str, str] = {}
    for f in sorted(path.iterdir()):
        if f.suffix.lower() in IMAGE_SUFFIXES:
            found.setdefault(f.stem, f.name)
    return found


# The characters RFC 3986 lets a URL hold, less the apostrophe (a URL goes into HTML attributes
# and the workers' CSV; anything else must be percent-encoded by whoever wrote it).
_URL_TEXT = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&()*+,;=%]+")


def _check_base_url(url: str) -> str:
    """The base URL, refused unless it is one: its scheme, a host for http(s), and no character a
    URL cannot hold (spaces, quotes, angle brackets, control characters)."""
    wanted = f"--images-base-url must be an https:// (or http://, file://) URL, got {url!r}"
    if not _URL_TEXT.fullmatch(url):
        raise InputError(f"{wanted}: it holds characters a URL cannot (percent-encode them)")
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:  # an unclosed [ in the host, a port that is no number
        raise InputError(f"{wanted} ({exc})") from None
    if parts.scheme not in ("https", "http", "file"):
        raise InputError(wanted)
    if parts.scheme != "file" and not parts.hostname:
        raise InputError(f"{wanted}: it names no host")
    if parts.query or parts.fragment:
        raise InputError(f"{wanted}: image URLs are built as URL/<file>, so it can hold no ? or #")
    return url


def _parse_reward(reward: float | str | Decimal) -> Decimal:
    try:
        value = Decimal(str(reward)).quantize(Decimal("0.01"))
    except InvalidOperation:
        raise InputError(f"--reward must be a dollar amount, got {reward!r}") from None
    if value < Decimal("0.01"):
        raise InputError(f"--reward must be at least $0.01 (MTurk's minimum), got {reward!r}")
    return value


def _pair_items(pair: SampledPair, tokens: _Tokens, base_url: str,
                files: Mapping[str, str] | None = None) -> tuple[HitItem, HitItem]:
    rec, pert = pair.record, pair.perturbation
    if files is not None and pair.image_id not in files:
        raise InputError(f"image {pair.image_id!r} has no file ({', '.join(IMAGE_SUFFIXES)}) in --images")
    url = image_url(base_url, pair.image_id, files.get(pair.image_id) if files is not None else None)
    original = HitItem(
        token=tokens.new(), role="original", image_id=pair.image_id, image_url=url,
        question=display_question(rec["question"]), answers=[normalize_answer(rec["answer"])],
        template=pair.template, pair_id=rec["question_id"], question_id=rec["question_id"],
    )
    perturbed = HitItem(
        token=tokens.new(), role="perturbed", image_id=pair.image_id, image_url=url,
        question=display_question(pert["question"]), answers=[normalize_answer(pert["answer"])],
        template=pair.template, pair_id=rec["question_id"], question_id=pert["question_id"],
        rank=pert.get("rank"), change=pert.get("change"), evidence=pert.get("evidence"),
    )
    return original, perturbed


def _gold_cycle(gold: list[GoldItem], rng: random.Random) -> Iterator[GoldItem]:
    """Gold items in a seeded order, reshuffled on each pass, so reuse is spread evenly."""
    pool = sorted(gold, key=lambda g: g.gold_id)
    while True:
        order = list(pool)
        rng.shuffle(order)
        yield from order


def _gold_item(g: GoldItem, tokens: _Tokens, base_url: str) -> HitItem:
    return HitItem(
        token=tokens.new(), role="gold", image_id=g.image_id,
        image_url=g.image_url or image_url(base_url, g.image_id),
        question=display_question(g.question), answers=sorted({normalize_answer(a) for a in g.answers}),
        gold_id=g.gold_id,
    )


def build_hits(pairs: list[SampledPair], *, rng: random.Random, base_url: str, items_per_hit: int,
               gold: list[GoldItem] | None, gold_per_hit: int,
               files: Mapping[str, str] | None = None) -> tuple[list[Hit], list[str]]:
    """Lay sampled pairs out in HITs; returns the HITs and any warnings.

    The two questions about an image go to positions i and N+i of one long list that is cut
    into HITs of `real_slots` items; with N >= real_slots they can never share a HIT. Which of
    the two comes first is a coin flip per pair, so neither half of the batch is richer in
    perturbations.
    """
    tokens = _Tokens(rng)
    warnings: list[str] = []
    gold_slots = gold_per_hit if gold else 0
    real_slots = items_per_hit - gold_slots
    order = list(pairs)
    rng.shuffle(order)
    first: list[HitItem] = []
    second: list[HitItem] = []
    for pair in order:
        a, b = _pair_items(pair, tokens, base_url, files)
        if rng.random() < 0.5:
            a, b = b, a
        first.append(a)
        second.append(b)
    real = first + second
    if len(order) < real_slots:
        warnings.append(
            f"only {len(order)} images for {real_slots} question slots per HIT: an image's original "
            "and perturbed questions may share a HIT; sample more images or use fewer --items-per-hit")
    n_hits = math.ceil(len(real) / real_slots)
    chunks = [real[i * real_slots:(i + 1) * real_slots] for i in range(n_hits)]

    gold_iter = _gold_cycle(gold, rng) if gold else None
    hits: list[Hit] = []
    for chunk in chunks:
        items = list(chunk)
        missing = items_per_hit - gold_slots - len(items)
        extra_gold = 0
        if missing and gold_iter is not None:
            extra_gold, missing = missing, 0
        for _ in range(missing):
            items.append(_padding_item(items, real, tokens, rng))
        for _ in range(gold_slots + extra_gold):
            assert gold_iter is not None
            items.append(_gold_item(next(gold_iter), tokens, base_url))
        rng.shuffle(items)
        hits.append(Hit(token="", items=items))
    rng.shuffle(hits)
    for hit in hits:
        hit.token = tokens.new()
    return hits, warnings


def _padding_item(in_hit: list[HitItem], real: list[HitItem], tokens: _Tokens, rng: random.Random) -> HitItem:
    """A repeat of a real item from another HIT, to fill a short last HIT (not scored)."""
    taken_pairs = {i.pair_id for i in in_hit}
    choices = [i for i in real if i.pair_id not in taken_pairs] or [i for i in real if i not in in_hit] or real
    src = choices[rng.randrange(len(choices))]
    return HitItem(token=tokens.new(), role="padding", image_id=src.image_id, image_url=src.image_url,
                   question=src.question, answers=list(src.answers), template=src.template,
                   pair_id=src.pair_id, question_id=src.question_id, source_token=src.token)


def _csv_text(columns: list[str], rows: Iterable[Mapping[str, str]]) -> str:
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(neutral_row(row))  # no cell a spreadsheet would run as a formula
    return buf.getvalue()


def hit_properties(*, title: str, items_per_hit: int, assignments: int, reward: Decimal) -> dict[str, Any]:
    """The HIT type settings, named as the MTurk API (`CreateHIT`) names them."""
    return {
        "Title": title,
        "Description": f"Look at photos and answer {items_per_hit} short questions about them.",
        "Keywords": "image, photo, question answering, visual question",
        "Reward": f"{reward:.2f}",
        "MaxAssignments": assignments,
        "AssignmentDurationInSeconds": max(600, 120 * items_per_hit),
        "LifetimeInSeconds": 7 * 24 * 3600,
        "AutoApprovalDelayInSeconds": 3 * 24 * 3600,
    }


def export_hits(records: Iterable[Mapping[str, Any]], *, images_base_url: str, sample: int, seed: int,
                assignments: int = 3, items_per_hit: int = 10, reward: float | str | Decimal = "0.10",
                gold: Iterable[GoldItem | Mapping[str, Any]] | None = None, out_dir: str | Path,
                gold_per_hit: int = 1, title: str = DEFAULT_TITLE, source: str = "<records>",
                files_by_image: Mapping[str, str] | None = None, advance: Advance = noop) -> ExportSummary:
    """Sample, blind and write a MTurk batch to `out_dir` (replaced atomically).

    `records` are `contrast_sets.jsonl` lines. Same records and seed give byte-identical files.
    `files_by_image` (image id -> file name, from `image_files(folder)`) makes each URL point at the
    image's real file; without it, `{image_id}.jpg` is assumed. `advance(1)` per record validated.
    """
    if items_per_hit < 1:
        raise InputError(f"--items-per-hit must be at least 1, got {items_per_hit}")
    if assignments < 1:
        raise InputError(f"--assignments must be at least 1, got {assignments}")
    reward_value = _parse_reward(reward)
    _check_base_url(images_base_url)
    recs = validate_records(counted(records, advance), source=source)
    gold_items = gold_from_dicts(gold, source="<gold>") if gold is not None else None
    if gold_items and not 1 <= gold_per_hit < items_per_hit:
        raise InputError(f"--gold-per-hit must be between 1 and items-per-hit - 1, got {gold_per_hit}")

    rng = random.Random(seed)
    pairs = sample_pairs(recs, sample, rng)
    hits, warnings = build_hits(pairs, rng=rng, base_url=images_base_url, items_per_hit=items_per_hit,
                                gold=gold_items, gold_per_hit=gold_per_hit, files=files_by_image)
    if assignments < 2:
        warnings.append("--assignments 1 gives no agreement statistics; the paper's kappa needs at least 2")

    layout = render_layout(items_per_hit, title=title)
    columns = csv_columns(items_per_hit)
    if sorted(layout_variables(layout)) != sorted(columns):  # the contract ingest relies on; fail loudly if broken
        raise AssertionError("layout variables and CSV columns disagree")
    rows = [hit.row() for hit in hits]
    props = hit_properties(title=title, items_per_hit=items_per_hit, assignments=assignments, reward=reward_value)
    items = {item.token: item.manifest_entry() for hit in hits for item in hit.items}
    per_template: dict[str, int] = {}
    for pair in pairs:
        per_template[pair.template] = per_template.get(pair.template, 0) + 1
    n_gold = sum(1 for i in items.values() if i["role"] == "gold")
    n_padding = sum(1 for i in items.values() if i["role"] == "padding")
    manifest = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "params": {
            "sample": sample, "seed": seed, "assignments": assignments, "items_per_hit": items_per_hit,
            "reward": f"{reward_value:.2f}", "gold_per_hit": gold_per_hit if gold_items else 0,
            "images_base_url": images_base_url, "title": title, "source": source,
        },
        "columns": columns,
        "answer_fields": [f for slot in range(1, items_per_hit + 1) for f in answer_fields(slot)],
        "layout_sha256": hashlib.sha256(layout.encode("utf-8")).hexdigest(),
        "hits": [{"hit_token": hit.token, "items": [i.token for i in hit.items]} for hit in hits],
        "items": items,
        "per_template_images": per_template,
        "warnings": warnings,
    }
    summary = ExportSummary(
        out_dir=str(out_dir), n_images=len(pairs), n_hits=len(hits), n_items=len(items),
        n_gold_slots=n_gold, n_padding_slots=n_padding, assignments=assignments,
        reward=f"{reward_value:.2f}",
        cost_estimate=f"{reward_value * len(hits) * assignments:.2f}",
        per_template=dict(sorted(per_template.items())), warnings=warnings,
    )
    with atomic_dir(out_dir) as tmp:
        up = tmp / UPLOAD_DIR
        write_text(up / BATCH_CSV, _csv_text(columns, rows))
        write_text(up / LAYOUT_HTML, layout)
        write_text(up / QUESTION_XML, render_question_xml(layout, title=title, frame_height=DEFAULT_FRAME_HEIGHT))
        write_json(up / HIT_PROPERTIES, props, indent=True)
        api_lines = b"".join(
            dumps({**props, "RequesterAnnotation": row["hit_token"],
                   "Question": render_question_xml(fill_layout(layout, row), title=title)})
            for row in rows)
        write_text(up / API_HITS, api_lines.decode("utf-8"))
        write_json(tmp / MANIFEST, manifest, indent=True)
    return summary
