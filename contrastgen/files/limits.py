"""The limits every JSON input is held to, and the scan that enforces them before any parser runs.

Why a scan of the raw bytes first: a parser builds what it reads, so a 200 KB file of 100,000
nested brackets becomes gigabytes of nested lists in a streaming parser, or a recursion error in
a recursive one, before any check on the parsed value can run. `StructureScan` reads the bytes
in blocks and keeps only a few counters, so it refuses such a file in bounded memory, naming the
line and column: nesting deeper than `max_depth`, a string, a number or a record (a member of the
top-level object, or a line of a JSONL file) longer than `max_record_bytes`. It also counts the
keys at each depth, which is how a key given twice inside an object is noticed without a second
parse (`check_unique_keys`).

The limits come from the environment, so one setting covers every command:
`CONTRASTGEN_JSON_MAX_DEPTH` (default 64) and `CONTRASTGEN_JSON_MAX_RECORD_MIB` (default 16).
GQA's records nest at most 7 deep and weigh a few KB; the largest files (GQA's training scene
graphs) are millions of such records, which the record limit does not restrict.
"""

from __future__ import annotations

import functools
import io
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from contrastgen.errors import InputError

DEPTH_ENV = "CONTRASTGEN_JSON_MAX_DEPTH"
RECORD_ENV = "CONTRASTGEN_JSON_MAX_RECORD_MIB"
# orjson serialises at most 254 levels: a deeper input would be read and then fail on the way out
_DEPTH_CEILING = 200
SCAN_BLOCK = 4 << 20  # bytes scanned at a time


@dataclass(frozen=True)
class JsonLimits:
    """What one JSON input may hold."""

    max_depth: int = 64
    max_record_bytes: int = 16 << 20  # also the longest string or number

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> JsonLimits:
        env = os.environ if environ is None else environ
        depth = _positive(env, DEPTH_ENV, cls.max_depth)
        if depth > _DEPTH_CEILING:
            raise InputError(f"{DEPTH_ENV}={depth}: at most {_DEPTH_CEILING}")
        mib = _positive(env, RECORD_ENV, cls.max_record_bytes >> 20)
        return cls(max_depth=depth, max_record_bytes=mib << 20)


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"{name}={raw!r}: expected a whole number") from None
    if value < 1:
        raise InputError(f"{name}={raw!r}: expected a number of at least 1")
    return value


@functools.cache
def limits() -> JsonLimits:
    """This process's limits (read once from the environment)."""
    return JsonLimits.from_env()


# The bytes that matter to structure, by kind.
_OTHER, _QUOTE, _OPEN, _CLOSE, _BACKSLASH, _COLON, _NEWLINE, _COMMA = range(8)
_KIND = np.zeros(256, np.uint8)
_KIND[ord('"')] = _QUOTE
_KIND[[ord("{"), ord("[")]] = _OPEN
_KIND[[ord("}"), ord("]")]] = _CLOSE
_KIND[ord("\\")] = _BACKSLASH
_KIND[ord(":")] = _COLON
_KIND[ord("\n")] = _NEWLINE
_KIND[ord(",")] = _COMMA
_EMPTY = np.zeros(0, np.int64)


