"""`contrastgen verify` on caption sets: it fails what it must fail. Each test breaks one
thing a generator bug could break and checks the verifier names it."""

from __future__ import annotations

import copy
import hashlib
import json

import orjson
import pytest
from caption_cli import run

from contrastgen.jsonio import dumps, read_jsonl, write_jsonl
from contrastgen.resources import sample_dir
from contrastgen.verify.captions import verify_captions
from contrastgen.verify.rules import load_rules


@pytest.fixture(scope="module")
def graphs() -> dict:
    return orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())


@pytest.fixture()
def recs(gqa_captions) -> list[dict]:
    return list(read_jsonl(gqa_captions / "captions.jsonl"))


def checks(recs, graphs) -> set[str]:
    return {f.check for f in verify_captions(recs, graphs).failures}


def first(recs, kind: str) -> tuple[dict, dict]:
    return next((r, n) for r in recs for n in r["negatives"] if n["kind"] == kind)


def test_the_set_as_generated_passes(recs, graphs):
    assert checks(recs, graphs) == set()


def test_a_negative_that_is_the_caption_is_not_false(recs, graphs):
    r, n = first(recs, "replace_att")
    n["caption"], n["evidence"]["reading"] = r["caption"], copy.deepcopy(r["evidence"]["reading"])
    assert {"negative_not_false", "change"} <= checks(recs, graphs)


def test_a_caption_whose_attribute_the_object_lacks_is_not_true(recs, graphs):
    r, n = first(recs, "replace_att")
    r["caption"], r["evidence"]["reading"] = n["caption"], copy.deepcopy(n["evidence"]["reading"])
    assert "caption_not_true" in checks(recs, graphs)


def test_words_that_do_not_say_the_reading(recs, graphs):
    r, _ = first(recs, "replace_obj")
    r["evidence"]["reading"]["phrases"][0]["noun"] = "elephant"
    assert "text_mismatch" in checks(recs, graphs)


def test_a_fact_the_graph_does_not_hold(recs, graphs):
    r, n = first(recs, "replace_obj")
    may_be = next(f for f in n["evidence"]["facts"] if f["fact"] == "may_be")
    graph = copy.deepcopy(graphs)
    image = graph[r["image_id"]]["objects"]
    name = next(iter(image.values()))["name"]
    image["999"] = {"name": may_be["noun"], "x": 0, "y": 0, "w": 1, "h": 1, "attributes": [], "relations": []}
    assert name and {"negative_not_false", "fact"} & checks(recs, graph)


def _record(image_id: str, caption: str, reading: dict, neg_caption: str, neg_reading: dict, kind: str) -> dict:
    rid = f"{image_id}_{hashlib.sha1(caption.encode()).hexdigest()[:10]}"
    ev = {"version": 1, "reading": reading, "facts": []}
    return {"id": rid, "image_id": image_id, "dataset": "gqa", "shape": reading["shape"], "caption": caption,
            "plausibility": 0.0, "region": [0, 0, 1, 1], "image_size": [100, 100], "evidence": ev,
            "negatives": [{"id": f"{rid}_{kind}", "kind": kind, "caption": neg_caption, "change": {},
                           "plausibility": 0.0, "evidence": {**ev, "reading": neg_reading, "proof": "referents"}}]}


def test_a_swap_over_near_is_refused(tmp_path):
    """ARO's VG-Relation case: "the horse is near the man" swapped is as true."""
    graph = {"img": {"width": 100, "height": 100, "objects": {
        "1": {"name": "horse", "x": 0, "y": 0, "w": 5, "h": 5, "attributes": [],
              "relations": [{"name": "near", "object": "2"}]},
        "2": {"name": "fence", "x": 9, "y": 0, "w": 5, "h": 5, "attributes": [], "relations": []}}}}

    def reading(a: str, b: str) -> dict:
        return {"shape": "relation", "relation": "near",
                "phrases": [{"determiner": "the", "attribute": "", "noun": a},
                            {"determiner": "the", "attribute": "", "noun": b}]}

    rec = _record("img", "the horse is near the fence", reading("horse", "fence"),
                  "the fence is near the horse", reading("fence", "horse"), "aro_relation")
    found = checks([rec], graph)
    assert {"symmetric_swap", "negative_not_false"} <= found
    write_jsonl(tmp_path / "captions.jsonl", [rec])
    (tmp_path / "sg.json").write_text(json.dumps(graph))
    result = run("verify", tmp_path, "--scene-graphs", tmp_path / "sg.json")
    assert result.exit_code == 1 and "symmetric_swap" in result.output


def test_ids_given_twice_are_refused_with_exit_2(tmp_path, recs):
    write_jsonl(tmp_path / "captions.jsonl", [recs[0], recs[0]])
    result = run("verify", tmp_path, "--scene-graphs", sample_dir() / "scene_graphs.json")
    assert result.exit_code == 2 and "captions.jsonl" in result.output and "twice" in result.output


