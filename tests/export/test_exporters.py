"""One registry of exports: both commands list their `--format` choices from it, an export is
found by the kind of output it reads, and an unknown one is an input error naming the choices."""

from __future__ import annotations

import click
import pytest

from contrastgen.cli.caption_cmds import export_cmd as caption_export_cmd
from contrastgen.cli.export_cmds import export_cmd
from contrastgen.errors import InputError
from contrastgen.export.exporters import (
    EXPORTS,
    IMAGES,
    NAME,
    SPLIT,
    exporter,
    formats,
    run_export,
    taking,
)
from contrastgen.files.manifest import CAPTION_SET, CONTRAST_SET


def _choices(command: click.Command) -> list[str]:
    option = next(p for p in command.params if p.name == "fmt")
    assert isinstance(option.type, click.Choice)
    return list(option.type.choices)


def test_the_commands_offer_what_the_registry_holds():
    assert _choices(export_cmd) == list(formats(CONTRAST_SET)) == ["parquet", "hf", "jsonl", "lmms-eval", "vlmevalkit"]
    assert _choices(caption_export_cmd) == list(formats(CAPTION_SET)) == ["sugarcrepe", "aro", "hf", "negclip"]
    assert len(EXPORTS) == 9
    assert {e.reads for e in EXPORTS.values()} == {CONTRAST_SET, CAPTION_SET}


def test_an_export_says_which_options_it_takes():
    assert taking(CONTRAST_SET, SPLIT) == ("parquet", "hf", "jsonl")
    assert taking(CONTRAST_SET, NAME) == ("lmms-eval", "vlmevalkit")
    assert taking(CONTRAST_SET, IMAGES) == ("parquet", "hf", "lmms-eval", "vlmevalkit")
    assert exporter(CAPTION_SET, "hf").reads == CAPTION_SET and exporter(CONTRAST_SET, "hf").reads == CONTRAST_SET


def test_an_unknown_export_is_an_input_error_naming_the_choices(tmp_path):
    with pytest.raises(InputError, match=r"unknown export format 'csv' \(one of sugarcrepe, aro, hf, negclip\)"):
        run_export(CAPTION_SET, "csv", tmp_path, tmp_path / "out")
    with pytest.raises(InputError, match="one of parquet, hf, jsonl, lmms-eval, vlmevalkit"):
        exporter(CONTRAST_SET, "negclip")
