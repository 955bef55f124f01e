"""Reading a CLEVR-family question back into its parameters and its program.

The question names its family; the family's compiled texts (`clevr_templates.compiled_patterns`) say
which words each parameter was written with. A reading is kept only when it is the one reading
the generator could have produced: the template's NULL constraints hold (a parameter the family
leaves open is open), the word "other" is there exactly when the generator would have kept it,
and every text of the family that matches gives the same values. Two different readings are
`ambiguous`, none is `no_reading`: refused and counted, never guessed.

The program is then built as the generator built it (`instantiate_templates_dfs`): a
`filter_unique` node becomes one `filter_<attr>` per parameter that has a value, in the order the
node lists them, then `unique`; `relate_filter_*` starts with `relate`; `*_count` and `*_exist`
end with `count` and `exist`; part filters are `partfilter_<attr>`. Every node is written in
CLEVR's released shape, `{"type", "inputs", "value_inputs"}`, with every value filled in.

A family's single-attribute filter (`filter_size` after `union` in "How many <Z3> things are
either ...") left open ("How many things are either ...") is no node at all, as an open
parameter of a `filter_unique` is none: the words say no size, so the program filters none.
CLEVR's and Super-CLEVR's generators never leave such a parameter open (they draw its value
from the metadata, which has no empty value), so their programs never say what an open value
means, and their engines disagree on it (an empty value keeps every object, "thing" none); a
program that keeps the node would mean what its executor happens to do with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from contrastgen.datasets.clevr_templates import (
    PARAM_TYPES,
    Family,
    compiled_patterns,
    group_name,
    load_families,
)
from contrastgen.datasets.clevr_vocab import NULL_PART, NULL_SHAPE, load_vocabulary, part_display

_SPECIAL = ("filter_unique", "filter_count", "filter_exist", "filter", "relate_filter", "relate_filter_unique",
            "relate_filter_count", "relate_filter_exist", "partfilter_unique", "partfilter")
_OTHER_PAIRS = (("<Z>", "<Z2>"), ("<C>", "<C2>"), ("<M>", "<M2>"), ("<S>", "<S2>"))


@dataclass(frozen=True)
class Reading:
    """A question read back: its family, the text it matched and how each parameter was written."""

    family: Family
    text_index: int
    values: dict[str, str]  # "<Z>" -> canonical value; "" / "thing" / "part" when left open
    words: dict[str, str]  # "<Z>" -> the word the question used ("" when left open)
    choices: dict[str, str | None] = field(default_factory=dict)  # optN / other / another as written

    def program(self) -> list[dict[str, Any]]:
        return build_program(self.family, self.values)


@dataclass(frozen=True)
class Unreadable:
    """Why the words are not one reading of their family: `no_family`, `no_reading` or
    `ambiguous` (the generator refuses the question under that reason, the verifier reports it)."""

    reason: str
    detail: str = ""


def is_null(kind: str, value: str) -> bool:
    return value == "" or (kind == "Shape" and value == NULL_SHAPE) or (kind == "Partname" and value == NULL_PART)


def null_value(kind: str) -> str:
    return NULL_SHAPE if kind == "Shape" else NULL_PART if kind == "Partname" else ""


def keeps_other(values: Mapping[str, str]) -> bool:
    """Whether the generator keeps " other "/" another " (its `other_heuristic`): always, unless
    the family has exactly two full references and they differ in a value both give."""
    if set(values) != {p for pair in _OTHER_PAIRS for p in pair}:
        return True
    for a, b in _OTHER_PAIRS:
        # an open shape is "thing" in the generator's values, so it counts as given
        va, vb = values[a], values[b]
        if va != "" and vb != "" and va != vb:
            return False
    return True


def constraints_hold(family: Family, values: Mapping[str, str]) -> bool:
    """The family's NULL constraints (OUT_NEQ needs the scene: see `contrastgen.clevr.edits`)."""
    for c in family.constraints:
        if c["type"] == "NULL":
            param = c["params"][0]
            if not is_null(family.params[param], values[param]):
                return False
    return True


