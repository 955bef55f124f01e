"""One row per perturbation, under a fixed Arrow schema.

The schema is fixed, not inferred, so that every export of every dataset (GQA, CLEVR) has the
same columns and the dataset card can describe them: a reader written against one export reads
the next. Evidence is heterogeneous (an `object` fact has a name, a `side` fact a box, a CLEVR
`object_count` a number), so each nested struct has the union of the fields the generators
write, null where a fact has none, plus `other`: the JSON of any field this schema does not
name. A field a future fact kind adds is then carried, not dropped, until it gets its column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import orjson
import pyarrow as pa

from contrastgen.records import ContrastSet, Perturbation

_STR = pa.string()
_STRS = pa.list_(pa.string())
_INTS = pa.list_(pa.int32())


def _struct(fields: Iterable[tuple[str, pa.DataType]]) -> pa.StructType:
    return pa.struct([pa.field(name, kind) for name, kind in fields])


CHANGE_FIELDS = (("kind", _STR), ("slot", _STR), ("from", _STR), ("to", _STR), ("edit", _STR),
                 ("other", _STR))
FACT_FIELDS = (("fact", _STR), ("id", _STR), ("name", _STR), ("subject", _STR), ("object", _STR),
               ("ids", _STRS), ("names", _STRS), ("attributes", _STRS), ("colors", _STRS),
               ("side", _STR), ("x", pa.float64()), ("w", pa.float64()), ("center", pa.float64()),
               ("image_width", pa.float64()), ("count", pa.int64()), ("other", _STR))
# `exists_any` gives one name list per option ("counters or cameras"): `name_options`, so that
# `names` keeps one type; the verifier's `names` is whichever of the two the row has.
QUERY_FIELDS = (("op", _STR), ("step", pa.int32()), ("subject", _STR), ("object", _STR), ("rel", _STR),
                ("opposite", _STR), ("attributes", _STRS), ("names", _STRS),
                ("name_options", pa.list_(_STRS)), ("symmetric", pa.bool_()), ("other", _STR))
GQA_STEP = _struct((("operation", _STR), ("argument", _STR), ("dependencies", _INTS)))
CLEVR_STEP = _struct((("type", _STR), ("inputs", _INTS), ("value_inputs", _STRS)))
TYPES = _struct((("structural", _STR), ("semantic", _STR), ("detailed", _STR)))

SCHEMA = pa.schema([
    pa.field("question_id", _STR, nullable=False),
    pa.field("image_id", _STR, nullable=False),
    pa.field("dataset", _STR, nullable=False),
    pa.field("template", _STR, nullable=False),
    pa.field("types", TYPES),
    pa.field("rank", pa.int32(), nullable=False),
    pa.field("kind", _STR, nullable=False),
    pa.field("question", _STR, nullable=False),
    pa.field("answer", _STR, nullable=False),
    pa.field("original", _struct((("question_id", _STR), ("question", _STR), ("answer", _STR))),
             nullable=False),
    pa.field("change", _struct(CHANGE_FIELDS), nullable=False),
    pa.field("evidence", _struct((("version", pa.int32()), ("answer", _STR), ("query", _struct(QUERY_FIELDS)),
                                  ("facts", pa.list_(_struct(FACT_FIELDS))), ("trace", _STR))),
             nullable=False),
    pa.field("semantic", pa.list_(GQA_STEP)),
    pa.field("program", pa.list_(CLEVR_STEP)),
    pa.field("original_semantic", pa.list_(GQA_STEP)),
    pa.field("original_program", pa.list_(CLEVR_STEP)),
])

# What each column holds, for the dataset card (kept beside the schema so they cannot drift).
COLUMN_DOCS = {
    "question_id": "the perturbation's question id (`<original id>_<suffix><rank>`)",
    "image_id": "the image both questions are about",
    "dataset": "`gqa` or `clevr` (CLEVR and Super-CLEVR)",
    "template": "the template (GQA), `program` (a GQA program edit) or the CLEVR family that made it",
    "types": "the original's question types (GQA's `structural`, `semantic`, `detailed`; CLEVR: the program's last step, the family file, `file/index`)",
    "rank": "1-based order of the perturbation in its set: the set for k holds the rows with rank <= k",
    "kind": "`contrast` (the answer changes) or `invariance` (provably the same answer)",
    "question": "the perturbed question",
    "answer": "its answer, computed from the scene graph",
    "original": "the original question, its id and gold answer",
    "change": "the one atom that changed: `kind` object/attribute/relation, the `slot`, `from` and `to` words",
    "evidence": "the proof `contrastgen verify` re-checks: the `query`, the `facts` it rests on, the answer, and for CLEVR the program's per-step `trace` (JSON)",
    "semantic": "GQA: the perturbation's edited program (steps of `operation`, `argument`, `dependencies`)",
    "program": "CLEVR: the perturbation's edited program (`type`, `inputs`, `value_inputs`)",
    "original_semantic": "GQA: the original's program, where the record carries one",
    "original_program": "CLEVR: the original's program, recovered from its words",
}


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _texts(value: Any) -> list[str] | None:
    return None if value is None else [str(v) for v in value]


def _caster(kind: pa.DataType) -> Callable[[Any], Any]:
    """The conversion a value of a struct field goes through to fit the field's type."""
    if kind == _STR:
        return str
    if kind == _STRS:
        return _texts
    if kind == pa.list_(_STRS):
        return lambda value: [_texts(v) for v in value]
    if pa.types.is_floating(kind):
        return float
    if pa.types.is_integer(kind):
        return int
    return lambda value: value


