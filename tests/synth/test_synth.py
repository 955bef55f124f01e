"""synth: deterministic, GQA-shaped, statistically GQA-like, answers true of the graph."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

import orjson
import pytest
import synth
from synth_gqa_exec import execute  # beside this file: pytest puts a test's folder on sys.path

from contrastgen.datasets.gqa import load_questions, load_scene_graphs
from contrastgen.jsonio import dumps

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
OPPOSITE = {"to the left of": "to the right of", "above": "below", "in front of": "behind"}
OPPOSITE.update({v: k for k, v in OPPOSITE.items()})
SPATIAL = set(OPPOSITE) | {"near"}


@pytest.fixture(scope="module")
def medium() -> tuple[dict, dict]:
    return synth.make_dataset(300, 3900, seed=5)


@pytest.fixture(scope="module")
def large() -> tuple[dict, dict]:
    """Enough data for the rare phrasings and the 1-in-200 noise to show up in numbers."""
    return synth.make_dataset(1500, 19500, seed=7)


def _edges(graph: dict) -> set[tuple[str, str, str]]:
    return {(s, r["name"], str(r["object"])) for s, o in graph["objects"].items() for r in o["relations"]}


def _contradictory(edges: set) -> set[frozenset]:
    """Pairs related both ways of one axis: a left of b and a right of b, or a in front of and behind b."""
    return {frozenset((s, o)) for s, r, o in edges
            if r in ("to the left of", "in front of") and (s, OPPOSITE[r], o) in edges}


def _with_program(questions: dict) -> list[dict]:
    return [q for q in questions.values() if "semantic" in q]


def _family(q: dict) -> str | None:
    return synth.template_family(q["types"]["detailed"], q["semantic"])


def test_same_seed_same_bytes_other_seed_other_data():
    a = synth.make_dataset(40, 500, seed=3)
    b = synth.make_dataset(40, 500, seed=3)
    c = synth.make_dataset(40, 500, seed=4)
    assert dumps(a) == dumps(b)
    assert dumps(a) != dumps(c)


def test_write_dataset_streams_the_same_data_and_loads(tmp_path, monkeypatch):
    monkeypatch.setattr(synth, "CHUNK_IMAGES", 7)  # several chunks, written by two processes
    qpath, gpath = synth.write_dataset(tmp_path / "d", 45, 600, seed=2, workers=2)
    questions, graphs = synth.make_dataset(45, 600, seed=2)
    assert orjson.loads(qpath.read_bytes()) == questions
    assert orjson.loads(gpath.read_bytes()) == graphs
    # Streaming in chunks writes exactly what one sorted dump would.
    assert qpath.read_bytes() == orjson.dumps(questions, option=orjson.OPT_SORT_KEYS) + b"\n"
    assert len(load_questions(qpath)) == 600
    assert len(load_scene_graphs(gpath)) == 45
    again = synth.write_dataset(tmp_path / "e", 45, 600, seed=2, workers=1)
    assert again[0].read_bytes() == qpath.read_bytes() and again[1].read_bytes() == gpath.read_bytes()


def test_write_dataset_leaves_nothing_when_generation_fails(tmp_path, monkeypatch):
    real = synth._chunk_bytes

    def failing(task):
        if task[0] >= 20:
            raise RuntimeError("disk on fire")
        return real(task)

    monkeypatch.setattr(synth, "CHUNK_IMAGES", 10)
    monkeypatch.setattr(synth, "_chunk_bytes", failing)
    with pytest.raises(RuntimeError):
        synth.write_dataset(tmp_path / "out", 50, 500, workers=1)
    assert not list((tmp_path / "out").iterdir())


def test_rejects_nonsense_sizes():
    with pytest.raises(ValueError):
        synth.make_dataset(0, 10)
    with pytest.raises(ValueError):
        synth.make_dataset(5, -1)


def test_question_count_is_exact_and_spread_evenly():
    questions, graphs = synth.make_dataset(7, 100, seed=1)
    assert len(questions) == 100 and len(graphs) == 7
    per_image = Counter(q["imageId"] for q in questions.values())
    assert set(per_image.values()) <= {14, 15}


def test_graph_statistics_resemble_gqa(medium):
    _, graphs = medium
    objects = [o for g in graphs.values() for o in g["objects"].values()]
    assert 14 <= len(objects) / len(graphs) <= 18
    # ~4 per object, and ~15 more in the fifth of the images with left/right between all pairs.
    assert 5 <= statistics.mean(len(o["relations"]) for o in objects) <= 9
    assert statistics.mean(len(o["attributes"]) for o in objects) >= 1.5
    names = Counter(o["name"] for o in objects)
    assert len(names) >= 800  # ~4.8k objects over a 1,750-name Zipf vocabulary
    top = names.most_common(1)[0][1]
    assert top >= 20 * statistics.median(names.values())  # a heavy head, as in GQA ("man", "window")


def test_question_statistics_resemble_gqa(medium):
    questions, graphs = medium
    assert len(questions) / len(graphs) == 13
    # Template families by meaning (the program), so look-alike verify-rel questions do not count.
    programs = _with_program(questions)
    template_share = sum(_family(q) is not None for q in programs) / len(programs)
    assert 0.18 <= template_share <= 0.27
    kinds = Counter(q["types"]["detailed"] for q in questions.values())
    assert len(kinds) >= 16
    yes_no = Counter(q["answer"] for q in questions.values() if q["answer"] in ("yes", "no"))
    assert 0.3 <= yes_no["yes"] / sum(yes_no.values()) <= 0.7
    # Within an image, no question text repeats.
    per_image = Counter((q["imageId"], q["question"]) for q in questions.values())
    assert max(per_image.values()) == 1


def test_answers_are_true_of_the_graph(medium, large):
    checked = 0
    for questions, graphs in (medium, large):
        for qid, q in questions.items():
            if "semantic" in q:
                assert execute(q, graphs[q["imageId"]]) == q["answer"], (qid, q["question"], q["semanticStr"])
                checked += 1
    assert checked >= 0.85 * (3900 + 19500)


def test_spatial_relations_agree_with_boxes_and_go_both_ways(medium):
    """Every spatial edge is written both ways; outside the documented contradictory pairs, the
    edges agree with the boxes."""
    _, graphs = medium
    for image_id, g in list(graphs.items())[:200]:
        objs = g["objects"]
        edges = _edges(g)
        noisy = _contradictory(edges)
        for s, rel, o in edges:
            a, b = objs[s], objs[o]
            if frozenset((s, o)) not in noisy:
                if rel == "to the left of":
                    assert a["x"] + a["w"] / 2 < b["x"] + b["w"] / 2
                elif rel == "below":
                    assert a["y"] + a["h"] / 2 > b["y"] + b["h"] / 2
            if rel in OPPOSITE:
                assert (o, OPPOSITE[rel], s) in edges, (image_id, s, rel, o)
            if rel == "near":
                assert (o, "near", s) in edges


def _referent_candidates(q: dict, graph: dict) -> list[str]:
    """Objects the program's first reference (select, or select -> relate) could denote by name."""
    objs = graph["objects"]
    edges = _edges(graph)
    sem = q["semantic"]
    name, oid = re.match(r"^(.*) \((\d+)\)\s*$", sem[0]["argument"]).groups()
    if len(sem) > 1 and sem[1]["operation"] == "relate" and sem[1]["dependencies"] == [0] and not \
            sem[1]["argument"].startswith("_,"):
        body = sem[1]["argument"].rsplit(" (", 1)[0]
        xname, rel, role = body.rsplit(",", 2)
        return [x for x, o in objs.items() if o["name"] == xname and
                ((x, rel, oid) in edges if role == "s" else (oid, rel, x) in edges)]
    return [x for x, o in objs.items() if o["name"] == name]


