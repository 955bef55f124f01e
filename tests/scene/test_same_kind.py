"""`same_kind` compares per-word keys (`ground._kind_key`) decided once per word; it must say
what comparing the two words through the lexicon says, on each of its grounds."""

from __future__ import annotations

import itertools

import pytest

from contrastgen.language.lexicon import Lexicon
from contrastgen.scene.ground import same_kind, squashed


@pytest.fixture(scope="module")
def lex() -> Lexicon:
    return Lexicon.load()


def _through_the_lexicon(a: str, b: str, lex: Lexicon) -> bool:
    if not a or not b:
        return False
    if a == b or lex.singular(a) == lex.singular(b) or lex.canonical(a) == lex.canonical(b):
        return True
    if squashed(lex.singular(a)) == squashed(lex.singular(b)):
        return True
    return lex.is_a(a, b) or lex.is_a(b, a)


# each ground of `same_kind`: one singular (men / man), one kind (motorbike / motorcycle), one
# word spaced two ways (t-shirt / tshirt), a kind of another (dog / animal), words the
# lexicon does not know, and the empty name
WORDS = ["man", "men", "person", "people", "motorbike", "motorcycles", "t-shirt", "tshirt", "t shirt", "shirt",
         "poodle", "dog", "dogs", "animal", "cat", "vehicle", "car", "bus", "glasses", "glass", "eye glasses",
         "eyeglasses", "trash can", "trashcan", "clothing", "jeans", "zorblat", "Zorblats", "", "furniture", "chair"]


def test_same_kind_says_what_the_lexicon_says_on_every_ground(lex):
    pairs = list(itertools.product(WORDS, repeat=2))
    said = {(a, b): same_kind(a, b, lex) for a, b in pairs}
    assert said == {(a, b): _through_the_lexicon(a, b, lex) for a, b in pairs}
    # every ground is exercised: one singular, one kind, one spacing, one a kind of the other
    assert said["men", "man"] and said["motorbike", "motorcycles"] and said["t-shirt", "tshirt"]
    assert said["dog", "animal"] and said["animal", "dog"] and said["chair", "furniture"] and not said["dog", "cat"]
    assert not said["zorblat", ""] and said["zorblat", "Zorblats"] == _through_the_lexicon("zorblat", "Zorblats", lex)


def test_same_kind_on_the_vocabulary_says_what_the_lexicon_says(lex):
    words = sorted(lex._entries)[::37]
    kinds = sorted({k for w in words for k in lex.kinds(w)})[:60]
    names = words + kinds
    pairs = [(a, b) for a in names for b in names[::3]]
    assert any(_through_the_lexicon(a, b, lex) and a != b for a, b in pairs)
    assert [same_kind(a, b, lex) for a, b in pairs] == [_through_the_lexicon(a, b, lex) for a, b in pairs]


def test_denoted_ids_walk_either_side_and_find_the_objects_of_the_words_kinds(lex):
    """`denoted_ids` walks the smaller of the word's kinds and the scene's kinds; both walks must
    give every object whose kind is the word's or a kind of it, in id order ("animal" has more
    kinds than this scene, "dog" fewer)."""
    from contrastgen.scene.ground import denoted_ids
    from contrastgen.scene.index import SceneIndex

    names = ["dog", "cat", "puppy", "car", "man", "woman", "horse", "table", "dogs", "motorbike"]
    graph = {"width": 100, "height": 100, "objects": {
        f"o{i}": {"name": n, "x": i, "y": i, "w": 5, "h": 5, "attributes": [], "relations": []}
        for i, n in enumerate(names)}}
    scene = SceneIndex.build("img", graph, lex)
    asked = ["animal", "dog", "person", "vehicle", "thing", "furniture", "car", "giraffe"]
    assert any(len(lex.names_of_kinds(w)[0]) > len(scene.by_canonical) for w in asked)
    assert any(len(lex.names_of_kinds(w)[0]) <= len(scene.by_canonical) for w in asked)
    for word in asked:
        kinds = lex.names_of_kinds(word)[0]
        expected = sorted(oid for oid, o in graph["objects"].items() if lex.canonical(o["name"]) in kinds)
        assert denoted_ids(word, scene, lex) == expected, word
    assert denoted_ids("animal", scene, lex)  # the scene's animals are found through the many-kinds walk
