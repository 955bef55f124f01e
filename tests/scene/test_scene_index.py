"""The scene index's edges: the set (all a program run on a group's candidate asks) and the lists
by subject and object (what edits and templates walk) are built apart, and must agree whichever
is asked first."""

from __future__ import annotations

import pytest

from contrastgen.language.lexicon import Lexicon
from contrastgen.scene import index as scene_index
from contrastgen.scene.index import SceneIndex


@pytest.fixture(scope="module")
def lex() -> Lexicon:
    return Lexicon.load()


def _graph() -> dict:
    box = {"x": 0, "y": 0, "w": 10, "h": 10}
    return {"width": 100, "height": 80, "objects": {
        "1": {"name": "Man ", **box, "attributes": ["Tall", " young"],
              "relations": [{"name": "to the left of", "object": "2"}, {"name": " On", "object": "3"},
                            {"name": "to the left of", "object": "2"}]},  # a repeated edge, as GQA has
        "2": {"name": "dog", **box, "relations": [{"name": "to the right of", "object": "1"}]},
        "3": {"name": "skateboard", **box, "relations": [{"name": "under", "object": "1"},
                                                         {"name": "near", "object": "2"}]},
    }}


def test_the_edge_set_alone_and_the_lists_agree_whichever_is_built_first(lex):
    set_first = SceneIndex.build("i", _graph(), lex)
    edges = set_first.edges
    lists_first = SceneIndex.build("i", _graph(), lex)
    out_edges, in_edges = lists_first.out_edges, lists_first.in_edges
    assert edges == lists_first.edges == {("1", "to the left of", "2"), ("1", "on", "3"), ("2", "to the right of", "1"),
                                          ("3", "under", "1"), ("3", "near", "2")}
    # the lists keep the graph's order and each edge once
    assert out_edges == set_first.out_edges == {"1": [("to the left of", "2"), ("on", "3")],
                                                "2": [("to the right of", "1")],
                                                "3": [("under", "1"), ("near", "2")]}
    assert in_edges == set_first.in_edges == {"2": [("to the left of", "1"), ("near", "3")],
                                              "3": [("on", "1")], "1": [("to the right of", "2"), ("under", "3")]}
    assert {(s, r, o) for s, pairs in out_edges.items() for r, o in pairs} == edges
    assert set_first.neighbours("1", "to the left of", symmetric=False) == set()
    assert set_first.neighbours("2", "to the left of", symmetric=False) == {"1"}


def test_words_are_cleaned_alike_and_the_memory_of_them_stays_bounded(lex, monkeypatch):
    scene = SceneIndex.build("i", _graph(), lex)
    assert scene.objects["1"].name == "man" and scene.objects["1"].attributes == {"tall", "young"}
    words = scene_index._CleanWords()
    monkeypatch.setattr(scene_index._CleanWords, "LIMIT", 2)
    assert [words[w] for w in (" A", "b ", "C", " A")] == ["a", "b", "c", "a"]
    assert len(words) <= 2


def test_a_scene_built_for_lookup_answers_as_the_whole_one_without_its_graph(lex):
    """A group's candidate scene drops the parsed graph: what programs ask of it (objects, names,
    edges, scene-level fields) and the lists by subject and object are those of the whole scene."""
    graph = {**_graph(), "location": "park", "weather": "sunny"}
    whole, lean = SceneIndex.build("i", graph, lex), SceneIndex.build_for_lookup("i", graph, lex)
    assert lean._edges is None  # read from the record when first asked: most candidates never ask
    assert lean.objects == whole.objects and lean.by_name == whole.by_name
    assert lean.by_canonical == whole.by_canonical and (lean.width, lean.height) == (whole.width, whole.height)
    assert lean.edges == whole.edges
    assert lean.graph == {"width": 100, "height": 80, "location": "park", "weather": "sunny"}
    assert "objects" not in lean.graph  # nothing keeps the parsed objects alive
    assert lean.out_edges == whole.out_edges and lean.in_edges == whole.in_edges
    assert list(lean.out_edges["1"]) == [("to the left of", "2"), ("on", "3")]  # the graph's order, once each


