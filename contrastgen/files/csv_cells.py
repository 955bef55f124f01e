"""CSV cells a spreadsheet will not run as formulas, and their text read back.

Why: a requester opens `batch_input.csv` and the results in a spreadsheet; a question text that
begins `=HYPERLINK("http://...")` would be a live formula there. As OWASP's "CSV Injection" page
advises, a cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a
leading apostrophe, which spreadsheets take as "this is text" and do not show. Numbers (`-0.5`)
are left alone: they cannot be formulas. A cell that itself begins with apostrophes before such a
character gets one more, so `restore` gives back exactly the text that was written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_FORMULA_START = frozenset("=+-@\t\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def needs_apostrophe(text: str) -> bool:
    """Whether a spreadsheet could read `text` as a formula (or `restore` would change it)."""
    stripped = text.lstrip("'")
    return bool(stripped) and stripped[0] in _FORMULA_START and _NUMBER.fullmatch(stripped) is None


def neutral(value: Any) -> str:
    """The cell to write for `value`."""
    text = "" if value is None else str(value)
    return "'" + text if needs_apostrophe(text) else text


def restore(cell: str) -> str:
    """The text a cell written by `neutral` stands for."""
    return cell[1:] if cell.startswith("'") and needs_apostrophe(cell[1:]) else cell


def neutral_row(row: Mapping[str, Any]) -> dict[str, str]:
    return {key: neutral(value) for key, value in row.items()}


def restored_row(row: Mapping[str, str | None]) -> dict[str, str | None]:
    return {key: restore(value) if isinstance(value, str) else value for key, value in row.items()}
