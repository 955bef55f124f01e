"""The records of a file's top-level JSON object, parsed by orjson a few records at a time.

Why: a generation run must not hold its input file parsed (a parsed GQA question costs about
6 KB), so it streams. ijson streams at about 55 MB/s, which made parsing a fifth of a
million-question run's CPU time; orjson parses only whole documents, and a whole GQA file at
once is no faster than ijson (its objects no longer fit in the CPU's cache). So the file is cut
into small pieces of whole records and orjson parses each piece, wrapped in braces, as an object
of its own: 250 MB/s on GQA-like questions.

Nothing here is guessed. A cut is placed just before the next record's key, where a count of
braces says the depth is back at the top; braces inside strings could fool that count, but then
the piece is not valid JSON (a string or an object is left open), orjson refuses it, and the cut
is placed again by an exact count that skips strings. A piece that parses is, with the cuts
before and after it, a run of whole top-level records. orjson keeps the last of two records with
the same key where a streaming reader sees both, so each piece's keys are counted in its text
before it is parsed (`top_level_keys`): a piece with fewer parsed records than keys is read by
ijson, which passes both to the caller's duplicate check. The same count gives the piece's depth
and its keys one and two levels down (a scene graph's object ids): a piece nested deeper than the
limit (`files.limits`) or with a key given twice inside a record, anything orjson refuses
(malformed JSON, a lone surrogate), and a record longer than the record limit, send the whole
file to the careful path: a scan of the raw bytes that refuses what passes a limit, then ijson,
which skips the records already given. The records, and the error a bad file raises, are then
exactly what ijson alone would give. Two differences remain: integers from 2**63 on, which ijson's C backend
refuses as an overflow, are read as the whole-file loaders (orjson) read them, exactly up to
2**64 and beyond as floats; a float where a field wants a string or an integer is then refused
by the record's validation. And a lone surrogate escape (\\ud800 without its pair), which ijson
reads as "?" or cannot decode, is refused naming its record, as the whole-file readers refuse it.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import ijson
import numpy as np
import orjson

from contrastgen.errors import InputError
from contrastgen.files.limits import (
    StructureScan,
    dict_sizes_by_depth,
    duplicate_key_error,
    limits,
    scan_bytes,
    scan_file,
)
from contrastgen.jsonio import open_input

# A piece is the first whole records past this many bytes. Small pieces parse fastest: their
# objects are made and freed in the same memory, still in the CPU's cache (on GQA-like questions
# orjson reads 250 MB/s in 16 KiB pieces, 80 MB/s in 4 MiB ones, ijson 55 MB/s).
PIECE_BYTES = 32 << 10
# The file is read this much at a time.
_BLOCK_BYTES = 1 << 20
# Past this many pieces' worth without a guessed cut, the cut is looked for exactly (a string may
# hold a brace).
_EXACT_AFTER_PIECES = 8

# The end of an object value and the start of the next key: where records meet.
_CANDIDATE = re.compile(rb'\}[ \t\r\n]*,[ \t\r\n]*"')
# An escape inside a string: removed before structure is counted, so an escaped quote is not
# taken for the end of a string.
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
# Structure only: quotes, colons, and braces and brackets as one kind of bracket.
_STRUCTURE = bytes(range(256)).replace(b"[", b"{").replace(b"]", b"}")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"{}[]:')
_STRING = re.compile(rb'"[^"]*"')
_DEPTH_STEP = np.zeros(256, np.int8)
_DEPTH_STEP[[ord("{"), ord("[")]], _DEPTH_STEP[[ord("}"), ord("]")]] = 1, -1
_COLON = ord(":")


class _OrjsonRefuses(Exception):
    """What follows cannot be read by orjson: the caller turns to ijson."""


def stream_records(file: Path, what: str) -> Iterator[tuple[str, Any]]:
    """(id, record) pairs of one file's top-level object, in file order; `what` the records are
    keyed by ("question", "image"), for the errors. The input limits (`files.limits`) hold
    before any byte is parsed."""
    with open_input(file) as fh:
        start = _object_start(fh, file)
        if start is None:
            raise InputError("file is empty", path=str(file))
        if start < 0:
            raise InputError(f"expected an object keyed by {what} id", path=str(file))
        given = 0
        fh.seek(start + 1)
        try:
            for piece in _pieces(fh, inner_ids=what == "image"):
                for key, record in piece:
                    given += 1
                    yield key, record
                del piece  # so a piece's records are freed before the next one is parsed
            return
        except _OrjsonRefuses:
            pass
        except OSError as exc:
            raise InputError(f"cannot be read ({exc.strerror or exc})", path=str(file)) from None
        fh.seek(0)
        scan = scan_file(fh, str(file))  # refuses what is too deep or too large, in bounded memory
        fh.seek(0)
        backend = _EXACT_STRINGS if _has_surrogate_escape(fh) else ijson
        fh.seek(0)
        yield from _ijson_records(fh, file, what, skip=given, scan=scan, backend=backend)


# ijson's C backend reads a lone high surrogate escape (\\ud800) as "?" and a lone low one as bytes
# it cannot decode; its Python backend gives the escape's exact code point, which the careful path
# then refuses. Only a file with a surrogate escape somewhere is read the slower way.
_EXACT_STRINGS = ijson.get_backend("python")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _has_surrogate_escape(fh: IO[bytes]) -> bool:
    tail = b""
    while block := fh.read(_BLOCK_BYTES):
        if _SURROGATE_ESCAPE.search(tail + block):
            return True
        tail = block[-5:]
    return False


_FIRST_KEY = re.compile(rb'\s*\{\s*"(?:[^"\\]|\\.)*"\s*:\s*')
_FIRST_KEY_NAME = re.compile(rb'\s*\{\s*("(?:[^"\\]|\\.)*")\s*:')
FIRST_RECORD_BYTES = 1 << 20  # a record is a few KB; a first value larger than this is no record


def first_record(file: Path) -> Any:
    """The first value of the file's top-level object, read from the file's first
    `FIRST_RECORD_BYTES` (None where the file is no such object, is empty or malformed there, or
    its first value runs past them: a whole-file reader then says what it is). Why: telling
    formats apart must not parse a gigabyte, nor, where the first value is a VQA file's whole
    `questions` list, parse that list twice. Bytes that are not UTF-8 read as U+FFFD: the value
    then only has to tell the format, and the whole-file reader refuses the file."""
    with open_input(file) as fh:
        head = fh.read(FIRST_RECORD_BYTES)
    key = _FIRST_KEY.match(head)
    if key is None:
        return None
    try:
        scan_bytes(head, str(file))  # the decoder below recurses: nothing deeper than the limit
        value, _ = json.JSONDecoder().raw_decode(head[key.end():].decode("utf-8", errors="replace"))
    except (ValueError, InputError):
        return None
    return value


def top_level_start(file: Path) -> tuple[str, str | None]:
    """What the file's top level is, from its first bytes: ("object", its first key, or None if
    it has none or it is unreadable there), ("array", None), or ("other", None). Why not a
    streaming parser's events: before the first key they would build any nesting the file opens
    with, and a format sniffer must cost nothing whatever the file holds."""
    with open_input(file) as fh:
        head = fh.read(FIRST_RECORD_BYTES)
    stripped = head.lstrip()
    if stripped[:1] == b"[":
        return "array", None
    if stripped[:1] != b"{":
        return "other", None
    key = _FIRST_KEY_NAME.match(head)
    if key is None:
        return "object", None
    try:
        name = json.loads(key.group(1).decode("utf-8"))
    except ValueError:
        return "object", None
    return "object", name


def _object_start(fh: IO[bytes], file: Path) -> int | None:
    """Offset of the opening brace; -1 if the first character is another, None if there is none."""
    offset = 0
    while chunk := _read(fh, 4096, file):
        stripped = chunk.lstrip()
        if stripped:
            return offset + len(chunk) - len(stripped) if stripped[:1] == b"{" else -1
        offset += len(chunk)
    return None


def _read(fh: IO[bytes], size: int, file: Path) -> bytes:
    try:
        return fh.read(size)
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror or exc})", path=str(file)) from None


def _pieces(fh: IO[bytes], *, inner_ids: bool) -> Iterator[list[tuple[str, Any]]]:
    """Each piece's records as (key, value) pairs, from just after the opening brace."""
    buffer, start = b"", 0  # buffer[start:] is not yet given
    while True:
        block = fh.read(_BLOCK_BYTES)
        if not block:
            # the rest holds the closing brace (and whitespace), so it parses after an opening one
            rest = buffer[start:]
            yield _parse(b"{" + rest, rest, inner_ids)
            return
        buffer = buffer[start:] + block
        start = 0
        while len(buffer) - start > PIECE_BYTES:
            cut = _guess_cut(buffer, start)
            try:
                records = None if cut is None else _parse_piece(buffer, start, cut[0], inner_ids)
            except _OrjsonRefuses:
                records = None  # the guess may be inside a string: cut again, exactly
            if records is None and (cut is not None or len(buffer) - start > _EXACT_AFTER_PIECES * PIECE_BYTES):
                exact = _exact_cut(buffer, start)
                if exact is not None and exact == cut:
                    raise _OrjsonRefuses  # whole records, and orjson refuses them
                cut = exact
                records = None if cut is None else _parse_piece(buffer, start, cut[0], inner_ids)
            if cut is None:
                if len(buffer) - start > limits().max_record_bytes:
                    raise _OrjsonRefuses  # one record longer than the limit: the scan names it
                break  # the records run past the buffer: read on
            if cut[0] - start > limits().max_record_bytes:
                raise _OrjsonRefuses  # it may hold a record longer than the limit: the scan says
            yield records
            records = None
            start = cut[1]