def test_a_lookup_scene_answers_edges_exactly_from_the_lines_of_the_subjects_asked(lex):
    """A lookup scene's edges are read from each subject's line of the record when an edge of it is
    asked: ids and relations that hold commas, digits or nothing, objects written as numbers and
    edges written twice answer as the whole scene's set does, and a subject never asked is never
    parsed."""
    from contrastgen.scene.index import RecordEdges

    box = {"x": 0, "y": 0, "w": 1, "h": 1}
    graph = {"width": 10, "objects": {
        "1,2": {"name": "cat", **box, "relations": [{"name": "on", "object": "3"}, {"name": "on", "object": "3"}]},
        "1": {"name": "mat", **box, "relations": [{"name": ",2on", "object": 3}]},
        "12": {"name": "cup", **box, "relations": [{"name": "", "object": "1"}, {"name": " Near ", "object": "3"}]},
        "3": {"name": "floor", **box}}}
    whole, lean = SceneIndex.build("i", graph, lex), SceneIndex.build_for_lookup("i", graph, lex)
    edges = lean.edges
    assert isinstance(edges, RecordEdges)
    assert ("1,2", "on", "3") in edges and ("12", "near", "3") in edges
    assert [type(line) for line in edges._of.values()] == [list, bytes, list, bytes]  # "1" and "3": never asked
    for absent in [("1", "2on", "3"), ("1,2,", "on", "3"), ("12", "on", "3"), ("1", ",2on", 3), ("1", ",2on"),
                   ("9", "on", "3"), (None, "on", "3"), "1,2on3", None]:
        assert absent not in edges
    assert ("1", ",2on", "3") in edges and ("12", "", "1") in edges
    assert edges == whole.edges and len(edges) == 4
    assert type(lean.objects["1"].x) is int and lean.objects["1"].x == whole.objects["1"].x  # a whole number stays one
    assert list(edges.in_order()) == [("1,2", "on", "3"), ("1,2", "on", "3"), ("1", ",2on", "3"), ("12", "", "1"),
                                      ("12", "near", "3")]
    assert lean.out_edges == whole.out_edges and lean.in_edges == whole.in_edges


def test_a_lookup_scene_answers_who_stands_in_a_relation_as_the_lists_do_without_making_them(lex):
    """`related` on a lookup scene reads the subjects' lines, not the adjacency lists, and a line is
    parsed only if its bytes may hold the relation: names written in capitals, with spaces, with
    letters outside ASCII (the Kelvin sign lower-cases to an ASCII "k"), with quotes and
    backslashes, an edge written twice and an edge of an object to itself answer as the whole
    scene's lists do, every relation, role and object asked."""
    box = {"x": 0, "y": 0, "w": 1, "h": 1}
    graph = {"width": 10, "objects": {
        "1": {"name": "cat", **box, "relations": [{"name": " NEAR ", "object": "2"}, {"name": "near", "object": "2"},
                                                   {"name": "near", "object": "1"}, {"name": "on", "object": 3}]},
        "2": {"name": "mat", **box, "relations": [{"name": "\u212aicking", "object": "3"}, {"name": "ne\"ar", "object": "1"}]},
        "3": {"name": "floor", **box, "relations": [{"name": "kicking", "object": "1"}, {"name": "a\\b", "object": "2"},
                                                     {"name": "near\u00e9", "object": "1"}, {"name": "Über", "object": "2"}]},
        "4": {"name": "cup", **box, "relations": [{"name": "near", "object": "3"}, {"name": "über", "object": "9"}]}}}
    whole = SceneIndex.build("i", graph, lex)
    rels = {r for _, r, _ in whole.edges} | {"NEAR", "nea", "absent"}
    for rel in sorted(rels):
        for role in ("s", "o"):
            lean = SceneIndex.build_for_lookup("i", graph, lex)
            for obj in ["1", "2", "3", "4", "9"]:
                expected = frozenset(o for r, o in (whole.in_edges if role == "s" else whole.out_edges).get(obj, ())
                                     if r == rel and o != obj)
                assert lean.related(obj, rel, role) == expected, (rel, role, obj)
            assert lean._out_edges is None and lean._in_edges is None  # the lists were never made
    assert whole.related("2", "near", "s") == {"1"} and whole.related("3", "kicking", "s") == {"2"}
    lean = SceneIndex.build_for_lookup("i", graph, lex)
    assert lean.related("1", "kicking", "s") == {"3"}
    # "1" is ASCII and names no kicking: never parsed; the others hold letters outside ASCII
    assert [type(line) for line in lean.edges._of.values()] == [bytes, list, list, list]


