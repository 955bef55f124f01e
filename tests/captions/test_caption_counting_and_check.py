"""The corpus counts and the blind check as a run computes them for speed, held to the plain
computations they stand for: pairs of kinds counted from each kind's images (bits), batches fitted
in any order, and the naive Bayes margins taken from each pair's features once, with the kinds
judged by several processes."""

from __future__ import annotations

import itertools
import math
import random

import orjson
import pytest

from contrastgen.captions import blind
from contrastgen.captions import plausibility as plausibility_module
from contrastgen.captions.caption import Caption, Phrase
from contrastgen.captions.domain import load_domain
from contrastgen.captions.plausibility import SMOOTHING, CorpusCounts, Plausibility, count_graph
from contrastgen.resources import sample_dir


def _sample_graphs() -> dict:
    return orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())


def _kinds(graph, kind_of) -> set[str]:
    return {kind_of(str(o["name"]).strip().lower()) for o in graph["objects"].values()}


@pytest.mark.parametrize("dense", [0, 4, 10**9])  # no kind's images as bits, some, all
@pytest.mark.parametrize("as_bits", [1, 10**9])  # no rare kind counted as bits when asked, every one
def test_pairs_of_kinds_are_the_images_that_have_both_whatever_the_batches_and_their_order(monkeypatch, dense, as_bits):
    monkeypatch.setattr(plausibility_module, "DENSE", dense)
    monkeypatch.setattr(plausibility_module, "AS_BITS", as_bits)
    domain = load_domain("gqa")
    graphs = list(_sample_graphs().values())
    kinds_of = [_kinds(g, domain.graph_kind) for g in graphs]
    batches = []
    for start in range(0, len(graphs), 7):  # batches of 7, fitted out of order
        part = CorpusCounts()
        for g in graphs[start:start + 7]:
            part.add(g, domain.graph_kind)
        batches.append(part)
    random.Random(3).shuffle(batches)
    shuffled, whole = Plausibility.fit(batches), Plausibility.of_graphs(graphs, domain.graph_kind)
    assert shuffled.counts == whole.counts and shuffled.counts[("images",)] == len(graphs)
    every = sorted(set().union(*kinds_of))
    asked = 0
    for a, b in itertools.combinations(every, 2):
        both = sum(1 for k in kinds_of if a in k and b in k)
        assert shuffled.together(a, b) == whole.together(a, b) == both, (a, b)
        asked += both > 0
    assert asked > 50
    held = {type(v) for v in whole.present.values()}
    assert held == {0: {frozenset}, 4: {int, frozenset}}.get(dense, {int})
    rare = {k for k, v in whole.present.items() if isinstance(v, frozenset)}
    assert set(whole._rare_bits) == (rare if as_bits > 1 else set())


def test_a_pair_caption_is_scored_without_its_own_images_pair():
    """The pair link of "a X and a Y" counts the other images with both kinds (and with each):
    leaving the image out takes exactly one off each where it has both."""
    domain = load_domain("gqa")
    graphs = _sample_graphs()
    plausibility = Plausibility.of_graphs(graphs.values(), domain.graph_kind)
    image_id, graph = next((i, g) for i, g in graphs.items() if len(_kinds(g, domain.graph_kind)) >= 2)
    a, b = sorted(_kinds(graph, domain.graph_kind))[:2]
    others = [g for i, g in graphs.items() if i != image_id]
    both = sum(1 for g in others if {a, b} <= _kinds(g, domain.graph_kind))
    with_a = sum(1 for g in others if a in _kinds(g, domain.graph_kind))
    with_b = sum(1 for g in others if b in _kinds(g, domain.graph_kind))
    assert plausibility.together(a, b) == both + 1
    score = plausibility.scorer(count_graph(graph, domain.graph_kind), domain.kind_of)
    # a pair of bare nouns is the mean of three links: each noun's, and the pair's
    link = 3 * score(Caption("pair", (Phrase(a), Phrase(b)))) - score(Caption("object", (Phrase(a),))) \
        - score(Caption("object", (Phrase(b),)))
    size = max(1, plausibility.totals["vocab", "n"])

    def logp(hits: int, of: int) -> float:
        return math.log((hits + SMOOTHING) / (of + SMOOTHING * size))

    assert link == pytest.approx((logp(both, with_a) + logp(both, with_b)) / 2, abs=1e-9)


def _pairs(n: int, seed: int) -> list[blind.BlindPair]:
    rng = random.Random(seed)
    nouns, colours = ["dog", "cat", "car", "bus", "cup"], ["red", "blue", "green", "white"]
    out = []
    for i in range(n):
        noun = rng.choice(nouns)
        a, b = rng.sample(colours[:3] if i % 3 else colours, 2)  # "white" only on some pairs
        out.append(blind.BlindPair("replace_att", f"img{i // 2}", i, f"n{i}", f"a {a} {noun}", f"a {b} {noun}",
                                   -rng.random(), -rng.random(), "empty_phrase"))
    return out


def test_the_margins_from_features_read_once_are_the_plain_models_margins():
    pairs = _pairs(300, 1)
    halves = [blind.half_of(p.image_id) for p in pairs]
    models = [blind.WordBayes(p for p, h in zip(pairs, halves, strict=True) if h != side) for side in (0, 1)]
    plain = [round(models[h].margin(p), 9) for p, h in zip(pairs, halves, strict=True)]
    assert blind.bayes_margins(pairs) == plain
    assert len(set(plain)) > 10


def test_the_kinds_judged_by_two_processes_get_the_verdicts_of_one():
    thinned = [p._replace(kind="replace_obj", positive_plausibility=-1.0 if i % 10 < 7 else -3.0,
                          negative_plausibility=-2.0) for i, p in enumerate(_pairs(400, 2))]
    pairs = _pairs(400, 3) + thinned
    one = blind.check(pairs, ("replace_obj", "replace_att", "swap_obj"))
    two = blind.check(pairs, ("replace_obj", "replace_att", "swap_obj"), workers=2)
    assert list(one) == list(two) == ["replace_obj", "replace_att"]
    for kind in one:
        assert one[kind].as_dict() == two[kind].as_dict()
        assert one[kind].left_out == two[kind].left_out
    assert one["replace_obj"].left_out  # the 70% kind is thinned, so the comparison covers a thinning
