"""The viewer's data: words for the evidence, the changed span, the filter rows, the site files, the
inputs' errors, and the mounts of `contrastgen view` and `contrastgen serve --viewer`."""

from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from contrastgen.cli import cli
from contrastgen.errors import InputError
from contrastgen.viewer.app import viewer_app
from contrastgen.viewer.bundle import ViewerInputs, bundle, direction
from contrastgen.viewer.site import read_inputs, write_site
from contrastgen.viewer.words import changed_span, evidence_objects, fact_in_words, original_objects

NAMES = {"1": "man", "2": "car"}


@pytest.mark.parametrize("fact,words", [
    ({"fact": "object", "id": "1", "name": "man"}, "man (1) is in the graph"),
    ({"fact": "object", "id": "2", "name": "car", "attributes": ["red"]}, "car (2) is in the graph, red"),
    ({"fact": "relation", "subject": "1", "name": "near", "object": "2"}, "man (1) is near car (2)"),
    ({"fact": "absent", "names": ["wall", "walls"]}, "nothing in the graph is called wall or walls"),
    ({"fact": "not_related", "names": ["dog"], "rel": "near", "object": "2", "symmetric": True},
     "no dog is near car (2) (either way)"),
    ({"fact": "side", "id": "2", "x": 10, "w": 20, "image_width": 640, "center": 20.0, "side": "left"},
     "car (2) has its centre at x = 20.0 of 640: on the left"),
    ({"fact": "color", "id": "2", "colors": ["red"]}, "car (2) has the colour red"),
    ({"fact": "part", "object": "2", "name": "front_left_door", "attributes": ["small", "cyan"]},
     "car (2) has a part front left door: small, cyan"),
    ({"fact": "object_count", "count": 7}, "the scene has 7 objects, and lists them all"),
])
def test_each_fact_kind_reads_as_a_sentence(fact, words):
    assert fact_in_words(fact, NAMES) == words


def test_the_original_objects_are_what_its_references_name():
    """The ids of the program's reference steps, read as the generator reads them, after the
    grounded slots; a filter's "not(red)" names a value, not an object, and "(-)" names none."""
    record = {"grounding": {"via": "program", "x": ["7"]}, "semantic": [
        {"operation": "select", "argument": "snow (823324)", "dependencies": []},
        {"operation": "filter color", "argument": "not(red)", "dependencies": [0]},
        {"operation": "relate", "argument": "man,wearing,o (12, 13)", "dependencies": [1]},
        {"operation": "choose  rel", "argument": "dog,left|right,s (-)", "dependencies": [2]},
        {"operation": "verify rel", "argument": "car,near,s (7)", "dependencies": [2]}]}
    assert original_objects(record) == ["7", "823324", "12", "13"]


def test_an_only_fact_says_the_word_the_question_uses():
    fact = {"fact": "only", "names": ["automobile", "car", "cars"], "ids": ["2"]}
    assert fact_in_words(fact, NAMES, said="car") == "the only car in the graph (under any of its 3 names): car (2)"
    assert evidence_objects({"facts": [fact, {"fact": "relation", "subject": "1", "object": "2"}],
                             "query": {"op": "side", "object": "3"}}) == ["2", "1", "3"]


@pytest.mark.parametrize("a,b,span", [
    ("Is the man near the car?", "Is the woman near the car?", (7, 12)),
    ("What color is the bus?", "What color is the fire truck?", (18, 28)),
    ("Is there a lamp?", "Is there an umbrella?", (9, 20)),
    ("Same words?", "same words?", (0, 0)),
])
def test_the_changed_words_are_located(a, b, span):
    assert changed_span(a, b) == span


def test_answer_directions():
    assert [direction("yes", "no", "contrast"), direction("No", "yes", "contrast"),
            direction("red", "blue", "contrast"), direction("red", "red", "invariance")] == [
        "yes→no", "no→yes", "other", "kept"]


def _record(qid, template, kinds, answers=("yes", "no")):
    return {"question_id": qid, "image_id": "img", "question": f"Is it {qid}?", "answer": answers[0],
            "template": template, "perturbations": [
                {"question_id": f"{qid}_{i}", "question": f"Is it not {qid}?", "answer": answers[1], "rank": i,
                 "kind": "contrast", "change": {"kind": k, "slot": "x", "from": "a", "to": "b"},
                 "evidence": {"facts": [{"fact": "object", "id": "1", "name": "man"}]}}
                for i, k in enumerate(kinds, 1)]}


