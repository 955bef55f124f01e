"""Two-image groups of CLEVR-family questions: the bundled Super-CLEVR sample and ../shared's
Super-CLEVR scenes. A CLEVR program runs as it stands on another scene; the verifier runs it with
its own interpreter, and turns down a cell that does not hold."""

from __future__ import annotations

import copy
from pathlib import Path

import orjson
import pytest

from contrastgen.datasets.clevr import load_questions, load_scenes
from contrastgen.resources import clevr_sample_dir
from contrastgen.run.generate import generate
from contrastgen.verify.checker import verify_contrast_sets

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "super-clevr"


def _run(questions: Path, scenes: Path, **options):
    qs, graphs = load_questions(questions), load_scenes(scenes)
    return generate(qs, graphs, family="clevr", max_k=5, seed=0, **options), graphs


def test_the_bundled_sample_is_grouped_re_proven_and_unchanged_without_groups():
    sample = clevr_sample_dir()
    grouped, graphs = _run(sample / "questions", sample / "scenes", groups=True)
    plain, _ = _run(sample / "questions", sample / "scenes")
    stats = grouped.stats["groups"]
    assert stats["grouped"] >= 20 and stats["swap"] >= 5 and "groups" not in plain.stats
    report = verify_contrast_sets(grouped.records, graphs)
    assert report.ok, report.failures[:5]
    assert report.groups == stats["grouped"]
    stripped = [orjson.loads(line) for line in grouped.lines]
    for rec in stripped:
        for p in rec["perturbations"]:
            p.pop("group", None)
    assert stripped == [orjson.loads(line) for line in plain.lines]

    rec = next(r for r in grouped.records if any("group" in p for p in r["perturbations"]))
    for change in ("answer", "program"):
        bad = copy.deepcopy(rec)
        g = next(p for p in bad["perturbations"] if "group" in p)["group"]
        if change == "answer":
            g["cells"][3]["answer"] = g["cells"][3]["evidence"]["answer"] = "maybe"
        else:
            g["cells"][2]["program"] = g["cells"][3]["program"]
        assert not verify_contrast_sets([bad], graphs).ok, change


def test_shared_super_clevr_scenes_are_grouped_and_re_proven():
    if not (SHARED / "scenes").is_dir():
        pytest.skip(f"../shared's Super-CLEVR scenes are absent ({SHARED})")
    grouped, graphs = _run(SHARED / "superCLEVR_questions_5.json", SHARED / "scenes", groups=True)
    report = verify_contrast_sets(grouped.records, graphs)
    assert report.ok, report.failures[:5]
    assert report.groups == grouped.stats["groups"]["grouped"] >= 30
