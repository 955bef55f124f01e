"""Errors a user can act on.

Every error that comes from bad input names the file and the record (question id, image id,
HIT id, ...) so that a user with a million-question file can find the culprit at once. The CLI
turns these into a one-line message and a non-zero exit code; the HTTP service into a 422.
"""

from __future__ import annotations

import functools
import importlib


class ContrastgenError(Exception):
    """Base class for every error contrastgen raises on purpose."""


def duplicate_id(what: str, key: object, first: str, second: str) -> str:
    """The message for an id given twice, naming both places ("line 3 of a.jsonl", ...): a
    reader keyed by id would keep only one of the two records, silently."""
    return f"{what} id {key!r} is given twice ({first}, and {second}); a reader would keep only one"


class InputError(ContrastgenError):
    """Bad input: malformed JSON, a missing field, an unknown id, an empty file."""

    def __init__(self, message: str, *, path: str | None = None, record: str | None = None,
                 field: tuple[str | int, ...] | None = None):
        self.path = path
        self.record = record
        # Where in the record, as keys (("objects", "9", "x")): the HTTP service reports it as the
        # error's location, so a client sees the same path a schema validator would give.
        self.field = field
        self.reason = message
        where = []
        if path:
            where.append(str(path))
        if record:
            where.append(f"record {record}")
        prefix = ": ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)

    def __reduce__(self):
        # keep path and record when the error crosses from a worker process to the parent
        return (functools.partial(type(self), path=self.path, record=self.record, field=self.field),
                (self.reason,))


class MissingExtra(ContrastgenError):
    """A command needs an optional dependency that is not installed (exit code 2 on the CLI)."""


def require_extra(extra: str, modules: tuple[str, ...], needed_by: str) -> None:
    """Raise MissingExtra, naming `contrastgen[extra]`, unless every one of `modules` imports.

    Why ask before the work: the crowd, Ray, Hugging Face and lexicon-build stacks are extras, so a
    core install lacks them, and a user should learn it in one sentence at the start, not from an
    ImportError halfway through a run.
    """
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise MissingExtra(
                f"{needed_by} needs the optional dependencies of contrastgen[{extra}] "
                f"({exc}): pip install 'contrastgen[{extra}]'"
            ) from None
