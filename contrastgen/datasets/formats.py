"""Which question formats contrastgen reads, and deciding which one a file is in.

Why here, once: `generate`, `augment` and `ood` take `--format auto` and must decide from a
file's first bytes (a GQA split is gigabytes) which reader to use; the command line's
`--format` choices come from the same table, so a format added here is offered and detected
everywhere that reads it.

A command reads some of the formats (`Formats`); the first of them is what a file that matches
none of the others is taken for, and its reader then names what is wrong with the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from contrastgen.datasets.inputs import InputPaths, json_files
from contrastgen.datasets.streaming import first_record, top_level_start
from contrastgen.errors import InputError
from contrastgen.jsonio import read_json
from contrastgen.registry import Registry


@dataclass(frozen=True)
class QuestionFormat:
    name: str
    describe: str  # one line, for a reader of `--help`
    detect: Callable[[InputPaths], bool]  # whether the questions are in this format, from their first bytes


QUESTION_FORMATS: Registry[QuestionFormat] = Registry("question format")


def _first_file(questions: InputPaths) -> Path:
    first = json_files(questions)[0]
    if not first.is_file():
        raise InputError("file not found", path=str(first))
    return first


def _is_clevr(questions: InputPaths) -> bool:
    """CLEVR's top-level keys (`questions`, `info`) open the first file."""
    kind, key = top_level_start(_first_file(questions))
    return kind == "object" and key in ("questions", "info")


def _is_gqa(questions: InputPaths) -> bool:
    """GQA's object keyed by question id (or a directory of shards), not VQA's lists."""
    p = Path(questions) if isinstance(questions, (str, os.PathLike)) else Path(questions[0])
    if p.is_dir():
        return True
    first = first_record(p)
    if isinstance(first, Mapping) and "question" in first and "imageId" in first:
        return True  # without parsing the file: a GQA split is gigabytes
    data = read_json(p)
    return isinstance(data, Mapping) and "questions" not in data


QUESTION_FORMATS.add("gqa", QuestionFormat("gqa", "GQA: questions keyed by id, with programs", _is_gqa))
QUESTION_FORMATS.add("clevr", QuestionFormat("clevr", "CLEVR / Super-CLEVR: {\"questions\": [...]}", _is_clevr))
QUESTION_FORMATS.add("vqa", QuestionFormat("vqa", "VQA v2 (or VQA-VS's lists) with its annotations",
                                           lambda questions: not _is_gqa(questions)))


@dataclass(frozen=True)
class Formats:
    """The question formats one command reads; the first is the one a file matching no other is
    taken for."""

    names: tuple[str, ...]

    def choices(self) -> list[str]:
        """`--format`'s choices."""
        return ["auto", *self.names]


OOD_FORMATS = Formats(("vqa", "gqa"))  # ood vqavs


def detect_format(questions: InputPaths, formats: Formats) -> str:
    """The format of `questions` among `formats`: the first of the others whose detector holds,
    else the first."""
    for name in formats.names[1:]:
        if QUESTION_FORMATS[name].detect(questions):
            return name
    return formats.names[0]


def resolve_format(data_format: str, questions: InputPaths, formats: Formats) -> str:
    """`--format`'s value, with "auto" decided from the file."""
    return detect_format(questions, formats) if data_format == "auto" else QUESTION_FORMATS[data_format].name
