"""Every CSV or TSV the project reads goes through `csv_rows`, so each gets the same refusals.

Why one reader: a model's scores, a crowd platform's results and the project's own HIT batches
are all files a user hands over, and each can be cut short, hold bytes that are not UTF-8, or a
cell past the csv module's field limit (128 KiB). Read with a bare `csv.DictReader`, those end
in a traceback; here they are one sentence naming the file and the line, exit 2.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from contrastgen.errors import InputError
from contrastgen.jsonio import open_text


def _text_lines(lines: Iterable[str], path: str) -> Iterator[str]:
    """The file's lines, refusing a NUL byte. Why: since Python 3.11 the csv module reads NUL as
    an ordinary character, so a binary file or a cell holding one would pass as text and an id
    with a NUL in it would be taken as a different, unknown id."""
    for number, line in enumerate(lines, 1):
        if "\x00" in line:
            raise InputError("a NUL byte: not CSV text", path=path, record=f"line {number}")
        yield line


@contextmanager
def csv_rows(path: str | os.PathLike[str], *, delimiter: str = ",") -> Iterator[csv.DictReader]:
    """A `DictReader` over a UTF-8 file (a byte-order mark is skipped). A byte that is not UTF-8,
    an open quote at the end of the file, a NUL byte or an oversized cell raised while the caller
    iterates becomes an `InputError` naming the line the reader had reached."""
    with open_text(path) as fh:
        reader = csv.DictReader(_text_lines(fh, str(path)), delimiter=delimiter, strict=True)
        try:
            yield reader
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text (near line {reader.line_num + 1}: {exc.reason})",
                             path=str(path)) from None
        except csv.Error as exc:
            raise InputError(f"malformed CSV ({exc})", path=str(path), record=f"line {reader.line_num}") from None
