"""What a writer is, the registry of writers, and the byte joiners they share.

A run's output directory is the union of what every registered writer writes into it. Writers
receive the run already serialised (`Generation.lines` and `.views`, made in the workers), so a
writer only selects and joins bytes; none of them parses or re-serialises a record.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import orjson

from contrastgen.files.atomic import atomic_file
from contrastgen.jsonio import keyed_object
from contrastgen.registry import Registry
from contrastgen.results.generation import Generation
from contrastgen.results.view_bytes import ViewEntry


class Writer(ABC):
    """One output format: the files it writes into a run's (temporary) output directory."""

    name: ClassVar[str]
    files: ClassVar[str]  # what it writes, for the docs and error messages

    @abstractmethod
    def write(self, gen: Generation, out: Path) -> None:
        """Write this format's files under `out`, which the caller renames into place."""


WRITERS: Registry[type[Writer]] = Registry("writer")


def register(cls: type[Writer]) -> type[Writer]:
    """Class decorator: add a writer to the output directory of every run."""
    return WRITERS.add(cls.name, cls)


def view_names(max_k: int) -> dict[str, int | None]:
    """View name -> the largest rank it holds (0: originals only; None: every perturbation)."""
    names: dict[str, int | None] = {"original": 0, "augmented": None}
    for k in (1, 3):
        if k < max_k:
            names[f"augmented_k{k}"] = k
    return names


def json_object(entries: Iterable[ViewEntry]) -> Iterator[bytes]:
    """`{"id": record, ...}` plus a newline, from entries sorted by key."""
    return keyed_object((e.key, e.gqa) for e in entries)


def json_list(entries: Iterable[ViewEntry]) -> Iterator[bytes]:
    """`[item, ...]` plus a newline: the LXMERT file, in the order of the entries."""
    yield b"["
    for i, e in enumerate(entries):
        if i:
            yield b","
        yield e.lxmert
    yield b"]\n"


@dataclass(frozen=True)
class ViewFile:
    """One file of a view: where, the largest rank it holds (None: all), how an entry is written
    in it, and what encloses the items."""

    path: Path
    max_rank: int | None
    item: Callable[[ViewEntry], bytes]
    brackets: tuple[bytes, bytes]


class ViewWriter(Writer):
    """A writer whose files are views of the run's entries (`Generation.views`). `write_outputs`
    writes the files of every view writer in one pass over the entries: a spilled run's entries
    are read from disk and decoded on every pass."""

    @abstractmethod
    def files_of(self, gen: Generation, out: Path) -> list[ViewFile]:
        """This writer's view files under `out` (creating any folder they need)."""

    def write(self, gen: Generation, out: Path) -> None:
        write_views(self.files_of(gen, out), gen.views)


def write_views(files: list[ViewFile], entries: Iterable[ViewEntry]) -> None:
    """Write several views of the same entries in one pass; each file is its `brackets[0]`, its
    items joined by commas, its `brackets[1]`. An entry is made into each kind of item once,
    however many files hold it."""
    with contextlib.ExitStack() as stack:
        handles = [stack.enter_context(atomic_file(f.path)) for f in files]
        by_item: dict[Callable[[ViewEntry], bytes], list[tuple[Any, int | None]]] = {}
        for fh, f in zip(handles, files, strict=True):
            fh.write(f.brackets[0])
            by_item.setdefault(f.item, []).append((fh, f.max_rank))
        started: set[Any] = set()
        for e in entries:
            for item, targets in by_item.items():
                data = None
                for fh, max_rank in targets:
                    if max_rank is None or e.rank <= max_rank:
                        data = item(e) if data is None else data
                        if fh in started:
                            fh.write(b",")
                        else:
                            started.add(fh)
                        fh.write(data)
        for fh, f in zip(handles, files, strict=True):
            fh.write(f.brackets[1])


def gqa_item(e: ViewEntry) -> bytes:
    """`"id":record`, an entry of a GQA-format file."""
    return orjson.dumps(e.key) + b":" + e.gqa


def lxmert_item(e: ViewEntry) -> bytes:
    return e.lxmert
