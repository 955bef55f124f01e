"""Question templates as data: `rules/templates.json` compiled once into regular expressions.

Why data and not code: a researcher adding a phrasing (or a whole template) edits a pattern and
its examples, and the tests run those examples; no Python changes for a new wording. Why regular
expressions and not a parser: GQA questions are generated from templates themselves, so a small
set of anchored patterns covers them precisely and costs microseconds per question on the hot path.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import regex

from contrastgen.errors import InputError
from contrastgen.resources import rules_dir
from contrastgen.scene.program_reading import READING_KINDS

_FRAGMENT_REF = regex.compile(r"\{([A-Z_]+)\}")


@dataclass(frozen=True)
class Template:
    id: str
    id_suffix: str
    description: str
    skill: str
    patterns: tuple[re.Pattern[str] | regex.Pattern[str], ...]
    examples: dict[str, list[str]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    requires: tuple[str, ...] = ()  # substrings of which the lower-cased question must contain one
    slots: dict[str, str] = field(default_factory=dict)  # noun-phrase slot -> grammar (nounphrase.fits)
    program: dict[str, str] = field(default_factory=dict)  # the program shape it reads (see below)


@dataclass(frozen=True)
class Span:
    """A slot's text as it stands in the question, with its character offsets."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Match:
    template: Template
    question: str  # the question with the final '?' removed; spans index into it
    spans: dict[str, Span]

    @property
    def slots(self) -> dict[str, str]:
        return {name: span.text for name, span in self.spans.items()}


def _expand(pattern: str, fragments: dict[str, str], path: Path) -> str:
    def sub(m: regex.Match) -> str:
        name = m.group(1)
        if name not in fragments:
            raise InputError(f"pattern refers to unknown fragment {{{name}}}", path=str(path))
        return fragments[name]

    for _ in range(10):  # fragments may use fragments
        expanded = _FRAGMENT_REF.sub(sub, pattern)
        if expanded == pattern:
            return expanded
        pattern = expanded
    raise InputError("fragments nest too deeply (a cycle?)", path=str(path))


def compile_pattern(pattern: str) -> re.Pattern[str] | regex.Pattern[str]:
    """A template pattern, case-insensitive: by the standard library's engine where it accepts the
    pattern (it matches the shipped ones in half the time of `regex`, with the same groups on
    every GQA question tried: `tests/templates/test_templates.py`), else by `regex`, so a pattern
    may still use its extensions (\\p{L}, possessive quantifiers). `re` only warns where it reads
    a pattern otherwise than `regex` would ("[[:alpha:]]" is a set of brackets and letters to it,
    a class of letters to `regex`): a warning sends the pattern to `regex` too."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return re.compile(pattern, re.IGNORECASE)
    except (re.error, Warning):
        return regex.compile(pattern, regex.IGNORECASE)


def load_templates_from(path: Path) -> tuple[Template, ...]:
    data = orjson.loads(path.read_bytes())
    fragments = data.get("fragments", {})
    out = []
    for t in data["templates"]:
        try:
            patterns = tuple(compile_pattern(_expand(p, fragments, path)) for p in t["patterns"])
        except regex.error as exc:
            raise InputError(f"bad pattern: {exc}", path=str(path), record=t.get("id")) from None
        slots = dict(t.get("slots", {}))
        groups = {g for p in patterns for g in p.groupindex} & {"x", "y"}
        if set(slots) != groups or not set(slots.values()) <= {"simple", "modified"}:
            raise InputError(f"'slots' must give each of {sorted(groups)} a grammar, 'simple' or "
                             f"'modified'; got {slots}", path=str(path), record=t.get("id"))
        program = dict(t.get("program", {}))
        if program.get("kind") not in READING_KINDS or (
                "relation_slot" in program and program["relation_slot"] not in groups | {"rel"}):
            raise InputError(f"'program' needs a kind among {list(READING_KINDS)} (and a "
                             f"relation_slot the patterns capture); got {program}",
                             path=str(path), record=t.get("id"))
        out.append(Template(id=t["id"], id_suffix=t["id_suffix"], description=t["description"],
                            skill=t.get("skill", ""), patterns=patterns,
                            examples=t.get("examples", {}), options=t.get("options", {}),
                            requires=tuple(t.get("requires", ())), slots=slots, program=program))
    ids = [t.id for t in out]
    if len(set(ids)) != len(ids) or len({t.id_suffix for t in out}) != len(out):
        raise InputError("template ids and id suffixes must be unique", path=str(path))
    return tuple(out)


@functools.cache
def load_templates() -> tuple[Template, ...]:
    """The shipped templates, compiled once per process."""
    return load_templates_from(rules_dir() / "templates.json")


def strip_question(question: str) -> str:
    return question.strip().rstrip("?.! \t\n")


def screener(templates: tuple[Template, ...] | None = None) -> Callable[[str], bool]:
    """A test that is False only for questions no template can match: the templates' `requires`
    words, as one case-insensitive regex.

    Why: most GQA questions match no template, and a run keeps (and workers copy) the whole
    record only of those that may. One search costs a fraction of a microsecond, so a million
    questions are screened while they load.
    """
    templates = templates if templates is not None else load_templates()
    if any(not t.requires for t in templates):
        return lambda question: True
    words = sorted({w.lower() for t in templates for w in t.requires})
    # the standard library's engine on lower-cased text: measured 3x faster here than `regex`
    # with IGNORECASE, and the words are plain lower-case literals
    search = re.compile("|".join(map(re.escape, words))).search
    return lambda question: search(question.lower()) is not None


def match_all(question: str, templates: tuple[Template, ...] | None = None) -> list[Match]:
    """Every template the question matches, in the order of `rules/templates.json`."""
    text = strip_question(question)
    low = text.lower()
    found = []
    # the last pattern tried, and its match: templates that read one wording two ways (the two
    # relation templates) share the compiled pattern (`re.compile` caches it), tried once
    last: Any = None
    got: Any = None
    for t in templates if templates is not None else load_templates():
        if t.requires and not any(map(low.__contains__, t.requires)):
            continue
        for p in t.patterns:
            if p is not last:
                last, got = p, p.match(text)
            m = got
            if m:
                spans = {k: Span(v, m.start(k), m.end(k)) for k, v in m.groupdict().items() if v is not None}
                found.append(Match(template=t, question=text, spans=spans))
                break
    return found


def match(question: str) -> Match | None:
    """The first template the question matches, or None."""
    found = match_all(question)
    return found[0] if found else None
