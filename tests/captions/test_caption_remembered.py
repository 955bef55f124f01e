"""What captioning remembers per process or per image for speed, held to the plain computations it
stands for: the lexicon's answers about relations and attributes (per process), the attributes said
before a noun (the lexicon's compounds per process, the image's own object names per image), an
image's edges (each once, in the graph's order) and each caption's words and plausibility (once
per image). A cache that kept an answer of one image for another, or of one noun for another,
fails here."""

from __future__ import annotations

import random

import orjson

from contrastgen.captions.candidates import KINDS, ImageCandidates
from contrastgen.captions.caption import caption_text
from contrastgen.captions.domain import GqaDomain, load_domain
from contrastgen.captions.generate import _scoring, noun_pool
from contrastgen.captions.plausibility import Plausibility, count_graph
from contrastgen.resources import sample_dir


def _sample():
    domain = load_domain("gqa")
    graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    return domain, graphs


def _object(name: str, attributes: list[str], relations: list[tuple[str, str]] = (), x: float = 0.0) -> dict:
    return {"name": name, "x": x, "y": 0, "w": 10, "h": 10, "attributes": attributes,
            "relations": [{"name": r, "object": o} for r, o in relations]}


def test_the_remembered_answers_about_relations_and_attributes_are_the_lexicons_plain_answers():
    domain, graphs = _sample()
    assert isinstance(domain, GqaDomain)
    lex, vocab = domain.lex, domain.vocab
    worlds = [domain.world(i, g) for i, g in graphs.items()]
    relations = sorted(set(lex.relations) | {r for w in worlds for _, r, _ in w.edges} | {"near", "on top of"})
    plain_replaceable = tuple(sorted(r for r in lex.relations if lex.opposite_relation(r)))
    for _ in range(2):  # the first answer is worked out, the second remembered: both the plain one
        assert domain.replace_relations == plain_replaceable and len(plain_replaceable) > 3
        for world in worlds[:3]:
            for r in relations:
                opposite = lex.opposite_relation(r)
                assert domain.opposite(r) == opposite, r
                assert world._names.relation_rules(r) == (opposite, opposite is not None or r in vocab.asymmetric), r
    assert any(domain.opposite(r) is None for r in relations) and any(domain.opposite(r) for r in relations)
    nouns = sorted({t.noun for w in worlds for t in w.things} | {"woman", "man", "shoe", "hair"})
    attributes = sorted(set(vocab.basic_colors) | set(vocab.opposites) | {a for w in worlds for t in w.things
                                                                         for a in t.attributes})
    differ = 0
    for _ in range(2):
        for noun in nouns:
            for attribute in attributes:
                said = not (lex.is_person(noun) and vocab.attribute_type(attribute) == "color")
                assert domain.says_of(noun, attribute) == said, (noun, attribute)
                plain = tuple(a for a in domain.alternatives(attribute) if domain.allows(noun, a))
                assert domain.allowed_alternatives(noun, attribute) == plain, (noun, attribute)
                differ += plain != domain.alternatives(attribute)
    assert differ  # some alternatives are not said of some nouns ("a brown woman")
    assert not domain.says_of("woman", "brown") and domain.says_of("woman", "young") and domain.says_of("car", "brown")


def test_the_attributes_said_before_a_noun_leave_out_the_lexicons_compounds_and_the_images_own_names():
    """"wooden" may be said of a table, but not in an image that has an object named "wooden
    table" (a reader takes the longer noun there); "glass" is never said of a window."""
    domain = load_domain("gqa")
    with_name = {"width": 100, "height": 100, "objects": {
        "1": _object("table", ["wooden", "brown"]), "2": _object("wooden table", []),
        "3": _object("window", ["glass", "open"])}}
    without = {"width": 100, "height": 100, "objects": {
        "1": _object("table", ["wooden", "brown"]), "3": _object("window", ["glass", "open"])}}
    for _ in range(2):  # either image first, the other's answer remembered
        for image_id, graph in (("with", with_name), ("without", without)):
            world = domain.world(image_id, graph)
            for noun, attrs in (("table", ("brown", "wooden")), ("window", ("glass", "open"))):
                plain = [a for a in attrs if not world.compound(a, noun)]
                assert world.before(noun, attrs) == plain, (image_id, noun)
        assert domain.world("with", with_name).before("table", ("brown", "wooden")) == ["brown"]
        assert domain.world("without", without).before("table", ("brown", "wooden")) == ["brown", "wooden"]
        assert domain.world("without", without).before("window", ("glass", "open")) == ["open"]
    _, graphs = _sample()
    for image_id, graph in graphs.items():
        world = domain.world(image_id, graph)
        for t in world.things:
            assert world.before(t.noun, t.attributes) == [a for a in t.attributes if not world.compound(a, t.noun)]


def test_an_images_edges_are_each_edge_once_in_the_graphs_order():
    domain = load_domain("gqa")
    graph = {"width": 100, "height": 100, "objects": {
        "1": _object("dog", ["black"], [("to the left of", "2"), ("near", "2"), ("to the left of", "2")]),
        "2": _object("car", ["red"], [("to the right of", "1"), ("To  the left of", "3")], x=20),
        "3": _object("tree", [], [("near", "1")], x=40)}}
    world = domain.world("i", graph)
    assert world.edges == [("1", "to the left of", "2"), ("1", "near", "2"), ("2", "to the right of", "1"),
                           ("2", "to the left of", "3"), ("3", "near", "1")]
    assert world.holds("1", "to the left of", "2") and not world.holds("2", "to the left of", "1")
    fact = world.relation_false("2", "to the left of", "1")  # its converse and its opposite are listed
    assert fact is not None and fact["because"] == {"subject": "2", "name": "to the right of", "object": "1"}
    assert world.relation_false("1", "near", "3") is None  # "near" may hold both ways
    image = ImageCandidates(world, domain, noun_pool(Plausibility.of_graphs([graph], domain.graph_kind), domain),
                            random.Random(0))
    replaceable = set(domain.replace_relations)
    for _ in range(2):  # listed, then remembered
        assert image._edges_of("any") == world.edges
        assert image._edges_of("replaceable") == [e for e in world.edges if e[1] in replaceable]
        assert image._edges_of("antisymmetric") == [e for e in world.edges if domain.antisymmetric(e[1])]
    assert image._edges_of("antisymmetric") != world.edges


def test_each_candidates_words_and_plausibility_are_the_plain_ones():
    """Every candidate of every kind as the balancing reads it, its two captions' words and
    plausibility taken once per image, equals the plain computation with a fresh scorer."""
    domain, graphs = _sample()
    plausibility = Plausibility.of_graphs(graphs.values(), domain.graph_kind)
    pool = noun_pool(plausibility, domain)
    checked = repeated = 0
    for image_id, graph in graphs.items():
        def scorer(graph=graph):
            return plausibility.scorer(count_graph(graph, domain.graph_kind), domain.kind_of)

        scoring = _scoring(scorer(), domain.lex)
        image = ImageCandidates(domain.world(image_id, graph), domain, pool, random.Random(f"0:{image_id}"))
        seen = set()
        for kind in KINDS:
            for c in image.of_kind(kind, 3):
                s = scoring(c)
                plain = scorer()
                assert s.candidate is c
                assert (s.positive_text, s.negative_text) == (caption_text(c.positive, domain.lex),
                                                              caption_text(c.negative, domain.lex))
                assert (s.positive_plausibility, s.negative_plausibility) == (plain(c.positive), plain(c.negative))
                repeated += c.positive in seen
                seen.add(c.positive)
                checked += 1
    assert checked > 100 and repeated > 10
