"""The two forms of the add kinds. Matched (balanced output's default): the caption is the base
plus a true addition, the negative the same base plus a false one, so the two say the same class
of word in the same place and a text-only model cannot pick the caption by its length.
SugarCrepe's (`--unbalanced`, or `--add-form sugarcrepe`): the caption is the base itself."""

from __future__ import annotations

import json
import random

import orjson
import pytest
from caption_cli import generate, run

from contrastgen.captions.candidates import ADD_KINDS, KINDS, ImageCandidates
from contrastgen.captions.domain import load_domain
from contrastgen.captions.generate import noun_pool
from contrastgen.captions.plausibility import Plausibility
from contrastgen.jsonio import read_jsonl
from contrastgen.resources import sample_dir


def add_pairs(out) -> list[tuple[dict, dict]]:
    return [(r, n) for r in read_jsonl(out / "captions.jsonl") for n in r["negatives"] if n["kind"] in ADD_KINDS]


def test_balanced_add_pairs_are_base_plus_a_true_or_a_false_addition(gqa_captions):
    pairs = add_pairs(gqa_captions)
    assert {n["kind"] for _, n in pairs} == set(ADD_KINDS)
    for r, n in pairs:
        pos, neg = r["evidence"]["reading"], n["evidence"]["reading"]
        assert pos["shape"] == neg["shape"] and len(pos["phrases"]) == len(neg["phrases"]) == 2
        changed = [i for i, (a, b) in enumerate(zip(pos["phrases"], neg["phrases"], strict=True)) if a != b]
        assert len(changed) == 1, (r["caption"], n["caption"])
        p, q = pos["phrases"][changed[0]], neg["phrases"][changed[0]]
        if n["kind"] == "add_obj":
            assert pos["shape"] == "pair" and changed == [1] and p["attribute"] == q["attribute"] == ""
            assert (n["change"]["true"], n["change"]["to"]) == (p["noun"], q["noun"])
            # the same words up to the added phrase: the base, then "and"
            assert r["caption"].rsplit(" and ", 1)[0] == n["caption"].rsplit(" and ", 1)[0]
        else:
            assert p["noun"] == q["noun"] and p["attribute"] and q["attribute"]
            assert (n["change"]["true"], n["change"]["to"]) == (p["attribute"], q["attribute"])
            assert len(r["caption"].split()) == len(n["caption"].split())
    # the caption's evidence states the added object it is true of
    r, n = next((r, n) for r, n in pairs if n["kind"] == "add_obj")
    added = r["evidence"]["reading"]["phrases"][1]["noun"]
    assert sum(f["fact"] == "object" for f in r["evidence"]["facts"]) == 2 and added in r["caption"]
    assert json.loads((gqa_captions / "stats.json").read_text())["add_form"] == "matched"


@pytest.mark.parametrize("extra", [("--unbalanced",), ("--add-form", "sugarcrepe")])
def test_sugarcrepe_form_keeps_the_base_as_the_caption_and_verifies(tmp_path, extra):
    graphs = sample_dir() / "scene_graphs.json"
    out = generate(graphs, tmp_path / "out", "--kinds", "add_obj,add_att", *extra)
    pairs = add_pairs(out)
    stats = json.loads((out / "stats.json").read_text())
    if "--unbalanced" in extra:
        assert {n["kind"] for _, n in pairs} == set(ADD_KINDS)
    else:
        # balanced, the blind check refuses a kind a text-only model picks by its length
        # (SugarCrepe's add_obj: the caption is the one without "and"), and says so
        refused = stats["blind_check"]["refused"]
        assert any(m.startswith("add_obj: refused for this input") for m in refused)
        assert {n["kind"] for _, n in pairs} == {k for k in ADD_KINDS if not any(m.startswith(k + ":") for m in refused)}
    for r, n in pairs:
        pos, neg = r["evidence"]["reading"], n["evidence"]["reading"]
        assert "true" not in n["change"]
        if n["kind"] == "add_obj":
            assert pos["shape"] == "object" and n["caption"].startswith(r["caption"] + " and ")
        else:
            i = n["change"]["phrase"]
            assert pos["phrases"][i]["attribute"] == "" and neg["phrases"][i]["attribute"] == n["change"]["to"]
            assert len(n["caption"].split()) == len(r["caption"].split()) + 1
    assert stats["add_form"] == "sugarcrepe"
    result = run("verify", out, "--scene-graphs", graphs)
    assert result.exit_code == 0, result.output


def test_the_add_form_leaves_every_other_kinds_candidates_as_they_are():
    """So the benchmark's unbalanced and balanced columns compare the same candidates of every
    other kind, whatever form the add kinds take."""
    domain = load_domain("gqa")
    graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    plausibility = Plausibility.of_graphs(graphs.values(), domain.graph_kind)
    pool = noun_pool(plausibility, domain)

    def candidates(image_id: str, form: str) -> dict[str, list]:
        image = ImageCandidates(domain.world(image_id, graphs[image_id]), domain, pool,
                                random.Random(f"0:{image_id}"), add_form=form)
        return {k: [(c.positive, c.negative) for c in image.of_kind(k, 3)] for k in KINDS}

    compared = 0
    for image_id in list(graphs)[:20]:
        matched, sugarcrepe = candidates(image_id, "matched"), candidates(image_id, "sugarcrepe")
        for kind in KINDS:
            if kind not in ADD_KINDS:
                assert matched[kind] == sugarcrepe[kind], (image_id, kind)
                compared += len(matched[kind])
        assert matched["add_obj"] != sugarcrepe["add_obj"] or not matched["add_obj"]
    assert compared
