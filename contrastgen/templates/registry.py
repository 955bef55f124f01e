"""Binding each template of rules/templates.json to its handler, checked when the engine loads.

A handler module registers itself with `@template(id, answer=...)`: the decorated function
proposes and proves perturbations (`(Context) -> Iterator[Proposal]`), and `answer` answers the
original question from the graph (the oracle baseline uses it; it raises Refusal where the graph
cannot answer). Adding a template means a rules entry, one module here with a decorated handler,
and its tests; `bind` refuses to load a rules entry without a handler or a handler without a
rules entry, so the mistake shows at start-up, not as a KeyError in a worker.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from contrastgen.errors import InputError
from contrastgen.registry import Registry
from contrastgen.templates.base import Context, Handler
from contrastgen.templates.patterns import Template

Answerer = Callable[[Context], "str | None"]

# Modules of this package that hold no handler.
_NOT_HANDLERS = frozenset({"program_agreement", "base", "patterns", "registry"})


@dataclass(frozen=True)
class Binding:
    """A template id's handler and answerer."""

    template_id: str
    perturb: Handler
    answer: Answerer


HANDLERS: Registry[Binding] = Registry("template handler")  # filled as handler modules are imported


def template(template_id: str, *, answer: Answerer) -> Callable[[Handler], Handler]:
    """Decorator: `fn` is the handler of `template_id` (an id of rules/templates.json)."""

    def register(fn: Handler) -> Handler:
        HANDLERS.add(template_id, Binding(template_id, fn, answer))  # a second handler for one id: ValueError
        return fn

    return register


def registered() -> Registry[Binding]:
    """Every handler of the package, importing each handler module once."""
    import contrastgen.templates as package

    for info in pkgutil.iter_modules(package.__path__):
        if info.name not in _NOT_HANDLERS and not info.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{info.name}")
    return HANDLERS


def bind(templates: Iterable[Template], *, source: str = "rules/templates.json") -> dict[str, Binding]:
    """The binding of every template; an InputError names the first one that has none."""
    known = registered()
    templates = tuple(templates)
    for t in templates:
        if t.id not in known:
            raise InputError(f"template {t.id!r} has no handler: add a module to contrastgen/templates/ "
                             f"with a function decorated @template({t.id!r}, answer=...)",
                             path=source, record=t.id)
    return {t.id: known[t.id] for t in templates}


def unbound_handlers(templates: Iterable[Template]) -> list[str]:
    """Handlers whose template id is not in the rules (a renamed or deleted entry)."""
    ids = {t.id for t in templates}
    return sorted(tid for tid in registered() if tid not in ids)