def test_a_graph_without_objects_reads_back_from_its_record(lex):
    graph = {"width": 10, "height": 5, "objects": {}}
    record = SceneIndex.lookup_record(graph, lex)
    assert b"\n" not in record  # no objects, no lines of relations
    lean = SceneIndex.from_lookup_record("i", record)
    assert lean.objects == {} and lean.edges == set() and (lean.width, lean.height) == (10.0, 5.0)


def test_a_scene_read_from_its_record_holds_every_edge_of_a_graph_with_awkward_ids(lex):
    graph = {"width": 10, "objects": {
        "1,2": {"name": "cat", "x": 0, "y": 0, "w": 1, "h": 1, "relations": [{"name": "on", "object": "3"}]},
        "1": {"name": "mat", "x": 0, "y": 0, "w": 1, "h": 1, "relations": [{"name": ",2 on", "object": "3"}]},
        "3": {"name": "floor", "x": 0, "y": 0, "w": 1, "h": 1}}}
    whole, lean = SceneIndex.build("i", graph, lex), SceneIndex.build_for_lookup("i", graph, lex)
    assert lean.edges == whole.edges == {("1,2", "on", "3"), ("1", ",2 on", "3")}
    assert ("1", "2 on", "3") not in lean.edges and lean.in_edges == whole.in_edges


def test_a_record_reads_back_whatever_its_words_hold_newlines_included(lex):
    """A lookup record is JSON lines, the objects then each object's relations; ids, names,
    attributes, relations and scene fields that hold newlines (JSON escapes them) must not move a
    line."""
    graph = {"width": 10, "location": "a\nb", "objects": {
        "1\n": {"name": "cat\n", "attributes": ["white\n"], "x": 0, "y": 0, "w": 1, "h": 1,
                "relations": [{"name": "on\nto", "object": "2"}]},
        "2": {"name": "mat", "x": 0, "y": 0, "w": 1, "h": 1, "relations": [{"name": "near", "object": "1\n"}]}}}
    whole = SceneIndex.build("i", graph, lex)
    record = SceneIndex.lookup_record(graph, lex)
    assert record.count(b"\n") == len(graph["objects"])
    lean = SceneIndex.from_lookup_record("i", record)
    assert lean.objects == whole.objects and lean.edges == whole.edges
    assert lean.graph["location"] == "a\nb" and lean.in_edges == whole.in_edges


def test_objects_read_from_records_share_their_attribute_sets_and_the_memory_stays_bounded(lex, monkeypatch):
    graph = {"width": 10, "objects": {
        str(i): {"name": "cup", "attributes": ["white", "small"], "x": 0, "y": 0, "w": 1, "h": 1} for i in range(3)}}
    record = SceneIndex.lookup_record(graph, lex)
    first, second = SceneIndex.from_lookup_record("a", record), SceneIndex.from_lookup_record("b", record)
    assert first.objects["0"].attributes is second.objects["2"].attributes == {"white", "small"}
    monkeypatch.setattr(scene_index._AttributeSets, "LIMIT", 1)
    monkeypatch.setattr(scene_index, "_ATTRIBUTE_SETS", scene_index._AttributeSets())
    other = {"width": 10, "objects": {"9": {"name": "cup", "attributes": ["red"], "x": 0, "y": 0, "w": 1, "h": 1}}}
    assert SceneIndex.from_lookup_record("c", SceneIndex.lookup_record(other, lex)).objects["9"].attributes == {"red"}
    assert SceneIndex.from_lookup_record("d", record).objects["1"].attributes == {"white", "small"}
    assert len(scene_index._ATTRIBUTE_SETS) <= 1


