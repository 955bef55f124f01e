"""`contrastgen captions generate` end to end: every kind on every dataset, every caption and
negative re-proven by `contrastgen verify`, the same bytes for the same input whatever the
workers, no swap over a relation that may hold both ways, and grammar as questions have it."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import orjson
import pytest
from caption_cli import generate, run
from cyclic_garbage import cyclic_garbage

from contrastgen.captions.candidates import KINDS
from contrastgen.captions.generate import CaptionOptions, generate_captions
from contrastgen.jsonio import read_jsonl
from contrastgen.resources import sample_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


def records(out: Path) -> list[dict]:
    return list(read_jsonl(out / "captions.jsonl"))


def test_every_kind_and_every_caption_reproven(caption_set):
    out, graphs = caption_set
    recs = records(out)
    kinds = {n["kind"] for r in recs for n in r["negatives"]}
    assert kinds == set(KINDS)
    result = run("verify", out, "--scene-graphs", graphs, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] and report["checked"] == len(recs) + sum(len(r["negatives"]) for r in recs)


def test_stats_count_what_was_written(gqa_captions):
    stats = json.loads((gqa_captions / "stats.json").read_text())
    recs = records(gqa_captions)
    assert stats["records"] == len(recs)
    written = {k: 0 for k in KINDS}
    for r in recs:
        for n in r["negatives"]:
            written[n["kind"]] += 1
    assert {k: v["pairs"] for k, v in stats["kinds"].items()} == written


def test_same_input_same_bytes_whatever_the_workers(tmp_path, gqa_captions):
    two = generate(sample_dir() / "scene_graphs.json", tmp_path / "two", "--workers", "2")
    assert (two / "captions.jsonl").read_bytes() == (gqa_captions / "captions.jsonl").read_bytes()
    other = generate(sample_dir() / "scene_graphs.json", tmp_path / "seed1", "--seed", "1")
    assert (other / "captions.jsonl").read_bytes() != (gqa_captions / "captions.jsonl").read_bytes()


def _graph(edges: list[tuple[str, str, str]]) -> dict:
    names = {"1": "dog", "2": "car", "3": "bench", "4": "lamp"}
    objects = {oid: {"name": n, "x": 10 * i, "y": 10, "w": 8, "h": 8, "attributes": [], "relations": []}
               for i, (oid, n) in enumerate(names.items())}
    for s, r, o in edges:
        objects[s]["relations"].append({"name": r, "object": o})
    return {"width": 100, "height": 100, "objects": objects}


# Twelve copies of one graph: any blind model tells their captions from their negatives, so a
# balanced run refuses every kind of them (tests/captions/test_caption_blind_check.py); the tests
# on such copies are of the proofs and the words, which `--unbalanced` writes unchecked.
UNCHECKED = "--unbalanced"


def _swaps(tmp_path: Path, edges: list[tuple[str, str, str]]) -> list[dict]:
    graphs = {f"img{i}": _graph(edges) for i in range(12)}
    (tmp_path / "g.json").write_bytes(orjson.dumps(graphs))
    out = generate(tmp_path / "g.json", tmp_path / "out", "--kinds", "swap_obj,aro_relation", "--candidates", "8",
                   UNCHECKED)
    return [n for r in records(out) for n in r["negatives"]]


def test_near_is_never_swapped(tmp_path):
    """ARO's VG-Relation swaps "near" (its issue #37): "the car is near the dog" is as true."""
    assert _swaps(tmp_path, [("1", "near", "2"), ("3", "next to", "4"), ("2", "near", "3")]) == []


def test_a_relation_the_graph_gives_both_ways_is_never_swapped(tmp_path):
    assert _swaps(tmp_path, [("1", "to the left of", "2"), ("2", "to the left of", "1")]) == []


def test_a_one_way_relation_is_swapped_with_its_proof(tmp_path):
    swaps = _swaps(tmp_path, [("1", "to the left of", "2"), ("2", "to the right of", "1")])
    assert swaps and {n["kind"] for n in swaps} == {"swap_obj", "aro_relation"}
    for n in swaps:
        fact = [f for f in n["evidence"]["facts"] if f["fact"] == "not_relation"]
        assert fact and fact[0]["relation"] == n["evidence"]["reading"]["relation"]
        assert fact[0]["because"]["name"] in ("to the left of", "to the right of")