def test_definite_references_single_out_their_object_except_the_documented_share(medium, large):
    """A side or colour question's "the X" (with its modifier) denotes one object; relation
    questions name an object that is not the only one of its name at about AMBIGUOUS_SHARE, as
    GQA does ("Is the man to the left of the car?" with two men: the program picks one)."""
    ambiguous = relation = 0
    for questions, graphs in (medium, large):
        for q in _with_program(questions):
            family = _family(q)
            if family in ("side", "color"):
                assert len(_referent_candidates(q, graphs[q["imageId"]])) == 1, (q["question"], q["semanticStr"])
            elif family == "x_rel_y":
                g = graphs[q["imageId"]]
                other = _rel_of(q["semantic"][-1])[0]  # the slot the verify rel names by id
                relation += 1
                ambiguous += (len(_referent_candidates(q, g)) > 1
                              or sum(o["name"] == other for o in g["objects"].values()) > 1)
    assert relation >= 500
    assert 0.5 * synth.AMBIGUOUS_SHARE <= ambiguous / relation <= 1.3 * synth.AMBIGUOUS_SHARE, (ambiguous, relation)


def _near_identical(a: dict, b: dict) -> bool:
    """Boxes within 5% of each other's size in position and extent (a duplicated annotation)."""
    return all(abs(a[k] - b[k]) <= 0.05 * a[size] + 1 for k, size in (("x", "w"), ("w", "w"), ("y", "h"), ("h", "h")))


