"""What the viewer says in words: evidence facts as sentences, and which words a perturbation changed.

Why on the Python side: the page only shows strings, so the reading of the evidence schema (the
table in docs/output-formats.md) lives in one tested place, and a new fact kind shows up here, not in JavaScript.
"""

from __future__ import annotations

from typing import Any

import regex

from contrastgen.datasets.gqa_program import REFERENCE_OPS, split_reference

_WORD = regex.compile(r"[\p{L}\p{N}'-]+")


def changed_span(original: str, perturbed: str) -> tuple[int, int]:
    """Character offsets, in `perturbed`, of the run of words that differs from `original`
    (common leading and trailing words removed); (0, 0) when the two are the same words."""
    a = [m for m in _WORD.finditer(original)]
    b = [m for m in _WORD.finditer(perturbed)]
    start = 0
    while start < min(len(a), len(b)) and a[start].group().lower() == b[start].group().lower():
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1].group().lower() == b[end_b - 1].group().lower():
        end_a, end_b = end_a - 1, end_b - 1
    if end_b <= start:
        return (0, 0)
    return (b[start].start(), b[end_b - 1].end())


def _name(names: dict[str, str], oid: Any) -> str:
    oid = str(oid)
    return f"{names[oid]} ({oid})" if oid in names else f"object {oid}"


def _list(items: list[Any]) -> str:
    words = [str(i) for i in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1] if words else "nothing"


def fact_in_words(fact: dict[str, Any], names: dict[str, str], said: str | None = None) -> str:
    """One evidence fact as a sentence; `names` maps object ids to their names in the graph, and
    `said` is the word the question uses for an `only` fact's names (its change's new name)."""
    kind = fact.get("fact")
    if kind == "object":
        attrs = fact.get("attributes") or []
        return f"{_name(names, fact.get('id'))} is in the graph" + (f", {', '.join(attrs)}" if attrs else "")
    if kind == "relation":
        return f"{_name(names, fact.get('subject'))} is {fact.get('name')} {_name(names, fact.get('object'))}"
    if kind == "absent":
        return f"nothing in the graph is called {_list(fact.get('names') or [])}"
    if kind == "not_related":
        both = " (either way)" if fact.get("symmetric") else ""
        return (f"no {_list(fact.get('names') or [])} is {fact.get('rel')} "
                f"{_name(names, fact.get('object'))}{both}")
    if kind == "only":
        ids = fact.get("ids") or []
        who = ", ".join(_name(names, i) for i in ids) or "nothing"
        listed = [str(n) for n in fact.get("names") or []]
        if said and said in listed:
            also = f" (under any of its {len(listed)} names)" if len(listed) > 1 else ""
            return f"the only {said} in the graph{also}: {who}"
        return f"the only {_list(listed[:3])}{' ...' if len(listed) > 3 else ''} in the graph: {who}"
    if kind == "side":
        return (f"{_name(names, fact.get('id'))} has its centre at x = {fact.get('center')} of "
                f"{fact.get('image_width')}: on the {fact.get('side')}")
    if kind == "color":
        return f"{_name(names, fact.get('id'))} has the colour {_list(fact.get('colors') or [])}"
    if kind == "part":  # Super-CLEVR
        attrs = fact.get("attributes") or []
        part = str(fact.get("name", "")).replace("_", " ")
        return f"{_name(names, fact.get('object'))} has a part {part}" + (f": {', '.join(attrs)}" if attrs else "")
    if kind == "object_count":  # CLEVR scenes list every object: what an absence rests on
        return f"the scene has {fact.get('count')} objects, and lists them all"
    return f"{kind}: " + ", ".join(f"{k} {v}" for k, v in fact.items() if k != "fact")


def evidence_objects(evidence: dict[str, Any]) -> list[str]:
    """The object ids an evidence names (in facts and in its query), in first-seen order."""
    seen: dict[str, None] = {}

    def add(value: Any) -> None:
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            seen.setdefault(str(value), None)

    for fact in evidence.get("facts") or []:
        if not isinstance(fact, dict):
            continue
        for key in ("id", "subject", "object"):
            add(fact.get(key))
        for i in fact.get("ids") or []:
            add(i)
    query = evidence.get("query") or {}
    for key in ("object", "subject"):
        add(query.get(key))
    return list(seen)


def original_objects(record: dict[str, Any]) -> list[str]:
    """The objects the original question is about: its grounded slots (a template set's
    `grounding`) or the ids its program's references carry (GQA's "snow (823324)"), read as the
    generator reads them (`datasets.gqa_program`): only a reference step names objects, so a
    filter's "not(red)" is a value, not an object."""
    out: dict[str, None] = {}
    grounding = record.get("grounding") if isinstance(record.get("grounding"), dict) else {}
    for slot, ids in grounding.items():
        if slot != "via" and isinstance(ids, list):
            out.update((str(i), None) for i in ids)
    for step in record.get("semantic") or []:
        if isinstance(step, dict) and " ".join(str(step.get("operation", "")).split()) in REFERENCE_OPS:
            out.update((i, None) for i in split_reference(str(step.get("argument", "")))[1] or ())
    return list(out)


def program_lines(semantic: Any) -> list[str]:
    """A GQA program as one line per step ("1. relate: man,wearing,o (12) <- 0")."""
    lines = []
    for n, step in enumerate(semantic if isinstance(semantic, list) else []):
        if not isinstance(step, dict):
            continue
        deps = ", ".join(str(d) for d in step.get("dependencies") or [])
        lines.append(f"{n}. {step.get('operation', '')}: {str(step.get('argument', '')).strip()}"
                     + (f" <- {deps}" if deps else ""))
    return lines


def changed_steps(original: Any, edited: Any) -> list[int]:
    """The steps of `edited` that differ from `original`'s (all of them where the lengths differ)."""
    a, b = program_lines(original), program_lines(edited)
    if len(a) != len(b):
        return list(range(len(b)))
    return [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