def _parse_piece(buffer: bytes, start: int, end: int, inner_ids: bool) -> list[tuple[str, Any]]:
    members = buffer[start:end]
    return _parse(b"{" + members + b"}", members, inner_ids)


def _guess_cut(buffer: bytes, start: int) -> tuple[int, int] | None:
    """(end of the piece, start of the next) at the first place `PIECE_BYTES` or more after
    `start` (where the top level is) where an object closes at the top level and a key follows,
    by a count of raw braces: fast, and wrong only when a string holds a brace."""
    position = start + PIECE_BYTES
    depth = buffer.count(b"{", start, position) - buffer.count(b"}", start, position)
    for match in _CANDIDATE.finditer(buffer, position):
        close = match.start() + 1
        depth += buffer.count(b"{", position, close) - buffer.count(b"}", position, close)
        position = close
        if depth == 0:
            return close, match.end() - 1
    return None


def _exact_cut(buffer: bytes, start: int) -> tuple[int, int] | None:
    """`_guess_cut` with strings skipped: the depth and whether each byte is inside a string, for
    every byte after `start` (several times slower, so only after a guess fails)."""
    text = np.frombuffer(buffer, np.uint8, offset=start)
    quote = text == ord('"')
    escape_of = -1
    for backslash in np.flatnonzero(text == ord("\\")).tolist():
        if backslash != escape_of:  # not itself escaped: the next byte is
            escape_of = backslash + 1
            if escape_of < len(quote):
                quote[escape_of] = False
    inside = (np.cumsum(quote, dtype=np.uint8) & 1).view(bool)
    step = _DEPTH_STEP[text]
    step[inside] = 0
    depth = np.cumsum(step, dtype=np.int32)
    for match in _CANDIDATE.finditer(buffer, start + PIECE_BYTES):
        close = match.start() - start
        if depth[close] == 0 and not inside[close]:
            return match.start() + 1, match.end() - 1
    return None