_CASTERS: dict[tuple[tuple[str, pa.DataType], ...], dict[str, Callable[[Any], Any]]] = {
    fields: {name: _caster(kind) for name, kind in fields if name != "other"}
    for fields in (CHANGE_FIELDS, FACT_FIELDS, QUERY_FIELDS)
}


def _fit(raw: Mapping[str, Any], fields: tuple[tuple[str, pa.DataType], ...]) -> dict[str, Any]:
    """`raw` under a struct's fields; the keys it has no field for go, as JSON, to `other`."""
    casters = _CASTERS[fields]
    out: dict[str, Any] = dict.fromkeys(casters)
    rest = None
    for key, value in raw.items():
        cast = casters.get(key)
        if cast is None:
            rest = rest or {}
            rest[key] = value
        elif value is not None:
            out[key] = cast(value)
    out["other"] = _json(rest) if rest else None
    return out


def _steps(program: Any, keys: tuple[str, ...]) -> list[dict[str, Any]] | None:
    """A program whose steps have exactly the given keys (GQA's or CLEVR's), else None."""
    if not isinstance(program, list) or not all(isinstance(s, Mapping) and keys[0] in s for s in program):
        return None
    if keys[0] == "operation":
        return [{"operation": _text(s.get("operation")), "argument": _text(s.get("argument")),
                 "dependencies": [int(d) for d in s.get("dependencies") or []]} for s in program]
    return [{"type": _text(s.get("type")), "inputs": [int(i) for i in s.get("inputs") or []],
             "value_inputs": _texts(s.get("value_inputs") or [])} for s in program]


def _types(raw: Any) -> dict[str, str | None] | None:
    if not isinstance(raw, Mapping) or not raw:
        return None
    return {k: _text(raw.get(k)) for k in ("structural", "semantic", "detailed")}


def perturbation_row(cs: ContrastSet, p: Perturbation) -> dict[str, Any]:
    """The row of one perturbation of a validated contrast set."""
    rec, evidence = cs.record, p.evidence
    query = dict(evidence["query"]) if isinstance(evidence.get("query"), Mapping) else {}
    if isinstance(query.get("names"), list) and any(isinstance(n, list) for n in query["names"]):
        query["name_options"] = query.pop("names")
    facts = [f for f in evidence.get("facts") or [] if isinstance(f, Mapping)]
    return {
        "question_id": p.question_id,
        "image_id": cs.image_id,
        "dataset": str(rec.get("dataset") or "gqa"),
        "template": cs.template,
        "types": _types(rec.get("types")),
        "rank": p.rank,
        "kind": "invariance" if p.invariance else "contrast",
        "question": p.question,
        "answer": p.answer,
        "original": {"question_id": cs.question_id, "question": cs.question, "answer": str(rec["answer"])},
        "change": _fit(p.change, CHANGE_FIELDS),
        "evidence": {"version": None if evidence.get("version") is None else int(evidence["version"]),
                     "answer": _text(evidence.get("answer")),
                     "query": _fit(query, QUERY_FIELDS),
                     "facts": [_fit(f, FACT_FIELDS) for f in facts],
                     "trace": _json(evidence["trace"]) if "trace" in evidence else None},
        "semantic": _steps(p.program.get("semantic"), ("operation",)),
        "program": _steps(p.program.get("program"), ("type",)),
        "original_semantic": _steps(rec.get("semantic"), ("operation",)),
        "original_program": _steps(rec.get("program"), ("type",)),
    }


def rows(sets: Iterable[ContrastSet]) -> Iterator[dict[str, Any]]:
    """Every perturbation's row, in file order and, within a set, in rank order."""
    for cs in sets:
        for p in sorted(cs.perturbations, key=lambda p: p.rank):
            yield perturbation_row(cs, p)


def table(sets: Iterable[ContrastSet]) -> pa.Table:
    return pa.Table.from_pylist(list(rows(sets)), schema=SCHEMA)