class StructureScan:
    """Feed the bytes of one JSON document (or, with `lines`, of a JSONL file) in order; each
    `feed` raises `InputError` as soon as a limit is passed.

    `record_depth`: the depth at which records open (1: the members of the top-level object or
    list; None: no record limit, for a whole document read at once). With `lines`, each line is a
    record and a newline ends whatever it interrupts (a JSONL line cannot hold a raw newline).
    """

    def __init__(self, path: str | None, *, lines: bool = False, record_depth: int | None = None,
                 bounds: JsonLimits | None = None):
        self.path, self.lines, self.record_depth = path, lines, record_depth
        self.bounds = bounds or limits()
        self.offset = 0  # of the next block in the document
        self.newlines = 0  # before the next block
        self.line_start = 0  # offset just after the last newline
        self.depth = 0
        self.in_string = False
        self.escape_next = False
        self.string_start = 0
        self.record_start: int | None = None
        self.token_start = 0  # where the current stretch without structure began
        # keys (colons outside strings) found at each depth: the depth of the object they are in
        self.keys_at_depth = np.zeros(self.bounds.max_depth + 2, np.int64)

    # -- errors --------------------------------------------------------------------------------

    def _fail(self, what: str, at: int, block: bytes, setting: str) -> None:
        """Raise for a problem at offset `at` of the document (inside `block` or before it)."""
        relative = at - self.offset
        if relative >= 0:
            line = self.newlines + block.count(b"\n", 0, relative) + 1
            last = block.rfind(b"\n", 0, relative)
            column = relative - last if last >= 0 else at - self.line_start + 1
        else:
            line, column = self.newlines + 1, at - self.line_start + 1
        record = f"line {line}" if self.lines else None
        where = f"at line {line}, column {column}" if not self.lines else f"at column {column}"
        raise InputError(f"{what} {where} (the limit is set by {setting})", path=self.path, record=record)

    # -- the scan -----------------------------------------------------------------------------

    def feed(self, block: bytes) -> None:
        if not block:
            return
        n = len(block)
        kind_all = _KIND[np.frombuffer(block, np.uint8)]
        pos = np.flatnonzero(kind_all)
        kind = kind_all[pos]
        del kind_all
        pos, kind = self._drop_escaped(pos, kind, n)
        is_quote = kind == _QUOTE
        is_newline = kind == _NEWLINE if self.lines else None
        # strings: a quote's parity (within its line, for JSONL) says whether it opens or closes
        quotes_before = np.cumsum(is_quote) - is_quote
        in_string_at_start = np.full(pos.size, self.in_string, bool)
        segment_start = None
        if is_newline is not None and is_newline.any():
            index = np.arange(pos.size)
            segment_start = np.maximum.accumulate(np.where(is_newline, index, -1))
            after_newline = segment_start >= 0
            base = np.where(after_newline, np.cumsum(is_quote)[np.maximum(segment_start, 0)], 0)
            quotes_before = quotes_before - base
            in_string_at_start[after_newline] = False
        inside = ((quotes_before + in_string_at_start) & 1).astype(bool)
        outside = ~inside
        if is_newline is not None:
            outside |= is_newline
            inside &= ~is_newline
        self._check_strings(pos, is_quote, inside, block)
        # depth, counted outside strings (and from zero on each line of a JSONL file)
        step = np.zeros(pos.size, np.int64)
        step[(kind == _OPEN) & outside] = 1
        step[(kind == _CLOSE) & outside] = -1
        running = np.cumsum(step)
        if segment_start is not None:
            after_newline = segment_start >= 0
            depth_after = np.where(after_newline, running - running[np.maximum(segment_start, 0)], running + self.depth)
        else:
            depth_after = running + self.depth
        opens = (kind == _OPEN) & outside
        if opens.any():
            deepest = int(depth_after[opens].max())
            if deepest > self.bounds.max_depth:
                first = int(pos[opens & (depth_after > self.bounds.max_depth)][0])
                self._fail(f"JSON nested deeper than {self.bounds.max_depth} levels", self.offset + first, block,
                           DEPTH_ENV)
        colons = (kind == _COLON) & outside
        if colons.any():
            at = np.clip(depth_after[colons], 0, self.bounds.max_depth + 1)
            self.keys_at_depth += np.bincount(at, minlength=self.keys_at_depth.size)[:self.keys_at_depth.size]
        self._check_tokens(pos, outside, block)
        self._check_records(pos, kind, outside, depth_after, block)
        # the state after this block
        last_quote_state = self.in_string
        if is_quote.any():
            q = np.flatnonzero(is_quote)[-1]
            if segment_start is None or segment_start[q] == segment_start[-1]:
                last_quote_state = not bool(inside[q])  # an opening quote leaves a string open
                if last_quote_state:
                    self.string_start = self.offset + int(pos[q])
            elif segment_start is not None:
                last_quote_state = False
        elif segment_start is not None:
            last_quote_state = False
        self.in_string = last_quote_state
        self.depth = int(depth_after[-1]) if pos.size else self.depth
        if self.in_string and self.offset + n - self.string_start - 1 > self.bounds.max_record_bytes:
            self._fail(f"a string longer than {self.bounds.max_record_bytes >> 20} MiB", self.string_start, block,
                       RECORD_ENV)
        newlines = block.count(b"\n")
        if newlines:
            self.line_start = self.offset + block.rfind(b"\n") + 1
        self.newlines += newlines
        self.offset += n

    def _drop_escaped(self, pos: np.ndarray, kind: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Remove the bytes that a backslash escapes (a quote after an odd run of backslashes
        is part of the string); remember an escape left open at the end of the block."""
        backslashes = pos[kind == _BACKSLASH]
        carried = self.escape_next
        escaped = _EMPTY
        if backslashes.size:
            starts = np.ones(backslashes.size, bool)
            starts[1:] = backslashes[1:] != backslashes[:-1] + 1
            run = np.cumsum(starts) - 1
            index_in_run = np.arange(backslashes.size) - np.flatnonzero(starts)[run]
            if carried and backslashes[0] == 0:
                index_in_run[run == 0] += 1  # the first backslash is itself escaped
            escaped = backslashes[index_in_run % 2 == 0] + 1
        if carried and (backslashes.size == 0 or backslashes[0] != 0):
            escaped = np.concatenate(([0], escaped))
        self.escape_next = bool(escaped.size and escaped[-1] == n)
        if not escaped.size:
            keep = kind != _BACKSLASH
        else:
            keep = (kind != _BACKSLASH) & ~np.isin(pos, escaped)
        return pos[keep], kind[keep]

    def _check_strings(self, pos: np.ndarray, is_quote: np.ndarray, inside: np.ndarray, block: bytes) -> None:
        quotes = pos[is_quote]
        if not quotes.size:
            return
        closing = inside[is_quote]  # a quote inside a string closes it
        opened_at = np.empty(quotes.size, np.int64)
        opened_at[1:] = quotes[:-1] + self.offset
        opened_at[0] = self.string_start  # only read where the first quote closes a carried string
        lengths = np.where(closing, quotes + self.offset - opened_at - 1, 0)
        if lengths.size and int(lengths.max()) > self.bounds.max_record_bytes:
            k = int(np.flatnonzero(lengths > self.bounds.max_record_bytes)[0])
            self._fail(f"a string longer than {self.bounds.max_record_bytes >> 20} MiB", int(opened_at[k]), block,
                       RECORD_ENV)

    def _check_tokens(self, pos: np.ndarray, outside: np.ndarray, block: bytes) -> None:
        """A number (or any run of bytes outside strings) longer than the record limit."""
        marks = pos[outside] + self.offset
        if not marks.size:
            if not self.in_string and self.offset + len(block) - self.token_start > self.bounds.max_record_bytes:
                self._fail(f"a value longer than {self.bounds.max_record_bytes >> 20} MiB", self.token_start,
                           block, RECORD_ENV)
            return
        gaps = np.diff(marks, prepend=self.token_start)
        if int(gaps.max()) > self.bounds.max_record_bytes:
            k = int(np.argmax(gaps > self.bounds.max_record_bytes))
            start = self.token_start if k == 0 else int(marks[k - 1])
            self._fail(f"a value longer than {self.bounds.max_record_bytes >> 20} MiB", start, block, RECORD_ENV)
        self.token_start = int(marks[-1])

    def _check_records(self, pos: np.ndarray, kind: np.ndarray, outside: np.ndarray, depth_after: np.ndarray,
                       block: bytes) -> None:
        limit = self.bounds.max_record_bytes
        what = f"a record longer than {limit >> 20} MiB"
        if self.lines:
            ends = pos[kind == _NEWLINE] + self.offset
            starts = np.concatenate(([self.line_start], ends[:-1] + 1)) if ends.size else _EMPTY
            if ends.size and int((ends - starts).max()) > limit:
                k = int(np.argmax(ends - starts > limit))
                self._fail(what, int(starts[k]), block, RECORD_ENV)
            current = int(ends[-1]) + 1 if ends.size else self.line_start
            if self.offset + len(block) - current > limit:
                self._fail(what, current, block, RECORD_ENV)
            return
        if self.record_depth is None:
            return
        r = self.record_depth
        opening = (kind == _OPEN) & outside & (depth_after == r + 1)
        closing = (kind == _CLOSE) & outside & (depth_after == r)
        events = np.flatnonzero(opening | closing)
        for i in events.tolist():  # one per record: a few thousand per block at most
            at = self.offset + int(pos[i])
            if opening[i]:
                self.record_start = at
            elif self.record_start is not None:
                if at - self.record_start + 1 > limit:
                    self._fail(what, self.record_start, block, RECORD_ENV)
                self.record_start = None
        if self.record_start is not None and self.offset + len(block) - self.record_start > limit:
            self._fail(what, self.record_start, block, RECORD_ENV)


def scan_bytes(data: bytes, path: str | None, *, lines: bool = False, record_depth: int | None = None) -> StructureScan:
    """Scan a whole document held in memory, block by block (so the scan's arrays stay small)."""
    scan = StructureScan(path, lines=lines, record_depth=record_depth)
    view = memoryview(data)
    for start in range(0, len(data), SCAN_BLOCK):
        scan.feed(bytes(view[start:start + SCAN_BLOCK]))
    return scan


def scan_file(fh: IO[bytes], path: str | None, *, record_depth: int | None = 1) -> StructureScan:
    """Scan a file from its current position to its end."""
    scan = StructureScan(path, record_depth=record_depth)
    while block := fh.read(SCAN_BLOCK):
        scan.feed(block)
    return scan


# --- keys given twice -----------------------------------------------------------------------


def dict_sizes_by_depth(value: Any, deepest: int) -> list[int]:
    """How many keys the objects of a parsed value hold at each depth up to `deepest` (the
    value itself is at depth 1), to compare with the keys the scan counted."""
    sizes = [0] * (deepest + 1)
    level = [value]
    for depth in range(1, deepest + 1):
        below = []
        for v in level:
            if type(v) is dict:
                sizes[depth] += len(v)
                if depth < deepest:
                    below.extend(x for x in v.values() if type(x) in (dict, list))
            elif type(v) is list and depth < deepest:
                below.extend(x for x in v if type(x) in (dict, list))
        level = below
        if not level:
            break
    return sizes


def check_unique_keys(data: bytes | IO[bytes], parsed: Any, scan: StructureScan, path: str | None,
                      *, deepest: int = 3) -> None:
    """Refuse an object that gives a key twice (a parser keeps only the last), at the depths
    where keys are ids: the records of a file and, one level down, the objects of a scene graph.
    Compares the keys the scan counted with those parsed; only on a difference is the document
    read again to name the key."""
    parsed_sizes = dict_sizes_by_depth(parsed, deepest)
    counted = scan.keys_at_depth
    for depth in range(1, deepest + 1):
        if depth < counted.size and int(counted[depth]) != parsed_sizes[depth]:
            raise duplicate_key_error(data, path)


def duplicate_key_error(data: bytes | IO[bytes], path: str | None) -> InputError:
    """An error naming the first key given twice in the same object, where it is and both
    places (the ordinal of each occurrence among that object's keys)."""
    import ijson

    fh = io.BytesIO(data) if isinstance(data, bytes | bytearray) else data
    if not isinstance(data, bytes | bytearray):
        fh.seek(0)
    stack: list[dict[str, int]] = []
    counts: list[int] = []
    for prefix, event, value in ijson.parse(fh, use_float=True):
        if event == "start_map":
            stack.append({})
            counts.append(0)
        elif event == "end_map":
            stack.pop()
            counts.pop()
        elif event == "map_key":
            counts[-1] += 1
            seen = stack[-1]
            if value in seen:
                where = f" in {prefix}" if prefix else ""
                return InputError(f"key {value!r} is given twice{where} (its keys number {seen[value]} and "
                                  f"{counts[-1]}); a reader would keep only the last", path=path,
                                  record=str(value) if not prefix else prefix.split(".")[0])
            seen[value] = counts[-1]
    return InputError("a key is given twice in one object", path=path)
