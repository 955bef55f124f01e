"""One table of question formats: what `--format` offers and what `auto` decides come from it."""

from __future__ import annotations

import json

from contrastgen.cli import cli
from contrastgen.datasets.formats import OOD_FORMATS, QUESTION_FORMATS, detect_format
from contrastgen.families import FAMILIES, family_reading
from contrastgen.resources import clevr_sample_dir, sample_dir


def _choices(*path: str) -> list[str]:
    command = cli
    for name in path:
        command = command.get_command(None, name)
    [option] = [p for p in command.params if p.name == "data_format"]
    return list(option.type.choices)


def test_the_command_lines_format_choices_are_the_registrys():
    assert _choices("generate") == _choices("augment") == ["auto", *FAMILIES.names()] == ["auto", "gqa", "clevr"]
    assert _choices("ood", "vqavs") == OOD_FORMATS.choices() == ["auto", "vqa", "gqa"]
    assert all(name in QUESTION_FORMATS for name in FAMILIES.names() + OOD_FORMATS.names)


def test_auto_decides_among_the_formats_a_command_reads(tmp_path):
    gqa, clevr = sample_dir() / "questions.json", clevr_sample_dir() / "questions"
    vqa = tmp_path / "vqa.json"
    vqa.write_text(json.dumps({"questions": [{"question_id": 1, "image_id": 1, "question": "What?"}]}))
    assert family_reading(gqa).name == "gqa" and family_reading(clevr).name == "clevr"
    assert detect_format(gqa, OOD_FORMATS) == "gqa" and detect_format(vqa, OOD_FORMATS) == "vqa"
