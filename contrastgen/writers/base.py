"""What a writer is, the registry of writers, and the byte joiners they share.

A run's output directory is the union of what every registered writer writes into it. Writers
receive the run already serialised (`Generation.lines` and `.views`, made in the workers), so a
writer only selects and joins bytes; none of them parses or re-serialises a record.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import ClassVar

import orjson

from contrastgen.jsonio import atomic_file
from contrastgen.run.entries import ViewEntry
from contrastgen.run.generate import Generation


class Writer(ABC):
    """One output format: the files it writes into a run's (temporary) output directory."""

    name: ClassVar[str]
    files: ClassVar[str]  # what it writes, for the README and error messages

    @abstractmethod
    def write(self, gen: Generation, out: Path) -> None:
        """Write this format's files under `out`, which the caller renames into place."""


WRITERS: dict[str, type[Writer]] = {}


def register(cls: type[Writer]) -> type[Writer]:
    """Class decorator: add a writer to the output directory of every run."""
    if cls.name in WRITERS:
        raise ValueError(f"two writers are named {cls.name!r}")
    WRITERS[cls.name] = cls
    return cls


def view_names(max_k: int) -> dict[str, int | None]:
    """View name -> the largest rank it holds (0: originals only; None: every perturbation)."""
    names: dict[str, int | None] = {"original": 0, "augmented": None}
    for k in (1, 3):
        if k < max_k:
            names[f"augmented_k{k}"] = k
    return names


def json_object(entries: Iterable[ViewEntry]) -> Iterator[bytes]:
    """`{"id": record, ...}` plus a newline, from entries sorted by key."""
    yield b"{"
    for i, e in enumerate(entries):
        if i:
            yield b","
        yield orjson.dumps(e.key)
        yield b":"
        yield e.gqa
    yield b"}\n"


def json_list(entries: Iterable[ViewEntry]) -> Iterator[bytes]:
    """`[item, ...]` plus a newline: the LXMERT file, in the order of the entries."""
    yield b"["
    for i, e in enumerate(entries):
        if i:
            yield b","
        yield e.lxmert
    yield b"]\n"


def write_views(files: dict[Path, int | None], entries: Iterable[ViewEntry],
                item: Callable[[ViewEntry], bytes], brackets: tuple[bytes, bytes]) -> None:
    """Write several views of the same entries in one pass: `files` maps each file to the largest
    rank it holds (None: all). One pass, because a spilled run's entries are read from disk and
    decoded on every pass; each file is `brackets[0]`, the items joined by commas, `brackets[1]`."""
    with contextlib.ExitStack() as stack:
        handles = [(stack.enter_context(atomic_file(path)), max_rank) for path, max_rank in files.items()]
        started = [False] * len(handles)
        for fh, _ in handles:
            fh.write(brackets[0])
        for e in entries:
            data = item(e)
            for i, (fh, max_rank) in enumerate(handles):
                if max_rank is None or e.rank <= max_rank:
                    if started[i]:
                        fh.write(b",")
                    started[i] = True
                    fh.write(data)
        for fh, _ in handles:
            fh.write(brackets[1])


def gqa_item(e: ViewEntry) -> bytes:
    """`"id":record`, an entry of a GQA-format file."""
    return orjson.dumps(e.key) + b":" + e.gqa


def lxmert_item(e: ViewEntry) -> bytes:
    return e.lxmert