def read_question(record: Mapping[str, Any]) -> Reading | Unreadable:
    """Read a CLEVR-family question record (`question`, `template_filename`, `question_family_index`)."""
    key = (record.get("template_filename"), record.get("question_family_index"))
    family = load_families().get(key)  # type: ignore[arg-type]
    if family is None:
        return Unreadable("no_family", f"no template family {key[0]}#{key[1]}")
    vocab = load_vocabulary()
    text = str(record.get("question", "")).strip()
    readings: list[Reading] = []
    for t, pattern in enumerate(compiled_patterns()[key]):
        m = pattern.fullmatch(text)
        if m is None:
            continue
        groups = m.groupdict()
        words = {p: groups.get(group_name(p)) or "" for p in family.params}
        values = {p: vocab.canonical(kind, words[p]) if words[p] else null_value(kind)
                  for p, kind in family.params.items()}
        choices = {g: v for g, v in groups.items() if g.startswith("opt") or g in ("other", "another")}
        has_other = "other" in choices or "another" in choices
        if has_other:
            said = bool(choices.get("other")) or choices.get("another") == "another"
            if said != keeps_other(values):
                continue
        if not constraints_hold(family, values):
            continue
        readings.append(Reading(family, t, values, words, choices))
    if not readings:
        return Unreadable("no_reading", f"the words match no text of {family.key} as the generator writes it")
    if len({tuple(sorted(r.values.items())) for r in readings}) > 1:
        return Unreadable("ambiguous", f"{len(readings)} different readings in {family.key}")
    return readings[0]


def build_program(family: Family, values: Mapping[str, str]) -> list[dict[str, Any]]:
    """The family's program with `values` filled in, expanded as the generator expands it."""
    return build_program_and_map(family, values)[0]


def build_program_and_map(family: Family, values: Mapping[str, str]) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The program, and for each template node the program node that holds its output."""
    program: list[dict[str, Any]] = []
    at: dict[int, int] = {}  # template node -> program node holding its output

    def add(kind: str, inputs: list[int], value_inputs: list[str] | None = None) -> int:
        program.append({"type": kind, "inputs": inputs, "value_inputs": value_inputs or []})
        return len(program) - 1

    for t, node in enumerate(family.nodes):
        kind = node["type"]
        inputs = [at[i] for i in node["inputs"]]
        side = list(node.get("side_inputs", []))
        if kind in _SPECIAL:
            last = inputs[0]
            if kind.startswith("relate"):
                last = add("relate", [last], [values[side.pop(0)]])
            prefix = "part" if kind.startswith("part") else ""
            for param in side:
                ptype = family.params[param]
                if not is_null(ptype, values[param]):
                    last = add(f"{prefix}filter_{ptype.lower()}", [last], [values[param]])
            for suffix in ("unique", "count", "exist"):
                if kind.endswith(suffix):
                    last = add(suffix, [last])
            at[t] = last
        elif kind.startswith(("filter_", "partfilter_")) and is_null(family.params[side[0]], values[side[0]]):
            at[t] = inputs[0]  # an open filter filters nothing: the words say no such attribute
        else:
            at[t] = add(kind, inputs, [values[p] for p in side])
    return program, at


def normalize_program(program: Any) -> list[dict[str, Any]] | None:
    """A record's own program in the shape `build_program` writes (CLEVR 1.0's files say
    `function` where Super-CLEVR's say `type`, and may name values `side_inputs`)."""
    if not isinstance(program, list):
        return None
    out = []
    for node in program:
        if not isinstance(node, Mapping):
            return None
        kind = node.get("type", node.get("function"))
        values = node.get("value_inputs", node.get("side_inputs", []))
        if not isinstance(kind, str) or not isinstance(node.get("inputs"), list):
            return None
        out.append({"type": kind, "inputs": list(node["inputs"]), "value_inputs": list(values or [])})
    return out


def words_and_program_agree(reading: Reading, program: list[dict[str, Any]]) -> bool:
    """A record that carries a program keeps it only when its words say the same program."""
    own = normalize_program(program)
    return own is not None and [_comparable(n) for n in own] == [_comparable(n) for n in reading.program()]


def _comparable(node: dict[str, Any]) -> tuple:
    values = node["value_inputs"]
    if node["type"] == "partfilter_partname":  # raw names written alike name the same part
        values = [part_display(v) for v in values]
    return node["type"], tuple(node["inputs"]), tuple(values)


__all__ = ["PARAM_TYPES", "Reading", "Unreadable", "build_program", "read_question", "words_and_program_agree"]
