"""CLEVR's and Super-CLEVR's values, and the words they are written with.

Why a vocabulary object rather than the generator's metadata as it stands: reading a question
back needs the inverse of what the generator did when it wrote one (which words a value may be
rendered as, which value a word stands for), and the two families differ only in their shapes
and parts. One union vocabulary serves both: the value sets of the two families do not collide
(a test holds every word to one value of one type), so a scene never needs to say which family
it comes from.

Rendering follows the generator (Super-CLEVR `generate_questions.py`): a value with synonyms is
written as one of them; a Super-CLEVR shape by its `Shapename` ("addi" -> "regular car"); a part
name by `post_process_part_name` ("wheel_front_left" -> "front left wheel"); any other value as
itself. A parameter left empty is written as nothing, or as "thing"/"object" for a shape and
"part" for a part.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, field

import orjson

from contrastgen.resources import rules_resource

# Parameter types of the templates, and the attribute each filters on.
ATTRIBUTE_TYPES = ("Size", "Color", "Material", "Shape")
NULL_SHAPE = "thing"
NULL_PART = "part"
# The generator's words for where a part sits on its object; stripping them gives its kind.
_PART_POSITION_WORDS = ("right", "left", "front", "back", "center", "mid")
# CLEVR's relation values and the relation names the data model stores them under.
RELATION_NAMES = {"left": "to the left of", "right": "to the right of", "behind": "behind", "front": "in front of"}
RELATION_VALUES = {name: value for value, name in RELATION_NAMES.items()}


# Endings that take "-es" in the plural ("bus" -> "buses", "box" -> "boxes"); Super-CLEVR's own
# generator appends "s" to every name ("buss"), which its questions keep and the reader accepts.
_SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")


def plural(words: str) -> str:
    """The plural of a shape or part name as English writes it: its last word takes "-es" after a
    sibilant, else "-s" ("regular bus" -> "regular buses", "road bike" -> "road bikes")."""
    return words + ("es" if words.endswith(_SIBILANT_ENDINGS) else "s")


def part_display(raw: str) -> str:
    """The words a part name is written with ("wheel_front_left" -> "front left wheel")."""
    words = raw.split("_")
    if words[-1] == "s":
        words.pop()
    while words and words[-1] in _PART_POSITION_WORDS:
        words.insert(0, words.pop())
    return " ".join(words)


def part_kind(raw: str) -> str:
    """A part's kind without its position ("wheel_front_left" -> "wheel"), in the generator's
    underscore form; a filter on the kind matches every part of that kind."""
    return "_".join(w for w in raw.split("_") if w not in (*_PART_POSITION_WORDS, "s"))


def _read(name: str):
    return orjson.loads(rules_resource("clevr", name).read_bytes())


@dataclass(frozen=True)
class Vocabulary:
    """Values by type, the words for each, and the Super-CLEVR shape and part hierarchies."""

    values: dict[str, tuple[str, ...]]  # type -> canonical values (shapes: specific and categories)
    words: dict[str, dict[str, str]]  # type -> surface word -> canonical value ("" = left empty)
    shape_category: dict[str, str]  # specific Super-CLEVR shape -> its category ("sedan" -> "car")
    shape_names: dict[str, str]  # shape -> the words it is written and answered with
    parts_of_shape: dict[str, tuple[str, ...]]  # Super-CLEVR shape -> its part names, generator order
    synonyms: dict[str, tuple[str, ...]]
    type_of_value: dict[str, str] = field(default_factory=dict)  # attribute value -> its type

    def surfaces(self, kind: str) -> list[str]:
        """Every word a parameter of `kind` may be written as, longest first (so a regular
        expression built from them prefers "regular bus" to "bus")."""
        return sorted((w for w in self.words[kind] if w), key=lambda w: (-len(w), w))

    def canonical(self, kind: str, word: str) -> str:
        return self.words[kind][word]

    def render(self, kind: str, value: str, *, like: str | None = None) -> str:
        """How the generator writes `value`; `like`, the word the original used for a value of
        this parameter, picks the same synonym when it is one of `value`'s (so "tiny" stays
        "tiny"), else its first synonym: the rendering is deterministic."""
        if value == "":
            return ""
        options = self.synonyms.get(value)
        if options:
            return like if like in options else options[0]
        if kind == "Partname":
            return part_display(value)
        return self.shape_names.get(value, value)

    def answer_words(self, value: object) -> str:
        """An executed answer as the question files write it: booleans yes/no, counts as digits,
        Super-CLEVR shapes by their names, part names in words."""
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, int):
            return str(value)
        text = str(value)
        if text in self.shape_names:
            return self.shape_names[text]
        return part_display(text) if "_" in text else text

    def shape_matches(self, shape: str, value: str) -> bool:
        return value == shape or self.shape_category.get(shape) == value


@functools.lru_cache(maxsize=1)
def load_vocabulary() -> Vocabulary:
    """The union vocabulary of CLEVR 1.0 and Super-CLEVR, from rules/clevr/."""
    clevr = _read("metadata_clevr.json")["types"]
    super_ = _read("metadata_superclevr.json")["types"]
    synonyms = {k: tuple(v) for k, v in _read("synonyms.json").items()}
    part_dict = {k: tuple(v) for k, v in _read("part_dict.json").items()}
    category = {shape: cat for cat, shapes in super_["Shape"].items() for shape in shapes}
    shape_names = dict(super_["Shapename"])
    values: dict[str, list[str]] = {
        "Size": list(clevr["Size"]), "Color": list(clevr["Color"]), "Material": list(clevr["Material"]),
        "Relation": list(clevr["Relation"]),
        "Shape": list(clevr["Shape"]) + list(category) + list(super_["Shape"]),
    }
    all_parts = sorted({p for parts in part_dict.values() for p in parts})
    kinds = sorted({part_kind(p) for p in all_parts} - set(all_parts))
    values["Partname"] = all_parts + kinds
    words: dict[str, dict[str, str]] = defaultdict(dict)
    for kind, vals in values.items():
        for value in vals:
            if kind == "Partname":
                forms = [part_display(value)]
            elif value in synonyms:
                forms = list(synonyms[value])
            else:
                forms = [shape_names.get(value, value)]
            for form in forms:
                # Two raw part names may share their words ("front_left_door", "door_front_left"):
                # the words name the part, so the first raw name stands for both.
                words[kind].setdefault(form, value)
    for kind in ("Size", "Color", "Material"):
        words[kind][""] = ""
    for form in synonyms[NULL_SHAPE]:
        words["Shape"][form] = NULL_SHAPE
    words["Partname"][NULL_PART] = NULL_PART
    type_of_value = {v: kind for kind in ("Size", "Color", "Material") for v in values[kind]}
    return Vocabulary(values={k: tuple(v) for k, v in values.items()}, words=dict(words),
                      shape_category=category, shape_names=shape_names, parts_of_shape=part_dict,
                      synonyms=synonyms, type_of_value=type_of_value)
