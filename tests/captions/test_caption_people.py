"""People nouns in caption negatives (issue 44, on graphs built from the shared GQA questions):
- no colour is put on a people noun ("a brown chair" -> "a brown woman", "a blue man"), nor said
  of one in a true caption;
- people cross-classify both ways for absence and uniqueness: "man" may denote a boy, so where a
  man is listed no negative says there is no boy ("a lamp and a man" -> "a boy and a man" on an
  image with three men), and "the girl" is not one object where a woman is there too; a group of
  people ("crowd", "family") may hold anyone, so none is said absent where people are listed.
The generator keeps to both, and `verify` re-checks both with its own code."""

from __future__ import annotations

import json

import orjson
from caption_cli import generate, run

from contrastgen.jsonio import read_jsonl
from contrastgen.verify.caption_rules import load_caption_rules
from contrastgen.verify.captions import CaptionGraph, person_colour
from contrastgen.verify.nouns import load_nouns
from contrastgen.verify.rules import load_rules

PEOPLE = {"man", "woman", "boy", "girl", "child", "lady", "guy", "baby", "umpire", "soldier", "person", "player",
          "crowd", "family"}
COLOURS = {"brown", "blue", "white", "black", "red", "green", "gray", "yellow", "pink", "purple", "orange", "beige"}


def thing(name: str, x: int, attributes: list[str] | None = None, relations: list[dict] | None = None) -> dict:
    return {"name": name, "x": x, "y": 0, "w": 9, "h": 9, "attributes": attributes or [], "relations": relations or []}


def scene(*named: tuple[str, list[str]]) -> dict:
    """Objects side by side, each left of the next, with the attributes given."""
    objects = {}
    for i, (name, attributes) in enumerate(named):
        right = [{"name": "to the left of", "object": str(i + 2)}] if i + 1 < len(named) else []
        objects[str(i + 1)] = thing(name, 20 * i, attributes, right)
    return {"width": 200, "height": 100, "objects": objects}


def write(tmp_path, graphs: dict):
    path = tmp_path / "g.json"
    path.write_bytes(orjson.dumps(graphs))
    return path


def negatives(out) -> list[tuple[dict, dict]]:
    return [(r, n) for r in read_jsonl(out / "captions.jsonl") for n in r["negatives"]]


def people_graphs() -> dict:
    graphs = {}
    for i in range(40):
        graphs[f"men{i}"] = scene(("man", ["young"]), ("lamp", ["white"]), ("man", []), ("man", ["tall"]),
                                  ("table", ["brown"]))
        graphs[f"girl{i}"] = scene(("girl", ["young"]), ("woman", ["tall"]), ("chair", ["brown"]), ("cup", ["blue"]))
        graphs[f"things{i}"] = scene(("chair", ["brown"]), ("vase", ["blue"]), ("plate", ["white"]), ("bench", ["black"]))
        graphs[f"alone{i}"] = scene(("boy", ["young", "blue"]), ("kite", ["red"]), ("bowl", ["green"]))
        graphs[f"crowd{i}"] = scene(("crowd", []), ("fence", ["white"]), ("family", []), ("bus", ["red"]))
    return graphs


def test_no_colour_is_put_on_a_people_noun(tmp_path):
    """"a brown chair" -> "a brown woman": said of a person, a colour reads as their skin."""
    graphs = write(tmp_path, people_graphs())
    out = generate(graphs, tmp_path / "out", "--unbalanced", "--candidates", "8")
    pairs = negatives(out)
    changed = []
    for r, n in pairs:
        said = {(p["noun"], p["attribute"]) for p in r["evidence"]["reading"]["phrases"]}
        changed += [(n["kind"], q) for q in n["evidence"]["reading"]["phrases"] if (q["noun"], q["attribute"]) not in said]
    # people nouns are put in a noun's place, and colours on other nouns: the rule is what keeps them apart
    assert any(k == "replace_obj" and q["noun"] in PEOPLE for k, q in changed)
    assert any(k == "replace_obj" and q["attribute"] in COLOURS for k, q in changed)
    assert [q for _, q in changed if q["noun"] in PEOPLE and q["attribute"] in COLOURS] == []
    # nor does a caption say one of a person (the boy is listed blue): a phrase only true captions
    # said would give them away
    said = [p for r, n in pairs for c in (r, n) for p in c["evidence"]["reading"]["phrases"]]
    assert any(p["noun"] == "boy" for p in said) and any(p["attribute"] in COLOURS for p in said)
    assert [p for p in said if p["noun"] in PEOPLE and p["attribute"] in COLOURS] == []
    assert run("verify", out, "--scene-graphs", graphs).exit_code == 0


