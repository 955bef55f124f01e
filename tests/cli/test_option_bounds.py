"""Out-of-range option values are refused where they are given: exit 2 and a sentence naming the
option, never a traceback from deep inside a run (nan passes any click range that only compares;
a seed past 64 bits fails when stats.json is written; a negative k empties the list of ks)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli

CASES = [
    (["generate", "--seed", str(2**64)], "--seed"),
    (["augment", "--seed", str(-(2**63) - 1)], "--seed"),
    (["augment", "--replace-share", "nan"], "--replace-share"),
    (["captions", "generate", "--seed", str(2**64)], "--seed"),
    (["evaluate", "--k", "-3"], "--k"),
    (["evaluate", "--n-boot", "100000000"], "--n-boot"),
    (["evaluate", "--seed", "-1"], "--seed"),
    (["evaluate", "--examples", "-1"], "--examples"),
    (["ood", "superclevr", "--tolerance", "nan"], "--tolerance"),
    (["ood", "superclevr", "--tolerance", "inf"], "--tolerance"),
    (["mturk", "ingest", "--min-gold-accuracy", "nan"], "--min-gold-accuracy"),
    (["mturk", "ingest", "--min-gold-accuracy", "1.5"], "--min-gold-accuracy"),
    (["mturk", "export", "--gold-per-hit", "-3"], "--gold-per-hit"),
    (["mturk", "export", "--items-per-hit", "0"], "--items-per-hit"),
    (["serve", "--timeout", "nan"], "--timeout"),
    # crowd counts go into the manifest as JSON integers: 2**70 used to fail writing it
    (["mturk", "export", "--assignments", str(2**70)], "--assignments"),
    (["mturk", "export", "--sample", "100000000"], "--sample"),
    (["mturk", "export", "--items-per-hit", str(2**70)], "--items-per-hit"),
    (["mturk", "export", "--items-per-hit", "101"], "--items-per-hit"),
    (["ood", "gqa", "--alpha", "-3"], "--alpha"),
    (["ood", "gqa", "--entropy-threshold", "1.5"], "--entropy-threshold"),
    (["ood", "vqavs", "--entropy-threshold", "0"], "--entropy-threshold"),
    (["ood", "vqavs", "--tail-factor", "-3"], "--tail-factor"),
    (["ood", "gqa-redundancy", "--max-level", str(2**70)], "--max-level"),
    (["mturk", "preview", "--hits", "1000001"], "--hits"),
    (["mturk", "simulate", "--workers", str(2**70)], "--workers"),
]


@pytest.mark.parametrize(("argv", "option"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_an_out_of_range_option_is_a_usage_error_naming_it(argv, option):
    # click checks the options in the order given, so the bad one is checked before any input
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}'" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)

