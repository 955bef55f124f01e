"""One way to make something pluggable: a named collection that its plug-ins add themselves to.

Why one mechanism: template handlers, writers, dataset formats and export formats each need the same
three things (a name given once, a clear error naming the choices when an
unknown name is asked for, and the names in the order they were added, for `--help` and for
detection), so they share this rather than each keeping a dict and an if-chain of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from contrastgen.errors import InputError

T = TypeVar("T")


class Registry(Generic[T]):
    """Items by name, in the order they were added. `kind` names what they are, for errors."""

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> T:
        """Add `item` as `name`; a name given twice is a programming error, said at import."""
        if name in self._items:
            raise ValueError(f"two {self.kind}s are named {name!r}")
        self._items[name] = item
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of `add`."""
        return lambda item: self.add(name, item)

    def remove(self, name: str) -> T:
        return self._items.pop(name)

    def __getitem__(self, name: str) -> T:
        """The item; an unknown name is the caller's input, so an InputError listing the choices."""
        try:
            return self._items[name]
        except KeyError:
            raise InputError(f"unknown {self.kind} {name!r} (one of {', '.join(self._items)})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def names(self) -> tuple[str, ...]:
        return tuple(self._items)

    def values(self) -> list[T]:
        return list(self._items.values())

    def items(self) -> list[tuple[str, T]]:
        return list(self._items.items())