def _structure(text: bytes) -> bytes:
    """`text`'s colons and brackets outside strings (brackets written as braces)."""
    if b"\\" in text:
        text = _ESCAPE.sub(b"", text)
    structure = text.translate(_STRUCTURE, _NOT_STRUCTURE).replace(b'""', b"")
    # an adjacent pair of quotes encloses nothing structural, so dropping it keeps every other
    # string's ends paired; what is left are strings that hold structure
    if b'"' in structure:
        structure = _STRING.sub(b"", structure)
    return structure


def top_level_keys(text: bytes) -> int:
    """How many keys `text` (valid JSON object members, without the enclosing braces) gives at
    its top level, duplicates counted: the colons outside strings at depth zero."""
    structure = np.frombuffer(_structure(text), np.uint8)
    depth = np.cumsum(_DEPTH_STEP[structure], dtype=np.int32)
    return int(np.count_nonzero((structure == _COLON) & (depth == 0)))


def _parse(document: bytes, members: bytes, inner_ids: bool) -> list[tuple[str, Any]]:
    """The records of a piece. Its structure is counted before it is parsed: a piece nested
    deeper than the limit goes to the careful path, which names the problem. A record id given
    twice is passed on to the caller's check; with `inner_ids` (scene graphs, whose objects are
    keyed by id), a key given twice inside a record goes to the careful path too. Questions skip
    that walk over their fields: no id lives inside a question."""
    structure = np.frombuffer(_structure(members), np.uint8)
    depth = np.cumsum(_DEPTH_STEP[structure], dtype=np.int32)
    # the members sit inside the top-level object: their depth 0 is its depth 1
    if depth.size and int(depth.max()) + 1 > limits().max_depth:
        raise _OrjsonRefuses
    try:
        parsed = orjson.loads(document)
    except orjson.JSONDecodeError:
        raise _OrjsonRefuses from None
    if not isinstance(parsed, dict):
        raise _OrjsonRefuses
    colons = structure == _COLON
    if len(parsed) != int(np.count_nonzero(colons & (depth == 0))):
        # a key given twice: ijson gives both, as the whole-file reader would
        return list(ijson.kvitems(io.BytesIO(document), "", use_float=True))
    if inner_ids:
        sizes = dict_sizes_by_depth(parsed, 3)
        if (sizes[2] != int(np.count_nonzero(colons & (depth == 1)))
                or sizes[3] != int(np.count_nonzero(colons & (depth == 2)))):
            raise _OrjsonRefuses  # a key given twice inside a record
    return list(parsed.items())