def test_grammar_of_every_caption_and_negative(caption_set):
    from grammar_check import Checker

    checker = Checker()
    lex = checker.lex
    problems = []
    for r in records(caption_set[0]):
        for text, reading in [(r["caption"], r["evidence"]["reading"]),
                              *((n["caption"], n["evidence"]["reading"]) for n in r["negatives"])]:
            # "a metal tandem bike": the checker takes an unknown word after "metal" for no noun,
            # so "a" + plural or mass noun is checked on the phrases as read (verify holds reading = words)
            found = [p for p in checker.problems(text) if p != "a_plural"]
            for phrase in reading["phrases"]:
                noun = phrase["noun"]
                if phrase["determiner"] in ("a", "an") and lex.is_known(noun) and (
                        lex.is_plural(noun) or lex.is_plural_only(noun) or lex.is_uncountable(noun)):
                    found.append("a_plural")
            words = text.split()
            if words[0] == "the" and ("is" in words or "are" in words):  # "the X is|are ...": number
                verb = "is" if "is" in words else "are"
                noun = " ".join(words[1:words.index(verb)])
                plural = lex.is_plural(noun) or lex.is_plural_only(noun)
                if plural != (verb == "are") and lex.is_known(noun):
                    found.append("number")
            if found:
                problems.append((text, found))
    assert problems == []


