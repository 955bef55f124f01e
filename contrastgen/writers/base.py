"""What a writer is, the registry of writers, and the byte joiners they share.

A run's output directory is the union of what every registered writer writes into it. Writers
receive the run already serialised (`Generation.lines` and `.views`, made in the workers), so a
writer only selects and joins bytes; none of them parses or re-serialises a record.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import orjson

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


def select(entries: list[ViewEntry], max_rank: int | None) -> list[ViewEntry]:
    return entries if max_rank is None else [e for e in entries if e.rank <= max_rank]


def json_object(entries: list[ViewEntry]) -> Iterator[bytes]:
    """`{"id": record, ...}` plus a newline, from entries sorted by key."""
    yield b"{"
    for i, e in enumerate(entries):
        if i:
            yield b","
        yield orjson.dumps(e.key)
        yield b":"
        yield e.gqa
    yield b"}\n"


def json_list(entries: list[ViewEntry]) -> Iterator[bytes]:
    """`[item, ...]` plus a newline: the LXMERT file, in the order of the entries."""
    yield b"["
    for i, e in enumerate(entries):
        if i:
            yield b","
        yield e.lxmert
    yield b"]\n"
