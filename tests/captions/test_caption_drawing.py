"""How candidates are drawn and chosen: each kind from a generator of its own, read by the
balancing only as far as it needs."""

from __future__ import annotations

import random
from collections import Counter

import orjson

from contrastgen.captions.balance import TOLERANCE, Balancer, Scored
from contrastgen.captions.candidates import ADD_FORMS, KINDS, ImageCandidates
from contrastgen.captions.domain import load_domain
from contrastgen.captions.generate import noun_pool
from contrastgen.captions.plausibility import Plausibility
from contrastgen.resources import sample_dir


def _sample():
    domain = load_domain("gqa")
    graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    plausibility = Plausibility.of_graphs(graphs.values(), domain.graph_kind)
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


def _with_vague_objects(graphs):
    """The sample's graphs, and each again with its first object named by a word that says
    nothing certain ("object", which may be anything), once with its attributes and once with
    none: the images where `possible` may say no."""
    out = dict(graphs)
    for image_id, graph in graphs.items():
        first = next(iter(graph["objects"]))
        for suffix, keep in (("object", True), ("bare", False)):
            objects = dict(graph["objects"])
            o = objects[first]
            objects[first] = {**o, "name": "object", "attributes": o.get("attributes", []) if keep else []}
            out[f"{image_id}-{suffix}"] = {**graph, "objects": objects}
    return out


def test_a_kind_skipped_as_impossible_in_an_image_has_no_candidate_there_whatever_is_drawn():
    """`possible` lets a kind skip its tries in an image; it may say no only where no draw of the
    kind's generator could make a candidate, or the skip would drop real pairs. Each kind's
    generator is run unguarded under several seeds, in both add forms."""
    domain, graphs, pool = _sample()
    skipped, found = Counter(), Counter()
    for add_form in ADD_FORMS:
        for image_id, graph in _with_vague_objects(graphs).items():
            world = domain.world(image_id, graph)
            image = ImageCandidates(world, domain, pool, random.Random(f"0:{image_id}"), add_form=add_form)
            for kind in KINDS:
                if image.possible(kind):
                    found[kind, bool(world.may_be_anything())] += next(image.drawn(kind), None) is not None
                    continue
                skipped[kind] += 1
                for seed in range(6):
                    assert next(getattr(image, "_" + kind)(random.Random(seed)), None) is None, (image_id, kind, seed)
                assert list(image.drawn(kind)) == []
    # every kind `possible` may refuse is refused somewhere, and found somewhere beside a vague object
    assert set(skipped) == {"replace_obj", "add_obj", "replace_rel", "swap_obj", "swap_att"}
    assert all(found[kind, True] for kind in ("replace_rel", "swap_obj", "swap_att")), found


def test_what_a_noun_may_be_is_every_object_it_may_denote_in_the_graphs_order():
    """`may_be` answers a noun of no object in the image from the image's kinds at once: the
    answer is still the plain listing (the vague objects alone, or none), for every noun a
    caption or a negative may say, in graphs with and without vague objects."""
    domain, graphs, pool = _sample()
    nouns = sorted(set(pool.nouns) | {t.noun for g in graphs for t in domain.world(g, graphs[g]).things}
                   | {"person", "animal", "thing", "crowd"})
    told_apart = 0
    for image_id, graph in _with_vague_objects(graphs).items():
        world = domain.world(image_id, graph)
        for noun in nouns:
            lex = domain.lex
            if not lex.absence_decidable(noun) or lex.is_unannotated_prone(noun):
                assert world.may_be(noun) is None
                continue
            kinds = domain.may_kinds(noun)
            plain = tuple(oid for oid, o in graph["objects"].items()
                          if oid in world.may_be_anything()
                          or not kinds.isdisjoint(lex.readings(world.names[oid])))
            assert world.may_be(noun) == plain, (image_id, noun)
            told_apart += bool(plain) and set(plain) <= world.may_be_anything()
    assert told_apart > 10  # nouns of no object, answered by the vague objects alone
