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


_QUOTE, _BACKSLASH, _COLON, _NEWLINE, _COMMA = (ord(c) for c in '"\\:\n,')
_OPEN, _CLOSE = ord("{"), ord("}")  # after `| 0x20`, "[" and "]" read as "{" and "}"
_STRUCTURE = b'"{}[]:,\n'
_EMPTY = np.zeros(0, np.int64)


class StructureScan:
    """Feed the bytes of one JSON document (or, with `lines`, of a JSONL file) in order; each
    `feed` raises `InputError` as soon as a limit is passed.

    `record_depth`: the depth at which records open (1: the members of the top-level object or
    list; None: no record limit, for a whole document read at once). With `lines`, each line is a
    record and a newline ends whatever it interrupts (a JSONL line cannot hold a raw newline).

    What is measured: the depth of each object or list; each string, from its opening to its
    closing quote; each stretch outside strings between two structural bytes (a number, or bytes
    that are no JSON at all); each record. Why it is fast: only the positions of quotes,
    brackets, colons (and newlines, for lines) are looked at, each kind found by one vectorised
    comparison, and whether a bracket or colon is inside a string is the parity of the quotes
    before it. The bytes are taken in chunks no longer than the record limit, so a string, a
    stretch or a line inside one chunk is within the limit and only those that cross a chunk's
    edge need measuring.
    """

    def __init__(self, path: str | None, *, lines: bool = False, record_depth: int | None = None,
                 bounds: JsonLimits | None = None):
        self.path, self.lines, self.record_depth = path, lines, record_depth
        self.bounds = bounds or limits()
        self.offset = 0  # of the next chunk in the document
        self.newlines = 0  # before the next chunk
        self.line_start = 0  # offset just after the last newline
        self.depth = 0
        self.in_string = False
        self.escape_next = False
        self.string_start = 0
        self.record_start: int | None = None
        self.token_start: int | None = 0  # the last structural byte outside a string (None: in one)
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

    def _too_long(self, what: str, at: int, block: bytes) -> None:
        self._fail(f"{what} longer than {_size(self.bounds.max_record_bytes)}", at, block, RECORD_ENV)

    # -- the scan -----------------------------------------------------------------------------

    def feed(self, block: bytes) -> None:
        step = self.bounds.max_record_bytes
        if len(block) <= step:
            self._feed(block)
            return
        for start in range(0, len(block), step):
            self._feed(block[start:start + step])

    def _feed(self, block: bytes) -> None:
        if not self.lines:
            self._feed_chunk(block, reset_at_newlines=False)
            return
        # A JSONL line holds no raw newline, so a well-formed chunk reads the same whether the
        # state resets at each newline or runs on: the quicker reading first, and only where it
        # finds a problem (perhaps one a malformed line left in the running state) the exact one.
        saved = self._state()
        try:
            self._feed_chunk(block, reset_at_newlines=False)
        except InputError:
            self._restore(saved)
            self._feed_chunk(block, reset_at_newlines=True)

    def _state(self) -> tuple:
        return (self.offset, self.newlines, self.line_start, self.depth, self.in_string, self.escape_next,
                self.string_start, self.record_start, self.token_start, self.keys_at_depth.copy())

    def _restore(self, state: tuple) -> None:
        (self.offset, self.newlines, self.line_start, self.depth, self.in_string, self.escape_next,
         self.string_start, self.record_start, self.token_start, self.keys_at_depth) = state

    def _feed_chunk(self, block: bytes, *, reset_at_newlines: bool) -> None:
        n = len(block)
        if not n:
            return
        a = np.frombuffer(block, np.uint8)
        line_ends = np.flatnonzero(a == _NEWLINE) if self.lines else _EMPTY
        quotes = self._unescaped(np.flatnonzero(a == _QUOTE), block)
        folded = a | 0x20
        brackets = np.flatnonzero((folded == _OPEN) | (folded == _CLOSE))
        opening = folded[brackets] == _OPEN
        del folded
        # keys are counted for the check of keys given twice, which JSONL readers do not make
        colons = _EMPTY if self.lines else np.flatnonzero(a == _COLON)
        newlines = line_ends if reset_at_newlines else _EMPTY
        # each quote's parity, within its line for JSONL: odd ones close a string
        if newlines.size:
            quote_line = np.searchsorted(newlines, quotes)
            first_quote_of_line = np.concatenate(([0], np.searchsorted(quotes, newlines)))
            parity = np.arange(quotes.size) - first_quote_of_line[quote_line] + np.where(
                quote_line == 0, self.in_string, 0)
        else:
            quote_line = None
            parity = np.arange(quotes.size) + self.in_string
        closing = (parity & 1).astype(bool)

        def inside(positions: np.ndarray) -> np.ndarray:
            """Whether each position is inside a string (quotes before it, in its line)."""
            before = np.searchsorted(quotes, positions)
            if newlines.size:
                line = np.searchsorted(newlines, positions)
                first = np.concatenate(([0], np.searchsorted(quotes, newlines)))[line]
                return ((before - first + np.where(line == 0, self.in_string, 0)) & 1).astype(bool)
            return ((before + self.in_string) & 1).astype(bool)

        self._check_strings(quotes, closing, block)
        outside = ~inside(brackets)
        brackets, opening = brackets[outside], opening[outside]
        depth_after = self._depths(brackets, opening, newlines)
        if opening.any():
            deepest = depth_after[opening]
            if int(deepest.max()) > self.bounds.max_depth:
                first = int(brackets[opening][np.argmax(deepest > self.bounds.max_depth)])
                self._fail(f"JSON nested deeper than {self.bounds.max_depth} levels", self.offset + first, block,
                           DEPTH_ENV)
        if colons.size:
            colons = colons[~inside(colons)]
            self._count_keys(colons, brackets, depth_after, newlines)
        self._check_stretches(block, quotes, brackets, colons, line_ends)
        self._check_records(brackets, opening, depth_after, line_ends, block)
        # the state after this chunk
        ends_after_newline = newlines.size and (not quotes.size or newlines[-1] > quotes[-1])
        if quotes.size and not ends_after_newline:
            self.in_string = not bool(closing[-1])
            if self.in_string:
                self.string_start = self.offset + int(quotes[-1])
        elif ends_after_newline:
            self.in_string = False
        if newlines.size and (not brackets.size or newlines[-1] > brackets[-1]):
            self.depth = 0
        elif brackets.size:
            self.depth = int(depth_after[-1])
        if self.in_string and self.offset + n - self.string_start - 1 > self.bounds.max_record_bytes:
            self._too_long("a string", self.string_start, block)
        count = block.count(b"\n")
        if count:
            self.line_start = self.offset + block.rfind(b"\n") + 1
        self.newlines += count
        self.offset += n

    def _unescaped(self, quotes: np.ndarray, block: bytes) -> np.ndarray:
        """The quotes no backslash escapes (a quote after an odd run of backslashes is part of
        its string); remembers an escape left open at the end of the chunk."""
        carried = self.escape_next
        trailing = 0
        while trailing < len(block) and block[-1 - trailing] == _BACKSLASH:
            trailing += 1
        if trailing == len(block) and carried:
            trailing -= 1  # the chunk's first backslash is itself escaped
        self.escape_next = trailing % 2 == 1
        if not quotes.size:
            return quotes
        a = np.frombuffer(block, np.uint8)
        suspect = quotes[(quotes > 0) & (a[np.maximum(quotes - 1, 0)] == _BACKSLASH)]
        escaped = [0] if carried and quotes[0] == 0 else []
        for q in suspect.tolist():  # rare in real data: one Python step per backslashed quote
            j = q - 1
            while j >= 0 and block[j] == _BACKSLASH:
                j -= 1
            run = q - 1 - j
            if j < 0 and carried:
                run -= 1
            if run % 2:
                escaped.append(q)
        if not escaped:
            return quotes
        return quotes[~np.isin(quotes, escaped)]

    def _check_strings(self, quotes: np.ndarray, closing: np.ndarray, block: bytes) -> None:
        """A string that crossed into this chunk and closes in it (one inside the chunk is
        shorter than the chunk, so within the limit)."""
        if (closing.size and closing[0] and self.in_string
                and self.offset + int(quotes[0]) - self.string_start - 1 > self.bounds.max_record_bytes):
            self._too_long("a string", self.string_start, block)

    def _depths(self, brackets: np.ndarray, opening: np.ndarray, newlines: np.ndarray) -> np.ndarray:
        """The depth after each bracket outside strings (from zero on each line, for JSONL)."""
        running = np.cumsum(np.where(opening, 1, -1), dtype=np.int64)
        if not newlines.size:
            return running + self.depth
        line = np.searchsorted(newlines, brackets)
        # the running count just before each line's first bracket
        before_line = np.concatenate(([0], np.searchsorted(brackets, newlines)))[line]
        base = np.where(before_line > 0, running[np.maximum(before_line - 1, 0)], 0)
        return np.where(line == 0, running + self.depth, running - base)

    def _count_keys(self, colons: np.ndarray, brackets: np.ndarray, depth_after: np.ndarray,
                    newlines: np.ndarray) -> None:
        last = np.searchsorted(brackets, colons) - 1  # the bracket before each colon
        depth = np.where(last >= 0, depth_after[np.maximum(last, 0)] if brackets.size else 0, self.depth)
        if newlines.size:  # a line with no bracket before the colon starts at depth 0
            line = np.searchsorted(newlines, colons)
            line_of_bracket = np.searchsorted(newlines, brackets[np.maximum(last, 0)]) if brackets.size else line
            depth = np.where((line > 0) & ((last < 0) | (line_of_bracket != line)), 0, depth)
        depth = np.clip(depth, 0, self.keys_at_depth.size - 1)
        self.keys_at_depth += np.bincount(depth, minlength=self.keys_at_depth.size)

    def _check_stretches(self, block: bytes, quotes: np.ndarray, brackets: np.ndarray, colons: np.ndarray,
                         newlines: np.ndarray) -> None:
        """A number, or bytes that are no JSON, longer than the limit: measured across the
        chunk's edges (a stretch inside the chunk is shorter than the chunk)."""
        firsts = [int(x[0]) for x in (quotes, brackets, colons) if x.size]
        lasts = [int(x[-1]) for x in (quotes, brackets, colons) if x.size]
        for byte in (b",", b"\n", b":") if not colons.size else (b",", b"\n"):
            if (at := block.find(byte)) >= 0:
                firsts.append(at)
                lasts.append(block.rfind(byte))
        if self.token_start is not None and not self.in_string:
            end = self.offset + (min(firsts) if firsts else len(block))
            if end - self.token_start > self.bounds.max_record_bytes:
                self._too_long("a value", self.token_start, block)
        if firsts:
            self.token_start = self.offset + max(lasts)

    def _check_records(self, brackets: np.ndarray, opening: np.ndarray, depth_after: np.ndarray,
                       newlines: np.ndarray, block: bytes) -> None:
        limit = self.bounds.max_record_bytes
        end = self.offset + len(block)
        if self.lines:
            current = self.line_start
            if newlines.size:
                if self.offset + int(newlines[0]) - current > limit:
                    self._too_long("a record", current, block)
                current = self.offset + int(newlines[-1]) + 1
            if end - current > limit:
                self._too_long("a record", current, block)
            return
        if self.record_depth is None:
            return
        r = self.record_depth
        events = np.flatnonzero((opening & (depth_after == r + 1)) | (~opening & (depth_after == r)))
        for i in events.tolist():  # one per record: a few thousand per chunk at most
            at = self.offset + int(brackets[i])
            if opening[i]:
                self.record_start = at
            elif self.record_start is not None:
                if at - self.record_start + 1 > limit:
                    self._too_long("a record", self.record_start, block)
                self.record_start = None
        if self.record_start is not None and end - self.record_start > limit:
            self._too_long("a record", self.record_start, block)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and not n % (1 << 20) else f"{n:,} bytes"


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