def test_verify_rejects_a_colour_put_on_a_people_noun(tmp_path):
    graphs = write(tmp_path, people_graphs())
    out = generate(graphs, tmp_path / "out", "--unbalanced", "--candidates", "8", "--kinds", "replace_obj")
    lines = (out / "captions.jsonl").read_bytes().splitlines()

    def changed_phrase(r: dict) -> dict:
        n = r["negatives"][0]
        return n["evidence"]["reading"]["phrases"][n["change"]["phrase"]]

    records = [orjson.loads(line) for line in lines]
    k = next(k for k, r in enumerate(records)  # a replace_obj negative of a brown phrase, no people there
             if r["image_id"].startswith("things") and changed_phrase(r)["attribute"] == "brown")
    r = records[k]
    n, phrase = r["negatives"][0], changed_phrase(r)
    # the same negative with "woman" in the noun's place: as false as before (no woman there)
    old = phrase["noun"]
    n["caption"] = n["caption"].replace(f"brown {old}", "brown woman")
    phrase["noun"] = n["change"]["to"] = "woman"
    for f in n["evidence"]["facts"]:
        if f["fact"] == "may_be" and f["noun"] == old:
            f["noun"] = "woman"
    lines[k] = orjson.dumps(r)
    (out / "captions.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    result = run("verify", out, "--scene-graphs", graphs, "--json")
    report = json.loads(result.output)
    assert result.exit_code == 1
    assert [f["check"] for f in report["failures"]] == ["person_colour"], report["failures"]


def test_a_people_noun_another_may_denote_is_not_claimed_absent(tmp_path):
    """Three men listed: "man" may denote a boy, so no negative says there is no boy; "woman",
    which no man may be, is still said absent there (the rule is the lexicon's, not every person)."""
    graphs = write(tmp_path, people_graphs())
    out = generate(graphs, tmp_path / "out", "--unbalanced", "--candidates", "8", "--kinds", "replace_obj,add_obj")
    absent: dict[str, set[str]] = {"men": set(), "things": set(), "girl": set()}
    for r, n in negatives(out):
        where = r["image_id"].rstrip("0123456789")
        for f in n["evidence"]["facts"]:
            if f["fact"] == "may_be" and not f["ids"] and where in absent:
                absent[where].add(f["noun"])
    assert "boy" in absent["things"] and "woman" in absent["men"] and absent["things"] & {"crowd", "family"}
    assert not absent["men"] & {"boy", "child", "person", "soldier", "player", "guy", "crowd", "family"}, absent["men"]
    assert not absent["girl"] & {"child", "person"}, absent["girl"]
    assert run("verify", out, "--scene-graphs", graphs).exit_code == 0


def test_the_people_noun_another_may_denote_is_not_one_object(tmp_path):
    """A girl and a woman listed: "woman" may denote a girl, so "the girl" does not name one object;
    nor does "the soldier" where a man is listed too."""
    graphs = {}
    for i in range(30):
        graphs[f"girl{i}"] = scene(("lamp", ["white"]), ("girl", []), ("woman", []), ("cup", ["blue"]))
        graphs[f"alone{i}"] = scene(("lamp", ["white"]), ("girl", []), ("cup", ["blue"]))
        graphs[f"soldier{i}"] = scene(("lamp", ["white"]), ("soldier", []), ("man", []), ("cup", ["blue"]))
    graphs = write(tmp_path, graphs)
    out = generate(graphs, tmp_path / "out", "--unbalanced", "--candidates", "8", "--kinds", "aro_relation")
    said = {}
    for r in read_jsonl(out / "captions.jsonl"):
        said.setdefault(r["image_id"].rstrip("0123456789"), set()).update(
            p["noun"] for p in r["evidence"]["reading"]["phrases"])
    assert "girl" in said["alone"]  # alone, the girl is "the girl"
    assert not said.get("girl", set()) & {"girl", "woman"}
    assert not said.get("soldier", set()) & {"soldier", "man"}  # "the soldier" where a man stands too
    assert run("verify", out, "--scene-graphs", graphs).exit_code == 0


def test_the_verifier_reads_people_both_ways_with_its_own_tables():
    graph = CaptionGraph(scene(("man", []), ("man", []), ("lamp", []), ("girl", []), ("woman", [])),
                         load_rules(), load_caption_rules(), load_nouns())
    assert {"1", "2"} <= graph.may_be("boy")  # a man may be the boy
    assert "4" in graph.may_be("woman") and "5" in graph.may_be("girl")
    assert not {"1", "2"} & graph.may_be("woman")  # no man is a woman
    assert {"1", "2", "4", "5"} <= graph.may_be("crowd")  # a crowd may hold anyone
    assert graph.is_person("woman") and graph.is_person("family") and not graph.is_person("lamp")


def test_the_verifier_fails_a_colour_put_on_a_person_not_one_a_swap_moves():
    graph = CaptionGraph(scene(("man", ["blue"]), ("chair", ["brown"])), load_rules(), load_caption_rules(), load_nouns())

    def phrase(attribute: str, noun: str) -> dict:
        return {"determiner": "a", "attribute": attribute, "noun": noun}

    caption = {"shape": "relation", "relation": "to the left of", "phrases": [phrase("blue", "man"), phrase("", "chair")]}
    swapped = {**caption, "phrases": caption["phrases"][::-1]}
    assert person_colour(graph, caption, swapped) is None
    replaced = {"shape": "object", "phrases": [phrase("brown", "woman")]}
    assert "brown" in person_colour(graph, {"shape": "object", "phrases": [phrase("brown", "chair")]}, replaced)