def test_a_missing_extra_is_named(tmp_path, gqa_captions, monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    result = run("captions", "baselines", gqa_captions)
    assert result.exit_code == 2 and "contrastgen[captions]" in result.output


def test_bad_graphs_exit_2_and_write_nothing(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"1": {"objects": {"a": {"name": "dog", "relations": [{"name": "near"}]}}}}')
    result = run("captions", "generate", "--scene-graphs", bad, "--out", tmp_path / "out", "--workers", "1")
    assert result.exit_code == 2 and "bad.json" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kinds", ["replace_obj", "add_att,swap_att"])
def test_kinds_asked_for_are_the_kinds_written(tmp_path, kinds):
    out = generate(sample_dir() / "scene_graphs.json", tmp_path / "out", "--kinds", kinds)
    assert {n["kind"] for r in records(out) for n in r["negatives"]} == set(kinds.split(","))


def test_no_negative_claims_an_unannotated_prone_kind_absent(caption_set):
    """Shirts, hands, the sky: graphs leave them out, so their absence proves nothing."""
    from contrastgen.language.lexicon import Lexicon

    lex = Lexicon.load()
    empty = {f["noun"] for r in records(caption_set[0]) for n in r["negatives"]
             for f in n["evidence"]["facts"] if f["fact"] == "may_be" and not f["ids"]}
    assert empty and not [noun for noun in empty if lex.is_unannotated_prone(noun)]


def test_people_nouns_cross_classify(tmp_path):
    """Where the only person is a "player", no negative may say there is no woman or man; where
    there is no person at all, negatives do say so (the nouns are in the corpus's pool)."""

    def thing(name: str, x: int, relations: list | None = None) -> dict:
        return {"name": name, "x": x, "y": 0, "w": 9, "h": 9, "attributes": [], "relations": relations or []}

    left = [{"name": "to the left of", "object": "2"}]
    scenes = {"player": {"1": thing("player", 0, left), "2": thing("bench", 20), "3": thing("tree", 40)},
              "empty": {"1": thing("car", 0, left), "2": thing("bench", 20), "3": thing("tree", 40)},
              "people": {"1": thing("woman", 0, left), "2": thing("man", 20), "3": thing("dog", 40)}}
    graphs = {f"{kind}{i}": {"width": 100, "height": 100, "objects": objects}
              for kind, objects in scenes.items() for i in range(40)}
    (tmp_path / "g.json").write_bytes(orjson.dumps(graphs))
    out = generate(tmp_path / "g.json", tmp_path / "out", "--candidates", "8", "--kinds", "replace_obj,add_obj")
    said_absent = {"player": [], "empty": []}
    for r in records(out):
        kind = r["image_id"].rstrip("0123456789")
        for n in r["negatives"]:
            for f in n["evidence"]["facts"]:
                if f["fact"] == "may_be" and f["noun"] in ("woman", "man") and kind in said_absent:
                    said_absent[kind].append(f["ids"])
    assert said_absent["empty"] and all(ids == [] for ids in said_absent["empty"])
    assert all("1" in ids for ids in said_absent["player"])


def test_an_attribute_that_is_its_nouns_word_is_never_said(tmp_path):
    """An orange listed "orange", a glass listed "glass": "an orange orange" says a word twice."""

    def thing(name: str, x: int, attributes: list[str]) -> dict:
        return {"name": name, "x": x, "y": 0, "w": 9, "h": 9, "attributes": attributes,
                "relations": [{"name": "to the left of", "object": "2"}] if name == "orange" else []}

    objects = {"1": thing("orange", 0, ["orange", "round"]), "2": thing("glass", 20, ["glass", "clear"]),
               "3": thing("table", 40, ["brown", "wooden"])}
    graphs = {f"img{i}": {"width": 100, "height": 100, "objects": objects} for i in range(30)}
    (tmp_path / "g.json").write_bytes(orjson.dumps(graphs))
    out = generate(tmp_path / "g.json", tmp_path / "out", "--candidates", "8", UNCHECKED)
    texts = [t for r in records(out) for t in (r["caption"], *(n["caption"] for n in r["negatives"]))]
    assert texts and any("orange" in t for t in texts)
    assert [t for t in texts if any(a == b for a, b in zip(t.split(), t.split()[1:], strict=False))] == []


def test_a_caption_run_leaves_no_cyclic_garbage(tmp_path):
    """The caption pass runs with the collector paused throughout (a collection would walk the
    workers' caches and free nothing): that holds only while an image's worlds, candidates and
    proofs go when their last reference does. A cycle among them would hold every image's
    garbage until the worker ends."""
    graphs = sample_dir() / "scene_graphs.json"
    runs = iter(("first", "second"))
    garbage = cyclic_garbage(lambda: generate_captions(graphs, tmp_path / next(runs), CaptionOptions(), workers=1).records)
    assert not garbage, f"objects freed only by the collector: {garbage.most_common(8)}"


def test_a_caption_run_leaves_the_collector_as_it_was(tmp_path):
    """Run in this process, the passes pause the collector and freeze nothing: the caller's
    collector is as it was, so a later run here (the question generator unfreezes only what it
    froze) is not left with this run's objects frozen."""
    frozen, enabled = gc.get_freeze_count(), gc.isenabled()
    generate_captions(sample_dir() / "scene_graphs.json", tmp_path / "out", CaptionOptions(), workers=1)
    assert gc.get_freeze_count() == frozen and gc.isenabled() == enabled


def test_a_vocabulary_lemma_of_a_plural_only_noun_is_said_as_the_noun(tmp_path):
    """Visual Genome's vocabulary lemmatises "stairs" to "stair" and "pants" to "pant": a caption
    says the noun ("pink stairs", "blue pants"), never the lemma without an article, and each
    caption and negative is re-proven, a stairway counted among what "stairs" may denote."""

    def thing(name: str, x: int, attributes: list[str], relations: list[dict] | None = None) -> dict:
        return {"name": name, "x": x, "y": 0, "w": 9, "h": 9, "attributes": attributes, "relations": relations or []}

    objects = {"1": thing("stair", 0, ["pink"], [{"name": "in front of", "object": "2"}]),
               "2": thing("person", 20, ["tall"]), "3": thing("stairway", 40, ["white"]),
               "4": thing("pant", 60, ["blue"], [{"name": "to the left of", "object": "5"}]),
               "5": thing("table", 80, ["brown", "wooden"], [{"name": "to the left of", "object": "1"}])}
    graphs = {f"img{i}": {"width": 100, "height": 100, "objects": objects} for i in range(20)}
    (tmp_path / "g.json").write_bytes(orjson.dumps(graphs))
    out = generate(tmp_path / "g.json", tmp_path / "out", "--candidates", "8", UNCHECKED)
    words = [t.split() for r in records(out) for t in (r["caption"], *(n["caption"] for n in r["negatives"]))]
    assert any("stairs" in w for w in words)
    assert not [w for w in words if "stair" in w or "pant" in w]
    assert run("verify", str(out), "--scene-graphs", str(tmp_path / "g.json")).exit_code == 0