def test_noise_appears_at_the_documented_rates(large):
    questions, graphs = large
    noise = synth.DEFAULT_NOISE
    pairs = contradictory = duplicated = all_pairs = 0
    for g in graphs.values():
        objs = g["objects"]
        edges = _edges(g)
        pairs += len({frozenset((s, o)) for s, r, o in edges if r in SPATIAL})
        contradictory += len(_contradictory(edges))
        ids = list(objs)
        duplicated += any(objs[a]["name"] == objs[b]["name"] and _near_identical(objs[a], objs[b])
                          for i, a in enumerate(ids) for b in ids[i + 1:])
        centres = [o["x"] + o["w"] / 2 for o in objs.values()]
        distinct = sum(centres[i] != centres[j] for i in range(len(ids)) for j in range(i + 1, len(ids)))
        all_pairs += sum(r == "to the left of" for _, r, _ in edges) >= distinct
    n = len(graphs)
    assert pairs > 20_000
    assert 0.5 * noise.contradiction_rate <= contradictory / pairs <= 1.6 * noise.contradiction_rate
    # Images can also show two same-named objects with nearly equal boxes by chance, hence "+".
    assert noise.duplicate_share - 0.03 <= duplicated / n <= noise.duplicate_share + 0.06
    assert noise.all_pairs_share - 0.04 <= all_pairs / n <= noise.all_pairs_share + 0.05
    bare = [q for q in questions.values() if "semantic" not in q]
    assert abs(len(bare) / len(questions) - noise.no_program_share) <= 0.015
    for q in bare:  # stripped the way some datasets strip them: program and annotations together
        assert "semanticStr" not in q and "annotations" not in q
        assert {"question", "answer", "types", "imageId"} <= set(q)
    assert all("semanticStr" in q and "annotations" in q for q in _with_program(questions))


def test_clean_noise_turns_it_all_off():
    questions, graphs = synth.make_dataset(120, 1500, seed=3, noise=synth.CLEAN)
    assert all("semantic" in q and "annotations" in q for q in questions.values())
    for g in graphs.values():
        edges = _edges(g)
        assert not _contradictory(edges)
        assert len(g["objects"]) <= 24  # no duplicate appended to the 8..24 drawn objects
    assert synth.make_dataset(120, 1500, seed=3, noise=synth.CLEAN) == (questions, graphs)
    assert synth.make_dataset(120, 1500, seed=3)[1] != graphs


def test_output_does_not_depend_on_string_hashing(tmp_path):
    """Sets of ids must never decide an order: two interpreters with other hash seeds agree."""
    code = ("import sys, hashlib; import synth; from contrastgen.jsonio import dumps; "
            "sys.stdout.write(hashlib.sha256(dumps(synth.make_dataset(60, 800, seed=9))).hexdigest())")
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(Path(synth.__file__).parent)}
        digests.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                   check=True).stdout)
    assert len(digests) == 1


def test_token_annotations_land_on_the_named_words():
    parts = synth.QuestionParts("What color is the cat in front of the wall?", "yellow", "The cat is yellow.",
                                [], "directOf", "attr", "query", "color", None,
                                [("cat", "7"), ("wall", "8")], [("cat", "7")])
    rec = parts.record("1", "2")
    # The real GQA record 00263036 annotates exactly these positions.
    assert rec["annotations"]["question"] == {"4": "7", "9": "8"}
    assert synth.annotate("On which side of the picture is the train car?", [("train car", "5")]) == {"8:10": "5"}


def test_semantic_str_matches_gqa_on_real_questions():
    path = SHARED / "data" / "gqa" / "val_balanced_questions_sample.json"
    if not path.is_file():
        pytest.skip("../shared GQA sample absent")
    real = json.loads(path.read_text())
    for qid, q in real.items():
        assert synth.semantic_str(q["semantic"]) == q["semanticStr"], qid


def test_vocabulary_plural_forms():
    vocab = synth.load_vocabulary()
    assert len(vocab.names) == 1750
    assert vocab.plural("man") == "men" and vocab.plural("jeans") == "jeans"
    assert vocab.plural("water") == "water" and vocab.plural("box") == "boxes"
    assert vocab.is_plural("scissors") and vocab.is_plural("dishes") and not vocab.is_plural("bus")
    assert all(isinstance(r, str) for r in vocab.semantic)  # YAML's "on" must not become True


# --------------------------------------------------------------------------- GQA's phrasings


