"""The one progress bar every long command shows (`generate`, `augment`, `verify`, `captions
generate`, `captions baselines`, `ood ...`, `export`, `evaluate`, `baseline`, `view`; the README
lists where each advances).

Why only on a terminal: a bar is for a person watching; in a pipe, a CI log or a test it is noise
(rich prints a finished bar once where there is no terminal), so off a terminal, or with the
command's `--no-progress`, `progress` yields a no-op and imports nothing. The bar is drawn on
stderr and never touches stdout or an output file, so a run's outputs are the same with it or
without it. Library loops take `progress: bool` and open the bar themselves; where the work runs
in worker processes, the loop advances it here, in the parent, as each result comes back.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

Advance = Callable[[int], None]
T = TypeVar("T")
# The variables with which rich calls a stream that is no tty a terminal (or the reverse).
_OVERRIDES = ("TTY_COMPATIBLE", "TTY_INTERACTIVE", "FORCE_COLOR")


def noop(n: int = 1) -> None:
    """What `progress` yields when there is no bar: costs a call and nothing else."""


def on_terminal() -> bool:
    """Whether stderr is a terminal a person watches, as rich decides it: a tty that is not a dumb
    terminal (one that cannot redraw a line), unless TTY_COMPATIBLE or TTY_INTERACTIVE say
    otherwise (https://rich.readthedocs.io/en/latest/console.html#environment-variables)."""
    if not any(name in os.environ for name in _OVERRIDES):
        # rich would say no too; deciding here spares a piped run rich's import (30 ms)
        try:
            if not sys.stderr.isatty():
                return False
        except (AttributeError, ValueError):  # no stderr, or a closed one
            return False
    from rich.console import Console

    return Console(stderr=True).is_interactive


@contextmanager
def progress(description: str, total: int | Callable[[], int] | None, *,
             enabled: bool = True) -> Iterator[Advance]:
    """A bar named `description` counting to `total` (None: a count with no end), advanced by the
    callable this yields (`advance(n)`, n steps done); a no-op unless `enabled` and on a terminal.
    `total` may be a function, called only when the bar is drawn (counting a file's lines costs a
    read a run without a bar should not pay)."""
    if not enabled or not on_terminal():
        yield noop
        return
    if callable(total):
        total = total()
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    # stdout is left alone (redirect_stdout=False): rich would otherwise route what a command
    # prints to stdout during the bar through this stderr console, and stdout must stay the output
    bar = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn(), console=Console(stderr=True), transient=False, redirect_stdout=False)
    with bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)


def counted(items: Iterable[T], advance: Advance) -> Iterator[T]:
    """`items`, advancing the bar by one as each is handed on (a loop that takes a stream of
    records gets a bar without knowing of it)."""
    for item in items:
        yield item
        advance(1)


def line_count(path: str | os.PathLike[str]) -> Callable[[], int]:
    """The number of lines of a JSON-lines file, counted when called: a bar's total."""

    def count() -> int:
        n, last = 0, b"\n"
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                n += chunk.count(b"\n")
                last = chunk[-1:]
        return n + (last != b"\n")

    return count