def any_key_given_twice(parsed: Any, scan: StructureScan) -> bool:
    """Whether any object of a whole document held a key twice: the scan counted more keys
    than the parsed objects hold (a parser keeps one of each). For a document small enough to
    check everywhere (a request body); `check_unique_keys` checks a file's id levels."""
    held = 0
    stack = [parsed]
    while stack:
        value = stack.pop()
        members = value.values() if type(value) is dict else value
        if type(value) is dict:
            held += len(value)
        stack.extend([m for m in members if type(m) is dict or type(m) is list])
    return int(scan.keys_at_depth.sum()) != held


@dataclass(frozen=True)
class DuplicateKey:
    """A key given twice in one object: the object's place (keys and list indices from the top),
    the key, and the ordinal of each occurrence among that object's keys."""

    where: tuple[str | int, ...]
    key: str
    first: int
    second: int

    @property
    def prefix(self) -> str:
        """The object's place as ijson writes it (a list's members are all `item`)."""
        return ".".join("item" if isinstance(part, int) else part for part in self.where)

    def describe(self) -> str:
        where = f" in {self.prefix}" if self.where else ""
        return (f"key {self.key!r} is given twice{where} (its keys number {self.first} and {self.second}); "
                "a reader would keep only the last")


def first_duplicate_key(data: bytes | IO[bytes]) -> DuplicateKey | None:
    """The first key given twice in the same object of a JSON document, read again with ijson."""
    import ijson

    fh = io.BytesIO(data) if isinstance(data, bytes | bytearray) else data
    if not isinstance(data, bytes | bytearray):
        fh.seek(0)
    # one frame per open container: an object's keys seen (key -> ordinal) and its current key,
    # or a list's index of its current member
    frames: list[list[Any]] = []
    for _prefix, event, value in ijson.parse(fh, use_float=True):
        if event in ("end_map", "end_array"):
            frames.pop()
            continue
        if event == "map_key":
            seen, _ = frames[-1]
            if value in seen:
                where = tuple(frame[1] for frame in frames[:-1])
                return DuplicateKey(where, value, seen[value], len(seen) + 1)
            seen[value] = len(seen) + 1
            frames[-1][1] = value
            continue
        if frames and not isinstance(frames[-1][0], dict):  # a member of a list begins
            frames[-1][1] += 1
        if event == "start_map":
            frames.append([{}, ""])
        elif event == "start_array":
            frames.append([None, -1])
    return None


def duplicate_key_error(data: bytes | IO[bytes], path: str | None) -> InputError:
    """An error naming the first key given twice in the same object, where it is and both
    places (the ordinal of each occurrence among that object's keys)."""
    found = first_duplicate_key(data)
    if found is None:
        return InputError("a key is given twice in one object", path=path)
    return InputError(found.describe(), path=path,
                      record=found.key if not found.where else found.prefix.split(".")[0])
