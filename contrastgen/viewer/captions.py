"""The caption viewer: each true caption with its negatives and, for each negative, the facts of
the scene graph that make it false, in words; the image with the caption's box where images are
given. `contrastgen view OUT` writes it when OUT is a `captions generate` output.

Why plain pages and not the contrast-set viewer's app: a caption record is read at a glance (one
image, one caption, a few negatives), so the pages are static HTML, a fixed number of records
each, readable from disk with no script. Every text from the records is HTML-escaped: captions
and graph names are data, never markup.
"""

from __future__ import annotations

import html
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from contrastgen.files.atomic import atomic_dir
from contrastgen.records import read_caption_records

PER_PAGE = 100
PROOF_WORDS = {
    "empty_phrase": "no object the words may denote fits one of the phrases",
    "no_pair": "no pair of objects the phrases may denote stands in the relation",
    "referents": "each \"the\" names exactly one object, and the claim fails of them",
}
STYLE = """body{font:15px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:70em;color:#222}
.rec{border-top:1px solid #ccc;padding:.8em 0;display:flex;gap:1.2em}.pic{position:relative;flex:0 0 320px}
.pic img{width:320px;display:block}.box{position:absolute;border:2px solid #e33}
.cap{font-size:1.15em;font-weight:600}.neg{margin:.4em 0 .4em 1em}.kind{font:12px monospace;background:#eee;
padding:1px 5px;border-radius:3px}.false{color:#a11}ul{margin:.2em 0 .2em 1.2em;padding:0}.meta{color:#777;
font-size:12px}nav a{margin-right:.6em}table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def fact_words(fact: Mapping[str, Any]) -> str:
    """One fact of the evidence as a sentence a reader checks against the graph."""
    kind = fact.get("fact")
    if kind == "may_be":
        ids = fact.get("ids") or []
        listed = ", ".join(_e(i) for i in ids) if ids else "none"
        return f"objects \u201c{_e(fact.get('noun'))}\u201d may denote: {listed}"
    if kind == "not_attribute":
        return (f"object {_e(fact.get('id'))} is not {_e(fact.get('attribute'))}: it is {_e(fact.get('value'))} "
                f"({_e(fact.get('because'))})")
    if kind == "not_relation":
        because = fact.get("because") or {}
        return (f"{_e(fact.get('subject'))} is not {_e(fact.get('relation'))} {_e(fact.get('object'))}: the graph "
                f"has {_e(because.get('subject'))} {_e(because.get('name'))} {_e(because.get('object'))}")
    if kind == "object":
        attrs = ", ".join(_e(a) for a in fact.get("attributes") or [])
        return f"object {_e(fact.get('id'))} ({_e(fact.get('name'))})" + (f": {attrs}" if attrs else "")
    if kind == "relation":
        return f"{_e(fact.get('subject'))} {_e(fact.get('name'))} {_e(fact.get('object'))}"
    if kind == "object_count":
        return f"the scene lists all its objects: {_e(fact.get('count'))}"
    return _e(fact)


def _facts(facts: Iterable[Mapping[str, Any]]) -> str:
    return "<ul>" + "".join(f"<li>{fact_words(f)}</li>" for f in facts) + "</ul>"


def _picture(record: Mapping[str, Any], images: str | None) -> str:
    if images is None:
        return ""
    width, height = record["image_size"]
    x, y, w, h = record["region"]
    src = f"{images.rstrip('/')}/{quote(str(record['image_id']))}.jpg"
    box = ""
    if width and height:
        box = (f'<div class="box" style="left:{100 * x / width:.2f}%;top:{100 * y / height:.2f}%;'
               f'width:{100 * w / width:.2f}%;height:{100 * h / height:.2f}%"></div>')
    # CLEVR's renders are PNG: the page tries `.png` where `.jpg` is missing
    fallback = "if(!this.dataset.png){this.dataset.png=1;this.src=this.src.replace(/[.]jpg$/,'.png')}"
    return (f'<div class="pic"><img src="{_e(src)}" alt="image {_e(record["image_id"])}" loading="lazy" '
            f'onerror="{fallback}">{box}</div>')


def added_words(change: Mapping[str, Any]) -> str:
    """What a matched add pair adds to its base on each side (the caption a true object or
    attribute, the negative a false one), or "" for any other pair."""
    if not isinstance(change, Mapping) or "true" not in change:
        return ""
    return (f' <span class="meta">the same base with \u201c{_e(change.get("to"))}\u201d added, where the caption '
            f'adds \u201c{_e(change["true"])}\u201d</span>')


def record_html(record: Mapping[str, Any], images: str | None = None) -> str:
    negatives = []
    for n in record["negatives"]:
        ev = n.get("evidence") or {}
        negatives.append(
            f'<div class="neg"><span class="kind">{_e(n["kind"])}</span> <span class="false">{_e(n["caption"])}</span>'
            f'{added_words(n.get("change") or {})}'
            f' <span class="meta">false because {_e(PROOF_WORDS.get(ev.get("proof"), ev.get("proof")))}</span>'
            f'{_facts(ev.get("facts") or [])}</div>')
    return (f'<div class="rec" id="{_e(record["id"])}">{_picture(record, images)}<div>'
            f'<div class="cap">{_e(record["caption"])}</div>'
            f'<div class="meta">{_e(record["id"])} \u00b7 image {_e(record["image_id"])} \u00b7 true because:</div>'
            f'{_facts((record.get("evidence") or {}).get("facts") or [])}{"".join(negatives)}</div></div>')


def _page(title: str, body: str) -> bytes:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
            f"<style>{STYLE}</style></head><body>{body}</body></html>\n").encode()


def _nav(page: int, pages: int) -> str:
    links = ['<a href="index.html">summary</a>']
    if page > 1:
        links.append(f'<a href="page-{page - 1:05d}.html">previous</a>')
    if page < pages:
        links.append(f'<a href="page-{page + 1:05d}.html">next</a>')
    return f"<nav>{''.join(links)} page {page} of {pages}</nav>"


def write_caption_site(source: str | os.PathLike[str], site: str | os.PathLike[str], *,
                       images: str | None = None) -> Path:
    """Write the caption viewer of `source` to `site` (replaced whole); returns its index.html.
    `images`: a base URL or file URI under which `{image_id}.jpg` is."""
    kinds: Counter[str] = Counter()
    proofs: Counter[tuple[str, str]] = Counter()
    records = 0
    with atomic_dir(site) as tmp:
        batch: list[str] = []
        page = 0

        def flush(last: bool) -> None:
            nonlocal page, batch
            if batch or (last and page == 0):
                page += 1
                (tmp / f"page-{page:05d}.html").write_bytes(_page(f"captions, page {page}",
                                                                  "<!--nav-->" + "".join(batch)))
                batch = []

        for record in read_caption_records(source):
            records += 1
            for n in record["negatives"]:
                kinds[n["kind"]] += 1
                proofs[n["kind"], str((n.get("evidence") or {}).get("proof"))] += 1
            batch.append(record_html(record, images))
            if len(batch) == PER_PAGE:
                flush(False)
        flush(True)
        for p in range(1, page + 1):  # the navigation needs the page count, known at the end
            file = tmp / f"page-{p:05d}.html"
            file.write_bytes(file.read_bytes().replace(b"<!--nav-->", _nav(p, page).encode(), 1))
        rows = "".join(f"<tr><td style='text-align:left'><a href='page-00001.html'>{_e(k)}</a></td><td>{n}</td>"
                       f"<td style='text-align:left'>{_e(', '.join(f'{pr} {c}' for (kk, pr), c in sorted(proofs.items()) if kk == k))}</td></tr>"
                       for k, n in kinds.items())
        summary = (f"<h1>Captions and their proven negatives</h1><p>{records} true captions, "
                   f"{sum(kinds.values())} negatives, {page} pages.</p><table><tr><th style='text-align:left'>kind</th>"
                   f"<th>negatives</th><th style='text-align:left'>proofs</th></tr>{rows}</table>"
                   f"<p><a href='page-00001.html'>first page</a></p>")
        (tmp / "index.html").write_bytes(_page("captions", summary))
    return Path(site) / "index.html"