def _rel_of(step: dict) -> tuple[str, str, str, str | None]:
    """(name, relation, role, id) of a relate / verify rel argument "jeans,wearing,o (12)"."""
    body, oid = re.match(r"^(.*) \(([^()]*)\)\s*$", step["argument"]).groups()
    name, rel, role = body.rsplit(",", 2)
    return name, rel, role, None if oid == "-" else oid


def _modifier_steps(q: dict) -> list[tuple[str, str, str, str]]:
    """(rendering kind, xname, rel, other name) of each relate step that qualifies a reference.

    All relate steps of verify-rel, colour and side questions qualify a reference; in existRelS
    the last one is the asked relation ("relate: fence,near,s"); relO / relS ask through theirs.
    """
    sem = q["semantic"]
    detailed = q["types"]["detailed"]
    if detailed in ("relO", "relS", "relChooser"):
        return []
    idx = [i for i, s in enumerate(sem) if s["operation"] == "relate"]
    if detailed.startswith("existRel"):
        idx = idx[:-1]
    out = []
    for i in idx:
        xname, rel, role, _ = _rel_of(sem[i])
        other = re.match(r"^(.*) \(", sem[sem[i]["dependencies"][0]]["argument"]).group(1)
        out.append((xname, rel, role, other))
    return out


def _rendering(q: dict, xname: str, rel: str, role: str, other: str) -> str | None:
    """Which of GQA's renderings of the modifier the question uses, or None."""
    text = q["question"].lower()
    x, r, o = re.escape(xname), re.escape(rel), re.escape(other)
    det = r"(?:the |an? |)"
    if re.search(rf"\bthe {o}'s {x}\b", text):
        return "possessive"
    if role == "s" and re.search(rf"\bthe {x} (?:that|who) (?:is|are) {r} {det}{o}\b", text):
        return "relative_clause"
    if role == "s" and re.search(rf"\bthe {x} {r} {det}{o}\b", text):
        return "participial" if rel.split()[0].endswith(("ing", "ed")) else "prepositional"
    if role == "o" and re.search(rf"\bthe {x} (?:that )?the {o} (?:is|are) {r}\b", text):
        return "object_relative"
    return None


def test_new_phrasings_say_what_their_programs_do(large):
    """Every modifier step of a program is rendered in the question, in one of GQA's phrasings
    ("the man wearing a hat", "the cup that is on the table", "the shirt the boy is wearing",
    "the man's hat"), and each phrasing and "in this picture" occur in numbers, in template
    questions as well as in others."""
    questions, _ = large
    kinds: Counter = Counter()
    families: dict[str, set] = {}
    for q in _with_program(questions):
        for xname, rel, role, other in _modifier_steps(q):
            kind = _rendering(q, xname, rel, role, other)
            assert kind is not None, (q["question"], q["semanticStr"])
            kinds[kind] += 1
            families.setdefault(kind, set()).add(_family(q))
        if " in this picture" in q["question"]:
            kinds["in_this_picture"] += 1
            families.setdefault("in_this_picture", set()).add(_family(q))
    for kind in ("possessive", "relative_clause", "participial", "prepositional", "object_relative",
                 "in_this_picture"):
        assert kinds[kind] >= 40, kinds
        assert families[kind] - {None}, (kind, families[kind])
    for kind in ("relative_clause", "participial", "prepositional", "in_this_picture"):  # look-alikes too
        assert None in families[kind], (kind, families[kind])


def test_asked_relation_is_the_last_step_of_verify_rel_questions(large):
    """"Is the man near the catcher wearing jeans?" asks about wearing: the modifier ("near the
    catcher") is a relate step, the asked relation the final verify rel, and the text ends with it."""
    questions, graphs = large
    lookalikes = modified_relations = 0
    for q in _with_program(questions):
        sem = q["semantic"]
        if sem[-1]["operation"] != "verify rel":
            continue
        name, rel, role, oid = _rel_of(sem[-1])
        text = q["question"].removesuffix(" in this picture?").removesuffix("?")
        relates = [_rel_of(s) for s in sem if s["operation"] == "relate"]
        if role == "o" and rel not in synth.TEMPLATE_RELATIONS:  # non-spatial: "... wearing (a) jeans"
            assert re.search(rf" {rel} (?:an? )?{re.escape(name)}$", text), (q["question"], q["semanticStr"])
            assert _family(q) is None
            if relates and relates[0][1] in SPATIAL:
                lookalikes += 1  # reads like "Is the X <spatial> the Y?" yet is not a template question
        else:
            assert f" {rel} " in f" {text} " and _family(q) == "x_rel_y", (q["question"], q["semanticStr"])
            modified_relations += bool(relates)
        if relates and "'s " not in text:  # the modifier's relation is in the text too
            assert all(r[1] in text for r in relates), q["question"]
        if oid is None:
            assert q["answer"] == "no" and q["types"]["detailed"] == "relVerifyCo"
    assert lookalikes >= 100 and modified_relations >= 100, (lookalikes, modified_relations)


