"""A local, offline preview of an exported batch, built only from the upload files.

Why only from `upload/`: the preview is meant to show exactly what workers get, so it reads
what MTurk reads (the layout and the batch CSV) and never the private manifest. Each HIT is
shown in its own frame, as on the worker site, with the real crowd-html-elements script swapped
for a local stand-in (`assets/crowd_preview.js`) so the page needs no network.
"""

from __future__ import annotations

from pathlib import Path

from contrastgen.errors import InputError
from contrastgen.files.csv_reading import csv_rows
from contrastgen.jsonio import read_json, write_text
from contrastgen.resources import package_resource

from .export import BATCH_CSV, HIT_PROPERTIES, LAYOUT_HTML, UPLOAD_DIR
from .layout import fill_layout, render_template

CROWD_SCRIPT = '<script src="https://assets.crowd.aws/crowd-html-elements.js"></script>'
PREVIEW_FILE = "preview.html"


def _stand_in_script() -> str:
    js = package_resource("contrastgen.mturk", "assets", "crowd_preview.js").read_text("utf-8")
    return f"<script>\n{js}</script>"


def _read_rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise InputError("file not found (is this an export directory?)", path=str(path))
    with csv_rows(path) as reader:
        rows = list(reader)
    if not rows:
        raise InputError("batch input CSV has no HIT rows", path=str(path))
    return rows


def hit_page(layout: str, row: dict[str, str]) -> str:
    """One HIT as a standalone HTML document, as the worker site would frame it."""
    if CROWD_SCRIPT not in layout:
        raise InputError("layout does not load crowd-html-elements; was it edited by hand?")
    body = fill_layout(layout, row).replace(CROWD_SCRIPT, _stand_in_script())
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head>\n"
            "<body style=\"font-family: sans-serif\">\n" + body + "</body></html>\n")


def render_preview(hit_dir: str | Path, *, n_hits: int = 3, out: str | Path | None = None) -> Path:
    """Write a self-contained preview of the first `n_hits` HITs; returns its path."""
    base = Path(hit_dir)
    up = base / UPLOAD_DIR
    layout_path = up / LAYOUT_HTML
    try:
        layout = layout_path.read_text("utf-8")
    except FileNotFoundError:
        raise InputError("file not found (is this an export directory?)", path=str(layout_path)) from None
    rows = _read_rows(up / BATCH_CSV)
    props = read_json(up / HIT_PROPERTIES)
    if n_hits < 1:
        raise InputError(f"--hits must be at least 1, got {n_hits}")
    try:
        hits = [{"token": row["hit_token"], "srcdoc": hit_page(layout, row)} for row in rows[:n_hits]]
    except KeyError as exc:
        raise InputError(f"batch CSV lacks the layout variable {exc.args[0]!r}", path=str(up / BATCH_CSV)) from None
    items_per_hit = sum(1 for k in rows[0] if k.endswith("_question"))
    page = render_template(
        "preview.jinja.html", hits=hits, n_hits=len(rows), source=str(base), items_per_hit=items_per_hit,
        assignments=props.get("MaxAssignments"), reward=props.get("Reward"), frame_height=900,
    )
    dest = Path(out) if out is not None else base / PREVIEW_FILE
    write_text(dest, page)
    return dest

