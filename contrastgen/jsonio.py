"""Reading and writing JSON/JSONL with orjson.

Every reader holds its input to the limits of `contrastgen.files.limits` before parsing it, and
every writer writes whole or not at all (`contrastgen.files.atomic`): a run that fails at record
900,000 leaves neither a half-written `contrast_sets.jsonl` nor a half-read one.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from contrastgen.errors import InputError
from contrastgen.files.atomic import atomic_file
from contrastgen.files.limits import SCAN_BLOCK, StructureScan, check_unique_keys

# Sorted keys and a trailing newline make outputs byte-identical across runs and platforms.
_DUMP_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


def dumps(obj: Any, *, indent: bool = False) -> bytes:
    """Serialise deterministically (sorted keys, newline-terminated)."""
    opts = _DUMP_OPTS | (orjson.OPT_INDENT_2 if indent else 0)
    return orjson.dumps(obj, option=opts)


def open_input(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open an input file for reading; every way it can fail is an `InputError` naming it."""
    p = Path(path)
    try:
        return p.open("rb")
    except FileNotFoundError:
        raise InputError("file not found", path=str(p)) from None
    except IsADirectoryError:
        raise InputError("expected a file, got a directory", path=str(p)) from None
    except PermissionError:
        raise InputError("permission denied: the file cannot be read", path=str(p)) from None
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror or exc})", path=str(p)) from None


def open_text(path: str | os.PathLike[str]) -> IO[str]:
    """`open_input` for a UTF-8 text file read as CSV is read (a byte-order mark is skipped)."""
    fh = open_input(path)
    return io.TextIOWrapper(fh, encoding="utf-8-sig", newline="")


def _read_scanned(p: Path) -> tuple[bytearray, StructureScan]:
    """The file's bytes, scanned for the limits block by block as they are read: a device or a
    pipe that never ends stops at the first limit it passes, not when memory runs out."""
    with open_input(p) as fh:
        scan = StructureScan(str(p))
        data = bytearray()
        try:
            while block := fh.read(SCAN_BLOCK):
                scan.feed(block)
                data += block
        except OSError as exc:
            raise InputError(f"cannot be read ({exc.strerror or exc})", path=str(p)) from None
    return data, scan


def read_json(path: str | os.PathLike[str]) -> Any:
    """Parse a JSON file within the input limits (`contrastgen.files.limits`); errors name the
    file and, for syntax errors, the position. A key given twice in an object of the top three
    levels (where keys are ids) is refused."""
    p = Path(path)
    data, scan = _read_scanned(p)
    if not data.strip():
        raise InputError("file is empty", path=str(p))
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"malformed JSON ({exc})", path=str(p)) from None
    check_unique_keys(data, value, scan, str(p))
    return value


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[Any]:
    """Yield one parsed object per non-blank line; errors name the file and the line. Read a
    block at a time, so a line without an end costs no more memory than the record limit."""
    return (value for _, value in read_jsonl_lines(path))


def read_jsonl_lines(path: str | os.PathLike[str]) -> Iterator[tuple[bytes, Any]]:
    """`read_jsonl`, each object with the line it was parsed from: for a caller that hands
    records to other processes, whose bytes cost less to send and parse there than the objects."""
    p = Path(path)
    with open_input(p) as fh:
        scan = StructureScan(str(p), lines=True)
        rest = b""
        lineno = 0
        while True:
            try:
                block = fh.read(SCAN_BLOCK)
            except OSError as exc:
                raise InputError(f"cannot be read ({exc.strerror or exc})", path=str(p)) from None
            if not block:
                break
            scan.feed(block)
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            for line in lines:
                lineno += 1
                if line.strip():
                    yield line, _parse_line(line, p, lineno)
        if rest.strip():
            yield rest, _parse_line(rest, p, lineno + 1)


def _parse_line(line: bytes, p: Path, lineno: int) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"malformed JSON ({exc})", path=str(p), record=f"line {lineno}") from None


def write_json(path: str | os.PathLike[str], obj: Any, *, indent: bool = False) -> None:
    with atomic_file(path) as fh:
        fh.write(dumps(obj, indent=indent))


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[Any]) -> None:
    with atomic_file(path) as fh:
        for row in rows:
            fh.write(dumps(row))


def write_chunks(path: str | os.PathLike[str], chunks: Iterable[bytes]) -> None:
    """Write already-serialised pieces (see `contrastgen.results.view_bytes`) one after the other."""
    with atomic_file(path) as fh:
        fh.writelines(chunks)


def keyed_object(items: Iterable[tuple[str, bytes]]) -> Iterator[bytes]:
    """`{"key": value, ...}` plus a newline, from (key, serialised value) pairs given in key
    order: the bytes `dumps` writes for that object, without parsing the values back. Why: large
    outputs keep their records serialised (`datasets.gqa.gqa_json`), a sixth of their parsed size."""
    yield b"{"
    for i, (key, value) in enumerate(items):
        yield (b"," if i else b"") + orjson.dumps(key) + b":" + value
    yield b"}\n"


def write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_file(path) as fh:
        fh.write(text.encode("utf-8"))
