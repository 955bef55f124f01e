"""CLEVR's question families, and their texts compiled into regular expressions.

A CLEVR-family question file names each question's family (`template_filename`,
`question_family_index`) but, as released, carries no program. The family's text patterns are
the generator's only record of how a program became words, so we read a question back by
inverting them: each text becomes a regular expression whose named groups are its parameters.
The expressions are rule data (`rules/clevr/question_patterns.json`), built by `contrastgen clevr
compile` from the template files and the vocabulary, so that a reviewer can read exactly what a
question must look like to be read, and a test holds the committed file to a fresh build.

How the generator wrote a text, and so what a pattern allows (Super-CLEVR's
`generate_questions.py`): each `[optional words]` kept or dropped; each parameter replaced by a
word for its value or by nothing (size, colour, material left open), "thing"/"object" (a shape
left open) or "part"; spaces collapsed; and, in families with two full references, " other " /
" another " dropped when the two references differ (`other_heuristic`). Each optional and the
"other" word get a named group too, so a perturbation is written back with the same choices.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import orjson
import regex

from contrastgen.datasets.clevr_vocab import Vocabulary, load_vocabulary
from contrastgen.errors import InputError
from contrastgen.resources import rules_dir, rules_resource

PATTERNS_FILE = "question_patterns.json"
_PARAM = regex.compile(r"<([A-Z])(\d?)>")
_UNIT = regex.compile(r"\[[^\]]*\]|\S+")
# The parameter letters and the value type each stands for in every family file.
PARAM_TYPES = {"Z": "Size", "C": "Color", "M": "Material", "S": "Shape", "R": "Relation", "P": "Partname"}
_EMPTY_ALLOWED = {"Size", "Color", "Material"}


@dataclass(frozen=True)
class Family:
    """One question family: its texts, the template program and its constraints."""

    file: str  # "one_hop.json"
    index: int  # question_family_index
    texts: tuple[str, ...]
    nodes: tuple[dict[str, Any], ...]
    params: dict[str, str]  # "<Z>" -> "Size"
    constraints: tuple[dict[str, Any], ...]

    @property
    def key(self) -> str:
        return f"{self.file.removesuffix('.json')}/{self.index}"

    @property
    def answer_type(self) -> str:
        """What the family's answers are, from its last function: "count" (a number), "yes/no",
        or the attribute a query asks ("color", "shape", "partname", ...)."""
        last = str(self.nodes[-1]["type"]) if self.nodes else ""
        if last == "count" or last.endswith("_count"):
            return "count"
        if last.startswith(("query_", "partquery_")):
            return last.partition("query_")[2]
        return "yes/no"  # exist, *_exist, equal_*, less_than, greater_than


def group_name(param: str) -> str:
    """'<Z2>' -> 'Z2' (a regular expression group name)."""
    return param.strip("<>")


def _param_pattern(param: str, kind: str, vocab: Vocabulary) -> str:
    words = "|".join(regex.escape(w) for w in vocab.surfaces(kind))
    return f"(?P<{group_name(param)}>{words})"


def compile_text(text: str, params: dict[str, str], vocab: Vocabulary) -> str:
    """One family text as a regular expression over the question as written.

    Units are the text's words and bracketed optionals; every unit but the first owns the space
    before it, so a unit that may vanish (an optional, an open size/colour/material, "other")
    takes its space with it, as the generator's space collapsing does.
    """
    pieces: list[str] = []
    n_optional = 0
    for i, unit in enumerate(_UNIT.findall(text)):
        space = "" if i == 0 else " "
        if unit.startswith("["):
            body = regex.escape(unit[1:-1])
            pieces.append(f"(?P<opt{n_optional}>{space}{body})?")
            n_optional += 1
            continue
        match = _PARAM.search(unit)
        if match is None:
            if unit == "other":
                pieces.append(f"(?P<other>{space}other)?")
            elif unit == "another":
                pieces.append(f"{space}(?P<another>another|a)")
            else:
                pieces.append(space + regex.escape(unit))
            continue
        param = match.group(0)
        kind = params[param]
        after = unit[match.end():]
        # "<S>s": the plural, as Super-CLEVR's generator writes it ("buss") or as English does ("buses")
        plural = after[:1] == "s" and not after[1:2].isalpha()
        suffix = "(?:es|s)" + regex.escape(after[1:]) if plural else regex.escape(after)
        body = regex.escape(unit[:match.start()]) + _param_pattern(param, kind, vocab) + suffix
        if kind in _EMPTY_ALLOWED and unit == param:
            pieces.append(f"(?:{space}{body})?")
        else:
            pieces.append(space + body)
    return "".join(pieces)


@functools.lru_cache(maxsize=1)
def load_families() -> dict[tuple[str, int], Family]:
    """Every family of rules/clevr/templates/, keyed (template_filename, question_family_index)."""
    out: dict[tuple[str, int], Family] = {}
    for path in sorted((rules_dir() / "clevr" / "templates").glob("*.json")):
        for index, raw in enumerate(orjson.loads(path.read_bytes())):
            params = {p["name"]: p["type"] for p in raw["params"]}
            out[(path.name, index)] = Family(path.name, index, tuple(raw["text"]), tuple(raw["nodes"]),
                                             params, tuple(raw.get("constraints", ())))
    return out


def build_patterns() -> dict[str, Any]:
    """The contents of rules/clevr/question_patterns.json."""
    vocab = load_vocabulary()
    families: dict[str, list[list[str]]] = {}
    for (file, _index), family in load_families().items():
        families.setdefault(file, []).append([compile_text(t, family.params, vocab) for t in family.texts])
    return {
        "about": [
            "CLEVR and Super-CLEVR question texts as regular expressions (Python `regex`, full match,",
            "case-sensitive), one list per family, in the order of the family's `text` list.",
            "Built by `contrastgen clevr compile` from rules/clevr/templates/ and the vocabulary",
            "(metadata_*.json, synonyms.json, part_dict.json); do not edit by hand.",
            "Groups: one per parameter (Z2 for <Z2>), optN for the Nth bracketed optional, other/another",
            "for the word the generator drops when two references differ.",
        ],
        "families": families,
    }


@functools.lru_cache(maxsize=1)
def compiled_patterns() -> dict[tuple[str, int], tuple[regex.Pattern, ...]]:
    """The committed patterns, compiled: (file, family index) -> one pattern per text."""
    try:
        data = orjson.loads(rules_resource("clevr", PATTERNS_FILE).read_bytes())
    except FileNotFoundError as exc:
        raise InputError("missing; run `contrastgen clevr compile`", path=f"rules/clevr/{PATTERNS_FILE}") from exc
    return {(file, i): tuple(regex.compile(p) for p in texts)
            for file, fams in data["families"].items() for i, texts in enumerate(fams)}


def write_patterns() -> str:
    """Rebuild rules/clevr/question_patterns.json; returns its path."""
    import os

    path = rules_dir() / "clevr" / PATTERNS_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_bytes(orjson.dumps(build_patterns(), option=orjson.OPT_INDENT_2) + b"\n")
    os.replace(tmp, path)
    compiled_patterns.cache_clear()
    return str(path)