def _awkward_graph(seed: int) -> dict:
    """Relations drawn at random: edges written twice, to itself, ids not strings, objects
    without relations or with an empty list, names that clean alike ("On", " on")."""
    import random
    rng = random.Random(seed)
    ids = ["a", "b", "7", "c", "d"]
    objects = {}
    for oid in ids:
        o = {"name": rng.choice(["Man", "dog ", "cup"]), "x": rng.randint(0, 90), "y": 1, "w": 5.5, "h": 2,
             "attributes": rng.sample(["Red", "tall ", "red"], rng.randint(0, 2))}
        n = rng.randint(-1, 6)
        if n >= 0:
            o["relations"] = [{"name": rng.choice(["On", " on", "near", "to the left of"]),
                               "object": (7 if rng.random() < 0.2 else rng.choice(ids))} for _ in range(n)]
        objects[oid] = o
    return {"width": 100, "height": 50, "objects": objects}


def test_the_lists_made_in_one_pass_are_those_of_the_graphs_edges_walked_in_order(lex):
    """`SceneIndex` makes its lists by subject and object in one pass over the objects' relations;
    they must be what walking the graph's edges in order (each edge once, at its first place)
    gives, in the same order, with the same set, whichever of the set and the lists is asked first."""
    clean = scene_index._CLEAN.__getitem__
    for seed in range(200):
        graph = _awkward_graph(seed)
        out_edges: dict = {}
        in_edges: dict = {}
        seen: set = set()
        walk = ((oid, clean(rel["name"]), str(rel["object"]))
                for oid, o in graph["objects"].items() for rel in o.get("relations", ()))
        for s, r, o in walk:
            if (s, r, o) not in seen:
                seen.add((s, r, o))
                out_edges.setdefault(s, []).append((r, o))
                in_edges.setdefault(o, []).append((r, s))
        lists_first = SceneIndex.build("i", graph, lex)
        assert list(lists_first.out_edges.items()) == list(out_edges.items())
        assert list(lists_first.in_edges.items()) == list(in_edges.items())
        assert lists_first.edges == seen
        set_first = SceneIndex.build("i", graph, lex)
        assert set_first.edges == seen
        assert list(set_first.in_edges.items()) == list(in_edges.items())
        assert list(set_first.out_edges.items()) == list(out_edges.items())


def test_the_objects_and_names_are_those_the_graph_gives(lex):
    """The index's objects, made without the named tuple's constructor, are the tuples it makes."""
    for seed in range(50):
        graph = _awkward_graph(seed)
        scene = SceneIndex.build("i", graph, lex)
        expected = {}
        for oid, o in graph["objects"].items():
            name = o["name"].lower().strip()
            expected[oid] = scene_index.SceneObject(
                id=oid, name=name, canonical=lex.canonical(name),
                attributes=frozenset(a.lower().strip() for a in o["attributes"]),
                x=float(o["x"]), y=float(o["y"]), w=float(o["w"]), h=float(o["h"]))
        assert list(scene.objects.items()) == list(expected.items())
        assert all(type(v) is scene_index.SceneObject and type(v.x) is float for v in scene.objects.values())
        by_name: dict = {}
        by_kind: dict = {}
        for oid, obj in expected.items():
            by_name.setdefault(obj.name, []).append(oid)
            by_kind.setdefault(obj.canonical, []).append(oid)
        assert list(scene.by_name.items()) == list(by_name.items())
        assert list(scene.by_canonical.items()) == list(by_kind.items())


def test_a_scene_has_a_name_exactly_when_one_of_its_objects_bears_it(lex):
    scene = SceneIndex.build("i", _graph(), lex)
    for names in (frozenset(), frozenset({"man"}), frozenset({"Man"}), frozenset({"cat", "dog", "x" * 40}),
                  frozenset(f"w{i}" for i in range(300)), frozenset(f"w{i}" for i in range(300)) | {"skateboard"}):
        assert scene.has_any_name(names) == any(o.name in names for o in scene.objects.values())
