"""Option parsing shared by several command families."""

from __future__ import annotations

from collections.abc import Callable

import click


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