def _one_image_case() -> synth.GraphView:
    """The brief's image: a person left of a boy, in jeans; a woman right of the boy, in jeans."""
    objects = {
        "1": {"name": "boy", "x": 280, "y": 150, "w": 80, "h": 260, "attributes": [], "relations": []},
        "2": {"name": "person", "x": 40, "y": 100, "w": 100, "h": 340, "attributes": [], "relations": []},
        "3": {"name": "jeans", "x": 55, "y": 280, "w": 70, "h": 150, "attributes": ["blue"], "relations": []},
        "4": {"name": "woman", "x": 470, "y": 90, "w": 100, "h": 350, "attributes": [], "relations": []},
        "5": {"name": "jeans", "x": 485, "y": 290, "w": 70, "h": 150, "attributes": ["black"], "relations": []},
        "6": {"name": "hat", "x": 290, "y": 140, "w": 55, "h": 30, "attributes": ["red"], "relations": []},
    }
    assert synth.add_all_pairs_lr(objects, list(objects)) > 0
    synth.add_relation(objects, "2", "wearing", "3")
    synth.add_relation(objects, "4", "wearing", "5")
    synth.add_relation(objects, "1", "wearing", "6")
    return synth.GraphView.of({"width": 640, "height": 480, "objects": objects})


def test_the_one_image_case_gets_gqas_program():
    v, vocab = _one_image_case(), synth.load_vocabulary()
    parts = synth.ask_verify_rel(v, "2", "wearing", vocab, t="3", x_mod=synth.Modifier("to the left of", "1", "s"))
    rec = parts.record("q", "img")
    assert rec["question"] == "Is the person to the left of the boy wearing jeans?" and rec["answer"] == "yes"
    assert rec["semanticStr"] == ("select: boy (1)->relate: person,to the left of,s (2) [0]"
                                  "->verify rel: jeans,wearing,o (3) [1]")
    assert rec["annotations"]["question"] == {"2": "2", "8": "1", "10": "3"}
    assert parts.family is None
    assert execute(rec, v.graph) == "yes"
    # The look-alike with the other reading's answer: the woman wears no hat, the boy does.
    no = synth.ask_verify_rel(v, "4", "wearing", vocab, t_name="hat", x_mod=synth.Modifier("to the right of", "1", "s"))
    assert no.question == "Is the woman to the right of the boy wearing a hat?" and no.answer == "no"
    assert semantic_tail(no) == "verify rel: hat,wearing,o (-) [1]" and no.detailed == "relVerifyCo"
    # A template question with a relative clause on X keeps the template family.
    rel = synth.ask_relation(v, "2", "to the left of", "4", vocab,
                             x_mod=synth.Modifier("wearing", "3", "s", "that"), picture=True)
    assert rel.question == "Is the person that is wearing jeans to the left of the woman in this picture?"
    assert rel.family == "x_rel_y" and rel.answer == "yes"
    assert synth.semantic_str(rel.semantic) == ("select: jeans (3)->relate: person,wearing,s (2) [0]"
                                                "->verify rel: woman,to the left of,o (4) [1]")
    owner = synth.ask_color(v, "6", vocab, x_mod=synth.Modifier("wearing", "1", "o", "possessive"))
    assert owner.question == "What color is the boy's hat?" and owner.answer == "red" and owner.family == "color"
    assert synth.semantic_str(owner.semantic) == "select: boy (1)->relate: hat,wearing,o (6) [0]->query: color [1]"
    assert owner.record("q", "img")["annotations"]["question"] == {"4": "1", "5": "6"}
    with pytest.raises(ValueError):  # a modifier the graph does not support is refused
        synth.describe(v, "4", vocab, synth.Modifier("to the left of", "1", "s"))


def semantic_tail(parts: synth.QuestionParts) -> str:
    return synth.semantic_str(parts.semantic).split("->")[-1]


def test_shared_attribute_or_questions_are_not_the_template(large):
    questions, _ = large
    shared = [q for q in _with_program(questions) if q["types"]["detailed"].startswith(("existAttrOr", "existThatOr"))]
    assert len(shared) >= 100
    for q in shared:
        ops = [s["operation"] for s in q["semantic"]]
        assert ops == ["select", ops[1], "exist", "select", ops[1], "exist", "or"] and ops[1].startswith("filter ")
        assert _family(q) is None
    assert {q["answer"] for q in shared} == {"yes", "no"}
