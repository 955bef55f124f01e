"""Option parsing shared by several command families."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click

# The generators hash their seed into per-image streams, so any 64-bit integer works (the HTTP
# service takes the same range); a larger one would not fit the 64-bit integers of stats.json.
SEED = click.IntRange(-(2**63), 2**63 - 1)
# numpy's generators (bootstrap, splits, sampling) take only non-negative seeds.
RNG_SEED = click.IntRange(0, 2**63 - 1)
# A count of a crowd task (images, HITs, items, assignments, workers). Why a ceiling: the counts
# are written into the manifest as JSON integers, which stop at 64 bits, and a task of more than
# a million of any of them is a typo, not a plan.
CROWD_COUNT = click.IntRange(1, 1_000_000)


class FiniteRange(click.FloatRange):
    """A `click.FloatRange` that refuses nan and infinities. Why: click tests a range by
    comparing, and every comparison with nan is false, so nan would pass any bounds and fail
    later, far from the option that carried it."""

    name = "finite number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number

    def _describe_range(self) -> str:
        # click would print "x<=None" for a range with no bounds; its name says enough
        return "" if self.min is None and self.max is None else super()._describe_range()


FINITE = FiniteRange()


def comma_list(choices: tuple[str, ...]) -> Callable[[click.Context, click.Parameter, str | None], tuple[str, ...]]:
    """A click callback reading "a,b" as a subset of `choices` (all of them when not given)."""

    def parse(_ctx: click.Context, _param: click.Parameter, value: str | None) -> tuple[str, ...]:
        if not value:
            return choices
        names = tuple(v.strip() for v in value.split(",") if v.strip())
        unknown = [n for n in names if n not in choices]
        if unknown:
            raise click.BadParameter(f"unknown {', '.join(unknown)}; choose from {','.join(choices)}")
        return names

    return parse


# Every command that can run over a minute draws a progress bar on stderr when stderr is a terminal
# (contrastgen.terminal.progress); this turns it off there too.
no_progress_option = click.option("--no-progress", is_flag=True,
                                  help="No progress bar (one is drawn on stderr only when it is a terminal).")
