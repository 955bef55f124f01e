"""The registry of dataset families: what `run/` asks, and what a family must declare."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from contrastgen.clevr.question import CLEVR_SEED
from contrastgen.engine.question import TEMPLATE_SEED
from contrastgen.errors import InputError
from contrastgen.families import FAMILIES, all_reasons, family_named
from contrastgen.families.base import register
from contrastgen.families.clevr import Clevr
from contrastgen.perturb import seeded_rng
from contrastgen.programs.edits.editor import PROGRAM_SEED

REPO = Path(__file__).resolve().parents[2]


def test_the_built_in_families_in_order_gqa_the_default():
    assert FAMILIES.names()[:2] == ("gqa", "clevr") and family_named(None).name == "gqa"
    with pytest.raises(InputError, match="unknown dataset family 'vqa' \\(one of gqa, clevr"):
        family_named("vqa")


def test_each_path_seeds_by_the_key_its_family_declares():
    """The seed strings are each path's, declared where the path runs; the families list them,
    and none is another's (two paths drawing one order would not be independent)."""
    keys = {path: key for f in FAMILIES.values() for path, key in f.seed_keys.items()}
    assert keys == {"template": TEMPLATE_SEED, "program": PROGRAM_SEED, "clevr": CLEVR_SEED}
    assert len(set(keys.values())) == len(keys)
    # the strings whose outputs the byte-identity baseline holds
    assert seeded_rng(CLEVR_SEED, 3, "q1").random() == random.Random("3:q1").random()
    assert seeded_rng(TEMPLATE_SEED, 3, "q1", "t").random() == random.Random("3:q1:t").random()
    assert seeded_rng(PROGRAM_SEED, 3, "q1").random() == random.Random("3/q1/program").random()


def test_a_family_whose_seed_key_is_taken_is_refused():
    class Copy(Clevr):
        name = "copy"

    with pytest.raises(ValueError, match="seed key '\\{seed\\}:\\{question\\}' is the clevr family's"):
        register(Copy())
    assert "copy" not in FAMILIES


def test_a_family_takes_only_its_own_options():
    gqa, clevr = family_named("gqa"), family_named("clevr")
    assert gqa.options({"mode": "both"}).mode == "both"
    assert clevr.option_names() == ("every_original",)
    with pytest.raises(TypeError, match="the clevr family takes no option mode"):
        clevr.options({"mode": "both"})


def test_every_reason_of_every_family_is_listed_once():
    reasons = all_reasons()
    assert len(reasons) == len(set(reasons))
    assert {"no_match", "program_mismatch", "no_family", "part_ambiguous"} <= set(reasons)
    clevr_raised = {"no_family", "no_reading", "original_invalid", "part_ambiguous", "no_edit"}
    assert clevr_raised <= set(family_named("clevr").reasons)


def test_run_names_no_family():
    """`run/` finds a family through the registry: it imports the package or its base, never a
    family's module, and no run module says a family's name."""
    for path in sorted((REPO / "contrastgen" / "run").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        imported = {node.module for node in ast.walk(ast.parse(text)) if isinstance(node, ast.ImportFrom)}
        families = {m for m in imported if m and m.startswith("contrastgen.families")}
        assert families <= {"contrastgen.families", "contrastgen.families.base"}, (path.name, families)
        assert "clevr" not in text.lower(), path.name


def test_a_familys_warnings_are_its_own_the_cli_names_none():
    """The no-program warning belongs to GQA's `mode`: CLEVR, which has no such option, never
    gives it, whatever its statistics say, and GQA gives it only for a mode that edits programs
    on an input where none matched."""
    gqa, clevr = family_named("gqa"), family_named("clevr")
    nothing = {"templates": {"program": {"matched": 0}}}
    assert clevr.warnings(nothing, clevr.options({})) == []
    assert gqa.warnings(nothing, gqa.options({"mode": "templates"})) == []
    assert gqa.warnings({"templates": {"program": {"matched": 3}}}, gqa.options({"mode": "both"})) == []
    (warning,) = gqa.warnings(nothing, gqa.options({"mode": "programs"}))
    assert warning.startswith("--mode programs: no question has a program") and "alone ran" not in warning
