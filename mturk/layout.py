"""The HIT layout: what workers see, its `${...}` variables, and how values fill them.

MTurk's requester site fills a layout's `${name}` variables from the columns of the batch input
CSV, HTML-escaping each value. The same substitution is needed twice more here: to write one
ready-made HTMLQuestion per HIT for requesters who create HITs through the API, and to render
the local preview. `string.Template` implements exactly MTurk's `${name}` syntax, so we use it
rather than a regular expression of our own; the layout's script therefore contains no `$`.
"""

from __future__ import annotations

import html
import string
from functools import lru_cache

import jinja2
import regex

TEMPLATE_PACKAGE = "contrastgen.mturk"
DEFAULT_TITLE = "Answer questions about photos"
# Pixels the worker site gives the HIT frame; 0 lets MTurk size it to the content.
DEFAULT_FRAME_HEIGHT = 0

_SPACES = regex.compile(r"\s+")
_END_PUNCT = regex.compile(r"[\s?.!]+$")


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader(TEMPLATE_PACKAGE, "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def render_template(name: str, **context: object) -> str:
    return _environment().get_template(name).render(**context)


def item_variables(slot: int) -> list[str]:
    """The layout variables of one item slot (1-based), in the order the CSV lists them."""
    return [f"item{slot}_token", f"item{slot}_image_url", f"item{slot}_question"]


def answer_fields(slot: int) -> tuple[str, str]:
    """The form fields a worker fills for one slot: the free answer and the cannot-tell box."""
    return f"item{slot}_answer", f"item{slot}_cannot_tell"


def csv_columns(items_per_hit: int) -> list[str]:
    """Batch input CSV columns, exactly the layout's variables."""
    cols = ["hit_token"]
    for slot in range(1, items_per_hit + 1):
        cols.extend(item_variables(slot))
    return cols


def render_layout(items_per_hit: int, *, title: str = DEFAULT_TITLE) -> str:
    """The HTML layout to paste into (or upload as) the MTurk project's design layout."""
    return render_template("hit_layout.jinja.html", n_items=items_per_hit, title=title)


def layout_variables(layout: str) -> list[str]:
    """Every `${name}` in a layout, in order of first appearance (as MTurk would read them)."""
    seen: dict[str, None] = {}
    for m in string.Template.pattern.finditer(layout):
        name = m.group("braced") or m.group("named")
        if name:
            seen.setdefault(name, None)
    return list(seen)


def fill_layout(layout: str, row: dict[str, str]) -> str:
    """Substitute one CSV row into the layout the way MTurk does (values HTML-escaped).

    A variable with no value is an error rather than a silent blank, because a blank image or
    question in a paid HIT is a wasted assignment.
    """
    escaped = {k: html.escape(str(v), quote=True) for k, v in row.items()}
    return string.Template(layout).substitute(escaped)


def render_question_xml(layout_html: str, *, title: str = DEFAULT_TITLE,
                        frame_height: int = DEFAULT_FRAME_HEIGHT) -> str:
    """Wrap a (filled or unfilled) layout in an HTMLQuestion document for the MTurk API.

    Everything inside is HTML-escaped, so the CDATA section cannot be closed early by `]]>`.
    """
    if "]]>" in layout_html:
        raise ValueError("layout contains ']]>' and cannot go into a CDATA section")
    return render_template("question.jinja.xml", layout=layout_html, title=title, frame_height=frame_height)


def display_question(text: str) -> str:
    """Present every question in the same typographic form.

    Why: generated questions may differ from GQA's in small ways (a missing question mark, a
    lower-case first letter, a double space) that would let an attentive worker tell which
    questions are perturbations. Original and perturbed questions both pass through here.
    """
    t = _SPACES.sub(" ", text).strip()
    t = _END_PUNCT.sub("", t)
    if not t:
        return t
    return t[0].upper() + t[1:] + "?"