def _holds_lone_surrogate(value: Any) -> bool:
    """Does a string anywhere in `value` (a key or a value) hold a lone surrogate? orjson, and so
    every whole-file reader, refuses such text, so a file must not be read by one path and refused
    by the other. Only records of the careful path are asked, and orjson's encoder answers for the
    usual record at once."""
    try:
        orjson.dumps(value)
        return False
    except orjson.JSONEncodeError:
        pass
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _ijson_records(fh: IO[bytes], file: Path, what: str, *, skip: int,
                   scan: StructureScan, backend: Any = ijson) -> Iterator[tuple[str, Any]]:
    """The careful path: ijson, after the scan has bounded what it will build. Keys given twice
    inside records are found by comparing the keys parsed with those the scan counted."""
    last = None
    inner = [0, 0]  # keys of the records, and of the objects the records hold
    try:
        for index, (key, record) in enumerate(backend.kvitems(fh, "", use_float=True)):
            last = str(key)
            sizes = dict_sizes_by_depth(record, 2)
            inner[0] += sizes[1]
            inner[1] += sizes[2]
            if index >= skip:
                if _holds_lone_surrogate(record):
                    raise InputError(f"malformed JSON in {what} {last}: a string holds a lone surrogate escape "
                                     "(half of a UTF-16 pair), which is not text", path=str(file))
                yield last, record
    except ijson.JSONError as exc:
        after = f" after {what} {last}" if last is not None else ""
        raise InputError(f"malformed JSON{after} ({exc})", path=str(file)) from None
    except UnicodeDecodeError:
        # ijson's C backend decodes a lone surrogate escape (\udc00) into bytes no UTF-8 reader
        # takes; orjson and the whole-file readers refuse the same text as invalid JSON
        after = f" after {what} {last}" if last is not None else ""
        raise InputError(f"malformed JSON{after}: a string holds a lone surrogate escape or "
                         "text that is not UTF-8", path=str(file)) from None
    counted = scan.keys_at_depth
    if inner != [int(counted[2]), int(counted[3])]:
        raise duplicate_key_error(fh, str(file))
