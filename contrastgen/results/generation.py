"""What a run produces: `Generation` (a whole run, what every writer reads) and `ShardResult` (one
shard's part of it). Apart from the code that runs shards, so that a writer gets the dataclass
without importing process pools.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from contrastgen.results.stats import Outcome, StatsTally
from contrastgen.results.view_bytes import ViewEntry


@dataclass
class Generation:
    """A whole run, already serialised (see `contrastgen.results.view_bytes` for why).

    `lines` are the lines of contrast_sets.jsonl in the order of the input questions; `views` are
    the originals and perturbations of the GQA and LXMERT outputs, sorted by question id;
    `perturbed` the ids of the questions that got a perturbation, in input order.
    """

    lines: Iterable[bytes]  # a list, or read back from disk (`run.result_spill`) for a file-to-file run
    views: Iterable[ViewEntry]  # likewise; re-iterable either way
    stats: dict[str, Any]
    max_k: int
    seed: int
    perturbed: list[str] = field(default_factory=list)
    spill: Any = field(default=None, repr=False)  # keeps the spilled files until the run is dropped

    @functools.cached_property
    def records(self) -> list[dict[str, Any]]:
        """The contrast-set records as dicts, for library callers (the writers use the bytes)."""
        return [orjson.loads(line) for line in self.lines]


@dataclass
class ShardResult:
    """One shard's work, already serialised: the parent only concatenates bytes.

    A GQA question that matches no template produces nothing here; the statistics count it as a
    question without an outcome.
    """

    questions: int  # processed, for the progress bar
    outcomes: list[Outcome] = field(default_factory=list)  # (question, path) pairs tried
    lines: list[tuple[str, tuple[bytes, ...]]] = field(default_factory=list)  # (question id, its JSONL lines)
    views: list[ViewEntry] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)  # input position of each `lines` entry (spilled input)
    groups: Counter = field(default_factory=Counter)  # `--groups`: pairs, groups and the reasons for none
    spilled: Any = None  # `run.result_spill.SpilledShard`: lines and views written by the worker, not here
    tally: StatsTally | None = None  # the outcomes, tallied by the worker (then `outcomes` is empty)
