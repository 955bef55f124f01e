"""The console every command prints its tables and messages through."""

from __future__ import annotations

from rich.console import Console

# Wide enough for the longest template or question-type name beside every column of a table.
_UNBOUNDED_WIDTH = 240


def make_console(*, stderr: bool = False) -> Console:
    """A rich console. Why not rich's default: printed to a pipe, a file or a CI log, rich assumes
    80 columns and cuts names to fit (`is_the_x_rel_the_y__relation` becomes `is_the_x_re…`); a
    reader of that output wants the whole names, so where there is no terminal, lines may be long."""
    out = Console(stderr=stderr)
    if out.is_terminal:
        return out
    return Console(stderr=stderr, width=max(out.width, _UNBOUNDED_WIDTH))