def test_an_image_not_among_the_graphs(recs, graphs):
    recs[0]["image_id"] = "nowhere"
    assert "image" in checks(recs[:1], graphs)


def test_a_negative_given_twice_and_one_of_another_evidence_version(recs, graphs):
    r = next(r for r in recs if len(r["negatives"]) >= 2)
    r["negatives"].append(copy.deepcopy(r["negatives"][0]))  # the same id again
    r["negatives"][1]["evidence"]["version"] = 99
    failures = verify_captions(recs, graphs).failures
    assert any(f.check == "ids" and "given twice" in f.problem for f in failures)
    assert any(f.check == "structure" and "evidence version" in f.problem for f in failures)


def _phrases(*nouns: tuple[str, str]) -> list[dict]:
    return [{"determiner": "a", "attribute": a, "noun": n} for a, n in nouns]


@pytest.fixture()
def dog_and_car() -> dict:
    """A black dog and a red car; no cat, no bench."""
    return {"img": {"width": 100, "height": 100, "objects": {
        "1": {"name": "dog", "x": 0, "y": 0, "w": 5, "h": 5, "attributes": ["black"], "relations": []},
        "2": {"name": "car", "x": 9, "y": 0, "w": 5, "h": 5, "attributes": ["red"], "relations": []}}}}


def _add_obj(caption: str, added: str, negative: str, false_added: tuple[str, str]) -> dict:
    return _record("img", caption, {"shape": "pair", "phrases": _phrases(("", "dog"), ("", added))},
                   negative, {"shape": "pair", "phrases": _phrases(("", "dog"), false_added)}, "add_obj")


def test_a_matched_add_pair_is_reproven_on_both_sides(dog_and_car):
    assert checks([_add_obj("a dog and a car", "car", "a dog and a cat", ("", "cat"))], dog_and_car) == set()
    # the caption's addition is what the graph must prove present
    assert checks([_add_obj("a dog and a bench", "bench", "a dog and a cat", ("", "cat"))],
                  dog_and_car) == {"caption_not_true"}
    # the two additions are bare nouns in the same place: an attribute on one side only is no add pair
    assert checks([_add_obj("a dog and a car", "car", "a dog and a white cat", ("white", "cat"))],
                  dog_and_car) == {"change"}


def test_a_matched_add_att_pair_is_reproven_on_both_sides(dog_and_car):
    def pair(true: str, false: str) -> dict:
        return _record("img", f"a dog and a {true} car", {"shape": "pair", "phrases": _phrases(("", "dog"), (true, "car"))},
                       f"a dog and a {false} car", {"shape": "pair", "phrases": _phrases(("", "dog"), (false, "car"))},
                       "add_att")

    assert checks([pair("red", "blue")], dog_and_car) == set()
    assert checks([pair("green", "blue")], dog_and_car) == {"caption_not_true"}
    assert checks([pair("blue", "red")], dog_and_car) == {"caption_not_true", "negative_not_false"}


def test_a_vocabulary_form_of_a_listed_noun_may_denote_what_the_noun_may():
    """"stair" is the vocabulary's lemma of "stairs", a kind of staircase: an object listed as a
    stairway may be the stairs a caption names, whichever of the two spellings it says, so a
    negative's absence proof over "stair" must cover the stairway as the one over "stairs" does."""
    from contrastgen.verify.caption_rules import load_caption_rules

    rules = load_caption_rules()
    assert "stairway" in rules.hypernyms["stairs"]
    assert rules.hypernyms["stair"] == rules.hypernyms["stairs"]


def test_the_command_reads_the_graphs_from_disk_with_the_same_report(tmp_path, gqa_captions, recs, graphs):
    """`verify` streams the graphs to a scratch file and parses each when its captions come
    (memory that does not grow with the graphs); the report is the one of the graphs held."""
    broken = copy.deepcopy(recs)
    rec, neg = first(broken, "replace_att")  # a negative that is its caption is not false
    neg["caption"], neg["evidence"]["reading"] = rec["caption"], copy.deepcopy(rec["evidence"]["reading"])
    write_jsonl(tmp_path / "captions.jsonl", broken)
    held = verify_captions(broken, graphs)
    assert not held.ok
    result = run("verify", tmp_path, "--scene-graphs", sample_dir() / "scene_graphs.json", "--json")
    assert result.exit_code == 1
    assert json.loads(result.output) == json.loads(dumps(held.as_dict(unannotated_prone_rules=load_rules(
        ).unannotated_prone_source, file=str(tmp_path / "captions.jsonl"))))


def test_a_malformed_graph_is_refused_naming_the_file_and_the_image(tmp_path, recs, graphs):
    bad = copy.deepcopy(graphs)
    image = recs[0]["image_id"]
    del bad[image]["objects"]
    (tmp_path / "sg.json").write_bytes(orjson.dumps(bad))
    write_jsonl(tmp_path / "captions.jsonl", recs)
    result = run("verify", tmp_path, "--scene-graphs", tmp_path / "sg.json")
    assert result.exit_code == 2 and "sg.json" in result.output and image in result.output
