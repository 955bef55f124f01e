"""How candidates are drawn and chosen: each kind from a generator of its own, read by the
balancing only as far as it needs."""

from __future__ import annotations

import random

import orjson

from contrastgen.captions.balance import TOLERANCE, Balancer, Scored
from contrastgen.captions.candidates import KINDS, ImageCandidates
from contrastgen.captions.domain import load_domain
from contrastgen.captions.generate import noun_pool
from contrastgen.captions.plausibility import Plausibility, count_graph
from contrastgen.resources import sample_dir


def _sample():
    domain = load_domain("gqa")
    graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    plausibility = Plausibility.fit(count_graph(g, domain.graph_kind) for g in graphs.values())
    return domain, graphs, noun_pool(plausibility, domain)


def _image(domain, graphs, pool, image_id: str) -> ImageCandidates:
    return ImageCandidates(domain.world(image_id, graphs[image_id]), domain, pool, random.Random(f"0:{image_id}"))


def test_how_far_one_kind_is_read_leaves_every_other_kinds_draws_as_they_are():
    """Balanced output reads a kind's candidates only until one keeps the kind even; unbalanced
    output reads three. The other kinds must see the same draws either way."""
    domain, graphs, pool = _sample()
    compared = 0
    for image_id in list(graphs)[:20]:
        alone = {k: [(c.positive, c.negative) for c in _image(domain, graphs, pool, image_id).of_kind(k, 3)]
                 for k in KINDS}
        image = _image(domain, graphs, pool, image_id)
        for k in KINDS:  # every kind read to the end before the next is asked
            drawn = [(c.positive, c.negative) for c in image.drawn(k)]
            assert drawn[:3] == alone[k], (image_id, k)
            compared += len(alone[k])
    assert compared


def _scored(positive: str, negative: str, p: float, n: float) -> Scored:
    return Scored(None, positive, negative, p, n)  # type: ignore[arg-type]


def test_the_balancing_takes_the_first_candidate_that_keeps_the_kind_even_and_reads_no_further():
    balancer = Balancer(balanced=True, per_image=1)
    read = []

    def candidates():
        for s in (_scored("a red car", "a blue car", -1.0, -2.0), _scored("a red car", "a green car", -2.0, -1.0)):
            read.append(s)
            yield s

    chosen = balancer.choose("replace_att", candidates(), random.Random(0), 3)
    assert [s.negative_text for s in chosen] == ["a blue car"] and len(read) == 1


def test_the_balancing_reads_on_where_the_first_would_unbalance_the_kind():
    balancer = Balancer(balanced=True, per_image=1)
    rng = random.Random(0)
    # "red" on the positive side past the tolerance: a pair saying "red" again would widen it
    for _ in range(TOLERANCE):
        balancer.choose("replace_att", iter([_scored("a red car", "a blue car", -1.0, -1.0)]), rng, 3)
    chosen = balancer.choose("replace_att", iter([_scored("a red bus", "a blue bus", -1.0, -1.0),
                                                  _scored("a blue bus", "a red bus", -1.0, -1.0)]), rng, 3)
    assert [s.positive_text for s in chosen] == ["a blue bus"]
    # the scorer's tally: one pair off even already, so a second pair it gets right is not taken first
    balancer = Balancer(balanced=True, per_image=1)
    balancer.choose("replace_obj", iter([_scored("a dog", "a cat", -1.0, -2.0)]), rng, 3)
    chosen = balancer.choose("replace_obj", iter([_scored("a cow", "a bus", -1.0, -2.0),
                                                  _scored("a cup", "a hat", -2.0, -1.0)]), rng, 3)
    assert [s.positive_text for s in chosen] == ["a cup"]


def test_a_name_that_takes_no_article_is_never_a_captions_noun():
    domain = load_domain("gqa")
    graph = {"width": 100, "height": 100, "objects": {
        "1": {"name": "someone", "x": 0, "y": 0, "w": 10, "h": 10, "attributes": ["black"], "relations": []},
        "2": {"name": "car", "x": 20, "y": 20, "w": 10, "h": 10, "attributes": ["red"],
              "relations": [{"name": "to the right of", "object": "1"}]}}}
    world = domain.world("x", graph)
    assert [t.noun for t in world.things] == ["car"]
    # the object is still one a noun may denote: "person" may be it
    assert "1" in (world.may_be("person") or ())