def test_rows_carry_the_filters_bits_and_pages_split_the_sets():
    records = [_record("a", "t1", ["object"]), _record("b", "t2", ["relation", "attribute"])]
    preds = {"m": {"a": "yes", "a_1": "yes", "b": "yes", "b_1": "no", "b_2": "no"}}
    manifest, rows, pages = bundle(ViewerInputs(records=records, predictions=preds))
    assert manifest["sets"] == 2 and manifest["models"] == ["m"] and manifest["filters"]["k"] == [1, 2]
    assert rows[0][:7] == [0, 0, 1, 0b001, 0b0001, 1, 0]  # model m fails set a's perturbation
    assert rows[1][:7] == [1, 0, 2, 0b110, 0b0001, 0, 0]
    assert rows[1][8] == "Is it b?"
    assert [s["id"] for p in pages for s in p["sets"]] == ["a", "b"]


def test_a_site_is_written_whole(tmp_path):
    site = tmp_path / "site"
    index = write_site(ViewerInputs(records=[_record("a", "t1", ["object"])]), site)
    assert index == site / "index.html"
    assert sorted(p.name for p in site.iterdir()) == ["data", "index.html", "viewer.css", "viewer.js"]
    manifest = (site / "data" / "manifest.js").read_text()
    assert manifest.startswith("cgData('manifest',") and manifest.rstrip().endswith(");")
    assert "https://" not in (site / "index.html").read_text() + (site / "viewer.js").read_text()  # no CDN


def test_bad_inputs_are_named(tmp_path, sample_output):
    with pytest.raises(InputError, match="no_such"):
        read_inputs(tmp_path / "no_such")
    bad = tmp_path / "out"
    bad.mkdir()
    (bad / "contrast_sets.jsonl").write_text('{"question_id": "1"\n')
    with pytest.raises(InputError, match="contrast_sets.jsonl"):
        read_inputs(bad)
    review = tmp_path / "review.jsonl"
    review.write_bytes(orjson.dumps({"token": "x"}) + b"\n")
    with pytest.raises(InputError, match="line 1"):
        read_inputs(sample_output["out"], review=review)
    result = CliRunner().invoke(cli, ["view", str(sample_output["out"]), "--predictions", "nopath",
                                      "--static", str(tmp_path / "s")])
    assert result.exit_code != 0 and "NAME=PATH" in result.output
    assert not (tmp_path / "s").exists()


def test_the_served_viewer_has_its_site_and_images(tmp_path, sample_output):
    result = CliRunner().invoke(cli, ["view", str(sample_output["out"]), "--static", str(tmp_path / "site"),
                                      "--images", str(sample_output["images"])])
    assert result.exit_code == 0, result.output
    client = TestClient(viewer_app(tmp_path / "site", sample_output["images"]))
    assert "<title>contrastgen viewer</title>" in client.get("/").text
    assert client.get("/data/manifest.js").text.startswith("cgData('manifest'")
    image = next(sample_output["images"].iterdir())
    assert client.get(f"/images/{image.name}").content == image.read_bytes()
    assert client.get("/images/missing.jpg").status_code == 404


def test_serve_mounts_the_viewer(tmp_path, sample_output):
    from contrastgen.api.app import create_app
    from contrastgen.api.settings import Settings

    site = tmp_path / "site"
    write_site(read_inputs(sample_output["out"], images="images"), site)
    app = create_app(Settings(viewer_site=str(site), viewer_images=str(sample_output["images"])))
    with TestClient(app) as client:
        assert "contrastgen viewer" in client.get("/viewer/").text
        image = next(sample_output["images"].iterdir())
        assert client.get(f"/viewer/images/{image.name}").status_code == 200
        assert client.get("/healthz").status_code == 200  # the service's own routes still answer


def test_the_crowds_review_list_marks_its_sets(tmp_path):
    records = [_record("a", "t1", ["object"]), _record("b", "t1", ["object"])]
    _, rows, pages = bundle(ViewerInputs(records=records, review_ids={"b_1"}))
    assert [r[6] for r in rows] == [0, 1]  # set b: one of its perturbations was disagreed on
    assert [s["disagreed"] for s in pages[0]["sets"]] == [False, True]
