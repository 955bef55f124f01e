"""The captioning's shortcuts held to the slow paths they stand for: the relation kinds' tries
stopped after the last edge a candidate may come of, each relation's sayability and the
attributes said of a noun remembered. A shortcut that stopped one edge early or kept one noun's
answer for another fails here."""

from __future__ import annotations

import random
from collections import Counter

import orjson
import pytest

from contrastgen.captions import candidates as candidates_module
from contrastgen.captions.candidates import KINDS, ImageCandidates
from contrastgen.captions.domain import load_domain
from contrastgen.captions.generate import noun_pool
from contrastgen.captions.plausibility import Plausibility
from contrastgen.captions.vocabulary import sayable_relation
from contrastgen.datasets.clevr import load_scenes
from contrastgen.resources import clevr_sample_dir, sample_dir

SEEDS = range(6)


def _sample(family: str = "gqa"):
    """(the domain, its bundled sample's graphs by image id, the noun pool) of one family."""
    domain = load_domain(family)
    if family == "gqa":
        graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    else:
        graphs = dict(load_scenes(clevr_sample_dir() / "scenes"))
    plausibility = Plausibility.of_graphs(graphs.values(), domain.graph_kind)
    return domain, graphs, noun_pool(plausibility, domain)


@pytest.mark.parametrize("family", ["gqa", "clevr"])
def test_the_relation_kinds_stopped_after_their_last_hopeful_edge_draw_what_the_full_tries_draw(monkeypatch, family):
    """replace_rel and swap_obj stop trying after the last edge a candidate may come of; read to the
    end, each kind gives the same candidates, in the same order, as when every edge is tried."""
    domain, graphs, pool = _sample(family)

    def every_edge(self, rng, relations, chance=0.5, hopeful=None):
        return full(self, rng, relations, chance)

    full = ImageCandidates._relation_positive
    stopped: Counter[str] = Counter()

    def drawn() -> dict[tuple[str, int, str], list]:
        out = {}
        for image_id, graph in graphs.items():
            for seed in SEEDS:
                image = ImageCandidates(domain.world(image_id, graph), domain, pool, random.Random(f"{seed}:{image_id}"))
                for kind in ("replace_rel", "swap_obj"):
                    out[image_id, seed, kind] = [(c.positive, c.negative, c.change, c.proof, c.positive_facts)
                                                 for c in image.drawn(kind)]
        return out

    with monkeypatch.context() as m:
        m.setattr(candidates_module.ImageCandidates, "_phrase", _counting_phrase(stopped, "shortcut"))
        shortcut = drawn()
    with monkeypatch.context() as m:
        m.setattr(candidates_module.ImageCandidates, "_relation_positive", every_edge)
        m.setattr(candidates_module.ImageCandidates, "_phrase", _counting_phrase(stopped, "every edge"))
        slow = drawn()
    assert shortcut == slow
    for kind in ("replace_rel", "swap_obj"):
        assert sum(len(v) for (_, _, k), v in shortcut.items() if k == kind) > 5, kind
    assert stopped["shortcut"] < stopped["every edge"]  # some tries were skipped, and nothing changed


def _counting_phrase(counts: Counter, label: str):
    phrase = ImageCandidates._phrase

    def counting(self, *args, **kwargs):
        counts[label] += 1
        return phrase(self, *args, **kwargs)

    return counting


def test_every_kind_reads_the_same_whichever_kind_fills_the_images_memories_first():
    """The kinds share an image's memories (fittings, edges between objects, absences): reading
    replace_rel and swap_obj first or last leaves every kind's candidates as they are."""
    domain, graphs, pool = _sample()
    for image_id, graph in list(graphs.items())[:25]:
        orders = (KINDS, tuple(reversed(KINDS)))
        found = []
        for order in orders:
            image = ImageCandidates(domain.world(image_id, graph), domain, pool, random.Random(f"0:{image_id}"))
            found.append({k: [(c.positive, c.negative) for c in image.drawn(k)] for k in order})
        assert found[0] == found[1], image_id


def test_a_remembered_relations_sayability_is_the_plain_answer():
    domain, graphs, _ = _sample()
    names = domain.world("x", next(iter(graphs.values())))._names
    relations = ["to the left of", "near", "and", "", "on top of the big red", "on-top", "Near", "in front of"]
    for _ in range(2):  # worked out, then remembered
        for r in relations:
            assert names.sayable_relation(r) == sayable_relation(r), r
    assert {names.sayable_relation(r) for r in relations} == {True, False}


def test_the_attributes_remembered_per_noun_and_attribute_are_the_plain_answers_for_every_list():
    """The answers are kept per noun and attribute, so lists that share an attribute, in any
    order, with provable asked or not, must each get the plain answer of their own."""
    domain, graphs, _ = _sample()
    lex, vocab = domain.lex, domain.vocab
    names = domain.world("x", next(iter(graphs.values())))._names
    nouns = sorted({t.noun for g in graphs.values() for t in domain.world("x", g).things} | {"window", "woman"})
    attributes = ["glass", "brown", "young", "white", "wooden", "open", "closed", "red"]
    lists = [tuple(attributes[i:i + n]) for n in (1, 2, 3) for i in range(len(attributes) - n + 1)]
    lists += [tuple(reversed(x)) for x in lists]
    differ = set()
    for _ in range(2):  # worked out, then remembered
        for noun in nouns:
            for attrs in lists:
                for provable in (False, True):
                    plain = tuple(a for a in attrs if (not provable or vocab.provable(a)) and domain.says_of(noun, a))
                    assert domain.attributes_of(noun, attrs, provable) == plain, (noun, attrs, provable)
                    differ.add(len(plain) < len(attrs))
                words = tuple((a, f"{a} {noun}") for a in attrs if not lex.is_known(f"{a} {noun}"))
                assert names.not_compound(noun, attrs) == words, (noun, attrs)
    assert differ == {True, False}
    assert names.not_compound("window", ("glass", "open")) == (("open", "open window"),)


@pytest.mark.parametrize("family", ["gqa", "clevr"])
def test_a_things_own_noun_lists_it_so_a_skipped_edge_could_have_no_proven_swap(family):
    """`_swappable` skips an edge whose nouns cannot both be listed. A swap over it could be proven
    false only by a phrase that denotes nothing (`proofs._empty_phrase`), and a positive's phrase
    is said of its own object: so where a thing's noun can be listed, the thing is among what it
    may be, in both families' worlds."""
    domain, graphs, pool = _sample(family)
    checked = 0
    for image_id, graph in graphs.items():
        world = domain.world(image_id, graph)
        image = ImageCandidates(world, domain, pool, random.Random(0))
        for thing in image.things.values():
            listed = world.may_be(thing.noun)
            if listed is not None:
                assert thing.id in listed, (image_id, thing.id, thing.noun)
                checked += 1
    assert checked > 20
