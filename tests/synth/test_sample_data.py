"""The bundled sample: valid GQA, covers every template phrasing and hard case, answers are true.

Coverage is asserted by inspecting the questions and graphs themselves (not only cases.json), so a
regenerated sample that silently lost, say, its plural-only nouns fails here.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from pathlib import Path

import pytest
import synth
from synth_gqa_exec import execute  # beside this file: pytest puts a test's folder on sys.path

from contrastgen.answers import normalize_answer
from contrastgen.datasets.gqa import load_questions, load_scene_graphs

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "contrastgen" / "data" / "sample"
SHARED = REPO / ".." / "shared"

GQA_FIELDS = {"imageId", "question", "answer", "fullAnswer", "semantic", "semanticStr", "types", "groups",
              "annotations", "entailed", "equivalent", "isBalanced"}


@pytest.fixture(scope="module")
def questions() -> dict:
    return load_questions(SAMPLE / "questions.json")


@pytest.fixture(scope="module")
def graphs() -> dict:
    return load_scene_graphs(SAMPLE / "scene_graphs.json")


@pytest.fixture(scope="module")
def cases() -> dict:
    return json.loads((SAMPLE / "cases.json").read_text())


def _obj(graphs: dict, q: dict, oid: str) -> dict:
    return graphs[q["imageId"]]["objects"][oid]


def test_size_and_gqa_format(questions, graphs):
    assert len(graphs) >= 30 and len(questions) >= 150
    for qid, q in questions.items():
        missing = GQA_FIELDS - set(q)
        assert missing <= {"semantic", "semanticStr", "annotations"}, (qid, missing)
        assert ("semantic" in q) == ("semanticStr" in q), qid
        if "annotations" not in q:  # stripped together with the program, as some datasets do
            assert "semantic" not in q, qid
            continue
        assert set(q["annotations"]) == {"question", "fullAnswer", "answer"}, qid
        assert set(q["types"]) == {"detailed", "semantic", "structural"}, qid
        assert qid in q["equivalent"]
    for image_id, g in graphs.items():
        assert g["height"] > 0 and len(g["objects"]) >= 2, image_id
        for o in g["objects"].values():
            assert o["x"] >= 0 and o["x"] + o["w"] <= g["width"], image_id
            assert o["y"] >= 0 and o["y"] + o["h"] <= g["height"], image_id


def test_object_names_come_from_visual_genome(graphs):
    vocab = set(json.loads((REPO / "benchmarks" / "synth_vocab.json").read_text())["names"])
    names = {o["name"] for g in graphs.values() for o in g["objects"].values()}
    # "dishes" is the paper's own Table 1 example; VG lemmatises it to "dish".
    assert names - vocab <= {"dishes"}, names - vocab


def test_answers_are_true_of_the_graph(questions, graphs):
    checked = 0
    for qid, q in questions.items():
        if "semantic" in q and q["imageId"] in graphs:
            assert execute(q, graphs[q["imageId"]]) == q["answer"], (qid, q["question"])
            checked += 1
    assert checked >= 200


def test_annotations_point_at_objects_of_the_image(questions, graphs):
    for qid, q in questions.items():
        g = graphs.get(q["imageId"])
        if g is None or "annotations" not in q:
            continue
        for key in ("question", "fullAnswer", "answer"):
            for span, oid in q["annotations"][key].items():
                assert re.fullmatch(r"\d+(:\d+)?", span), (qid, span)
                assert oid in g["objects"], (qid, key, oid)


OPPOSITE = {"to the left of": "to the right of", "to the right of": "to the left of",
            "above": "below", "below": "above", "in front of": "behind", "behind": "in front of"}


def _edges(g: dict) -> set[tuple[str, str, str]]:
    return {(s, r["name"], str(r["object"])) for s, o in g["objects"].items() for r in o["relations"]}


def _contradictory(edges: set) -> set[frozenset]:
    return {frozenset((s, o)) for s, r, o in edges
            if r in ("to the left of", "in front of") and (s, OPPOSITE[r], o) in edges}


def test_spatial_relations_agree_with_boxes_and_go_both_ways(graphs):
    """Both ways always; with the boxes except for the deliberately contradictory pairs."""
    noisy_images = set()
    for image_id, g in graphs.items():
        objs = g["objects"]
        edges = _edges(g)
        noisy = _contradictory(edges)
        if noisy:
            noisy_images.add(image_id)
        for s, rel, o in edges:
            a, b = objs[s], objs[o]
            if rel == "to the left of" and frozenset((s, o)) not in noisy:
                assert a["x"] + a["w"] / 2 < b["x"] + b["w"] / 2, (image_id, s, o)
            if rel == "above":
                assert a["y"] + a["h"] / 2 < b["y"] + b["h"] / 2, (image_id, s, o)
            if rel in OPPOSITE:
                assert (o, OPPOSITE[rel], s) in edges, (image_id, s, rel, o)
            if rel == "near":
                assert (o, "near", s) in edges, (image_id, s, o)
    assert noisy_images == {"2400022"}  # the hand-designed contradictory pairs, nowhere else


# Each phrase family of the paper's Table 1 (and the brief), with the answers it must show.
PHRASES = {
    "side": (r"^On which side (?:of the picture )?(?:is|are) the [\w ]+\?$", {"left", "right"}),
    "side_photo": (r"^Which side of the photo (?:is|are) the [\w ]+ on\?$", {"left", "right"}),
    "color": (r"^What color (?:is|are) the [\w ]+\?$", None),
    "color_relative_clause": (r"^The [\w ]+ the [\w ]+ (?:is|are) \w+ has what color\?$", None),
    "color_in_front": (r"^What color is the [\w ]+ in front of the [\w ]+\?$", None),
    "see_or": (r"^Do you see [\w ]+ or [\w ]+\?$", {"yes", "no"}),
    "see_either": (r"^Do you see either [\w ]+ or [\w ]+ there\?$", {"yes"}),
    "are_there_or": (r"^Are there [\w ]+ or [\w ]+ in this picture\?$", {"yes", "no"}),
    "is_there_near": (r"^Is there (?:an? )?[\w ]+ near the [\w ]+\?$", {"yes", "no"}),
    "are_there_any_near": (r"^Are there any [\w ]+ near the [\w ]+\?$", {"yes", "no"}),
    "left_of": (r"^(?:Is|Are) the [\w ]+ to the left of the [\w ]+\?$", {"yes", "no"}),
    "right_of": (r"^(?:Is|Are) the [\w ]+ to the right of the [\w ]+\?$", {"yes", "no"}),
    "above": (r"^(?:Is|Are) the [\w ]+ above the [\w ]+\?$", {"yes", "no"}),
    "below": (r"^(?:Is|Are) the [\w ]+ below the [\w ]+\?$", {"yes", "no"}),
    "in_front_of": (r"^(?:Is|Are) the [\w ]+ in front of the [\w ]+\?$", {"yes", "no"}),
    "behind": (r"^(?:Is|Are) the [\w ]+ behind the [\w ]+\?$", {"yes", "no"}),
}


@pytest.mark.parametrize("family", sorted(PHRASES))
def test_every_template_phrasing_is_present(questions, family):
    pattern, answers = PHRASES[family]
    hits = [q["answer"] for q in questions.values() if re.match(pattern, q["question"])]
    assert hits, family
    if answers:
        assert answers <= set(hits), (family, Counter(hits))


def test_share_of_other_question_kinds(cases):
    others = sum(1 for c in cases.values() if c["family"] is None)
    assert 0.2 <= others / len(cases) <= 0.4


def _mentions(q: dict, word: str) -> bool:
    return re.search(rf"\b{word}\b", q["question"].lower()) is not None


def _image_names(graphs, q) -> set[str]:
    return {o["name"] for o in graphs.get(q["imageId"], {"objects": {}})["objects"].values()}


def test_hard_cases_plural_only_and_uncountable_nouns(questions, graphs):
    for noun in ("jeans", "glasses", "scissors"):
        assert any(_mentions(q, noun) and noun in _image_names(graphs, q) for q in questions.values()), noun
    for noun in ("water", "grass"):
        assert any(_mentions(q, noun) and "semantic" in q for q in questions.values()), noun
    assert any(q["question"].startswith("What color are the jeans") for q in questions.values())


def test_hard_cases_plurals_synonyms_and_hypernyms(questions, graphs):
    assert any(re.match(r"^Are there any \w+s near", q["question"]) and q["answer"] == "yes"
               for q in questions.values())
    for word, graph_name in (("motorbikes?", "motorcycle"), ("sofa", "couch")):
        assert any(_mentions(q, word) and graph_name in _image_names(graphs, q)
                   and not {"motorbike", "sofa"} & _image_names(graphs, q) for q in questions.values()), word
    animal = [q for q in questions.values() if _mentions(q, "animals?")]
    assert any(q["answer"] == "yes" and "animal" not in _image_names(graphs, q) for q in animal)
    assert any(q["answer"] == "no" for q in animal)


def test_hard_cases_same_name_objects_referenced(questions, graphs):
    found = False
    for q in questions.values():
        g = graphs.get(q["imageId"])
        if g is None:
            continue
        counts = Counter(o["name"] for o in g["objects"].values())
        referenced = {g["objects"][oid]["name"] for oid in q.get("annotations", {}).get("question", {}).values()}
        found |= any(counts[n] >= 2 for n in referenced)
    assert found


def test_hard_cases_relative_clause_and_attribute_qualified(questions):
    texts = {q["question"] for q in questions.values()}
    assert "The bat the batter is holding has what color?" in texts
    assert "What color is the cat in front of the wall?" in texts
    qualified = [q for q in questions.values() if re.search(r"the white (wall|plate)\?$", q["question"])]
    assert qualified and all("filter color: white" in q["semanticStr"] for q in qualified)


def test_hard_cases_object_at_the_centre(questions, graphs):
    central = []
    for q in questions.values():
        if q.get("types", {}).get("detailed") != "positionQuery" or q["imageId"] not in graphs:
            continue
        g = graphs[q["imageId"]]
        for oid in q["annotations"]["question"].values():
            o = g["objects"][oid]
            if abs(o["x"] + o["w"] / 2 - g["width"] / 2) < 0.05 * g["width"]:
                central.append(q)
    assert central


def test_hard_cases_unannotated_prone_objects(questions):
    for word in ("shirt", "hand", "sky", "wall", "ground"):
        assert any(_mentions(q, word) for q in questions.values()), word


def test_hard_cases_no_program_no_graph_and_duplicates(questions, graphs):
    no_program = [q for q in questions.values() if "semantic" not in q]
    assert len(no_program) >= 3
    no_graph = [q for q in questions.values() if q["imageId"] not in graphs]
    assert len({q["imageId"] for q in no_graph}) >= 2
    normalised = Counter((q["imageId"], normalize_answer(q["question"])) for q in questions.values())
    assert any(n >= 2 for n in normalised.values())


def test_cases_file_agrees_with_questions(questions, cases):
    assert set(cases) == set(questions)
    families = Counter(c["family"] for c in cases.values())
    assert {"side", "color", "see_x_or_y", "x_near_y", "x_rel_y", None} <= set(families)
    for qid, q in questions.items():  # the family is the question's meaning, read off its program
        if "semantic" in q:
            assert cases[qid]["family"] == synth.template_family(q["types"]["detailed"], q["semantic"]), qid


# --------------------------------------------------------------------------- GQA's real phrasing


def _by_text(questions: dict, text: str) -> tuple[str, dict]:
    found = [(qid, q) for qid, q in questions.items() if q["question"] == text]
    assert len(found) == 1, text
    return found[0]


def _objects_named(graphs: dict, q: dict, name: str) -> list[str]:
    return [oid for oid, o in graphs[q["imageId"]]["objects"].items() if o["name"] == name]


def test_the_one_image_case(questions, graphs, cases):
    """A person left of a boy and a woman right of him, both in jeans, left/right between all pairs:
    "Is the person to the left of the boy wearing jeans?" asks whether the person wears jeans."""
    qid, q = _by_text(questions, "Is the person to the left of the boy wearing jeans?")
    assert q["answer"] == "yes" and "one_image_case" in cases[qid]["tags"] and cases[qid]["family"] is None
    assert re.fullmatch(r"select: boy \(\d+\)->relate: person,to the left of,s \(\d+\) \[0\]"
                        r"->verify rel: jeans,wearing,o \(\d+\) \[1\]", q["semanticStr"]), q["semanticStr"]
    g = graphs[q["imageId"]]
    objs = g["objects"]
    edges = _edges(g)
    (boy,), (person,), (woman,) = (_objects_named(graphs, q, n) for n in ("boy", "person", "woman"))
    jeans = _objects_named(graphs, q, "jeans")
    assert (person, "to the left of", boy) in edges and (woman, "to the right of", boy) in edges
    assert len(jeans) == 2 and all(any((p, "wearing", j) in edges for j in jeans) for p in (person, woman))
    centres = {oid: o["x"] + o["w"] / 2 for oid, o in objs.items()}
    for a in objs:  # left/right between every pair with distinct centres
        for b in objs:
            if centres[a] < centres[b]:
                assert (a, "to the left of", b) in edges and (b, "to the right of", a) in edges


# (question, answer, tag, program pattern): each over a scene where the plain reading would differ.
GQA_PHRASINGS = [
    ("Is the dog to the left of the man wearing a hat?", "yes", "participial_y",
     r"select: hat \(\d+\)->relate: man,wearing,s \(\d+\) \[0\]->verify rel: dog,to the left of,s \(\d+\) \[1\]"),
    ("Is the cup that is on the table to the left of the plate?", "yes", "relative_clause_x",
     r"select: table \(\d+\)->relate: cup,on,s \(\d+\) \[0\]->verify rel: plate,to the left of,o \(\d+\) \[1\]"),
    ("Is the man who is holding the umbrella to the right of the car?", "yes", "relative_clause_x",
     r"select: umbrella \(\d+\)->relate: man,holding,s \(\d+\) \[0\]->verify rel: car,to the right of,o"),
    ("What color is the shirt the boy is wearing?", "blue", "relative_clause_x",
     r"select: boy \(\d+\)->relate: shirt,wearing,o \(\d+\) \[0\]->query: color \[1\]"),
    ("What color is the man's hat?", "black", "possessive",
     r"select: man \(\d+\)->relate: hat,wearing,o \(\d+\) \[0\]->query: color \[1\]"),
    ("What color is the girl's hair?", "brown", "possessive",
     r"select: girl \(\d+\)->relate: hair,of,s \(\d+\) \[0\]->query: color \[1\]"),
    ("Is the man near the catcher wearing jeans?", "yes", "verify_rel_modifier",
     r"select: catcher \(\d+\)->relate: man,near,s \(\d+\) \[0\]->verify rel: jeans,wearing,o \(\d+\) \[1\]"),
    ("Is the umpire near the catcher wearing a helmet?", "no", "verify_rel_modifier",
     r"select: catcher \(\d+\)->relate: umpire,near,s \(\d+\) \[0\]->verify rel: helmet,wearing,o \(-\) \[1\]"),
    ("Is the person that is to the left of the bike wearing glasses?", "yes", "relative_clause_x",
     r"select: bike \(\d+\)->relate: person,to the left of,s \(\d+\) \[0\]->verify rel: glasses,wearing,o"),
    ("Is the man in this picture wearing a hat?", "yes", "in_this_picture",
     r"select: man \(\d+\)->verify rel: hat,wearing,o \(\d+\) \[0\]"),
    ("Is the catcher wearing a helmet?", "yes", "non_spatial_verify_rel",
     r"select: catcher \(\d+\)->verify rel: helmet,wearing,o \(\d+\) \[0\]"),
    ("Are there any dishes near the cup?", "yes", "hypernym",
     r"select: cup \(\d+\)->relate: dish,near,s \(\d+\) \[0\]->exist: \? \[1\]"),
    ("Are there any bowls or plates that are white?", "yes", "shared_modifier",
     r"select: bowl \(\d+\)->filter color: white \[0\]->exist: \? \[1\]->select: plate \(-\) "
     r"->filter color: white \[3\]->exist: \? \[4\]->or:  \[2, 5\]"),
]


@pytest.mark.parametrize("text,answer,tag,program", GQA_PHRASINGS, ids=[t[0] for t in GQA_PHRASINGS])
def test_gqa_phrasings_with_gqas_programs(questions, graphs, cases, text, answer, tag, program):
    qid, q = _by_text(questions, text)
    assert q["answer"] == answer and tag in cases[qid]["tags"]
    assert re.fullmatch(program + r".*", q["semanticStr"]), q["semanticStr"]
    assert execute(q, graphs[q["imageId"]]) == answer
    # Every object the program names by id is annotated where the question mentions it.
    named = set(re.findall(r"\((\d+)\)", q["semanticStr"]))
    assert named <= set(q["annotations"]["question"].values()) | set(q["annotations"]["fullAnswer"].values())


def test_plain_readings_would_be_wrong(questions, graphs, cases):
    """Where tagged plain_reading_wrong, dropping the modifier gives another object (or a word the
    graph lacks): the head noun names several objects, or the asked relation differs from the
    modifier's (a verify-rel question that reads like "Is the X near the Y?")."""
    tagged = [(qid, q) for qid, q in questions.items() if "plain_reading_wrong" in cases[qid]["tags"]]
    assert len(tagged) >= 8
    for qid, q in tagged:
        sem = q["semantic"]
        assert sem[1]["operation"] == "relate", qid
        head = sem[1]["argument"].split(",")[0]
        last_rel = sem[-1]["argument"].split(",")[1] if sem[-1]["operation"] == "verify rel" else None
        assert len(_objects_named(graphs, q, head)) > 1 or last_rel in ("wearing", "holding"), qid


def test_noise_in_the_hand_designed_scenes(questions, graphs, cases):
    qid, q = _by_text(questions, "Is the cup behind the plate?")
    edges = _edges(graphs[q["imageId"]])
    (cup,), (plate,) = _objects_named(graphs, q, "cup"), _objects_named(graphs, q, "plate")
    assert {(cup, "behind", plate), (cup, "in front of", plate)} <= edges and "contradictory" in cases[qid]["tags"]
    assert q["answer"] == "yes"  # under the program's ids, as GQA answers it
    dup = [(qid, q) for qid, q in questions.items() if "duplicate_object" in cases[qid]["tags"]]
    assert dup
    for qid, q in dup:
        objs = graphs[q["imageId"]]["objects"]
        pairs = [(a, b) for a in objs for b in objs if a < b and objs[a]["name"] == objs[b]["name"]]
        assert any(all(abs(objs[a][k] - objs[b][k]) <= 5 for k in ("x", "y", "w", "h")) for a, b in pairs), qid
    bare = [q for q in questions.values() if "semantic" not in q and "annotations" not in q]
    assert len(bare) >= 4 and any(q["question"].endswith("wearing jeans?") for q in bare)


def test_build_script_regenerates_the_committed_sample(tmp_path):
    """benchmarks/make_sample.py is deterministic and the committed files are its output."""
    if not (REPO / "benchmarks" / "make_sample.py").is_file():
        pytest.skip("benchmarks/make_sample.py absent (installed package)")
    yaml = pytest.importorskip("yaml")
    spec = importlib.util.spec_from_file_location("make_sample", REPO / "benchmarks" / "make_sample.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from contrastgen.jsonio import dumps

    built = mod.build(yaml.safe_load((REPO / "benchmarks" / "sample_spec.yaml").read_text()), 13)
    for name, obj in zip(("questions.json", "scene_graphs.json", "cases.json"), built, strict=True):
        assert dumps(obj, indent=True) == (SAMPLE / name).read_bytes(), name


def test_program_shapes_match_real_gqa():
    """Every (type, operation sequence) we write for a type GQA also has, GQA itself uses."""
    real_path = SHARED / "data" / "gqa" / "val_balanced_questions_sample.json"
    if not real_path.is_file():
        pytest.skip("../shared GQA sample absent")
    real = json.loads(real_path.read_text())
    def shape(q: dict) -> tuple[str, ...]:
        # Filters ("the white plate") may qualify any select in GQA; compare the skeleton.
        return tuple(s["operation"] for s in q["semantic"] if not s["operation"].startswith("filter"))

    def unmodified(ops: tuple[str, ...], q: dict) -> tuple[str, ...]:
        # A modifier on the first reference ("the man near the catcher") is GQA's select -> relate
        # chain, which composes with every shape (relO, directOf, existRelS and relChooser show it
        # in the real sample); compare the shape without it.
        if len(ops) > 2 and ops[:2] == ("select", "relate") and not q["semantic"][1]["argument"].startswith("_,"):
            return ("select",) + ops[2:]
        return ops

    shapes: dict[str, set] = {}
    for q in real.values():
        shapes.setdefault(q["types"]["detailed"], set()).add(shape(q))
    ours = json.loads((SAMPLE / "questions.json").read_text())
    compared = 0
    for qid, q in ours.items():
        t = q["types"]["detailed"]
        if "semantic" not in q or t not in shapes:
            continue
        assert shape(q) in shapes[t] or unmodified(shape(q), q) in shapes[t], (qid, t, shape(q))
        compared += 1
    assert compared >= 150
