"""Export: sampling, stratification, blinding, layout/CSV contract, determinism, bad input."""

from __future__ import annotations

import csv
import json
import random
import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from contrastgen.mturk import export_hits
from contrastgen.mturk.layout import layout_variables
from contrastgen.mturk.sampling import allocate, sample_pairs
from mturk_helpers import make_records, record

from contrastgen.cli import cli
from contrastgen.errors import InputError

BASE = "https://images.example.org/gqa"


def _export(tmp_path: Path, records, *, name="hits", **kw):
    opts = {"images_base_url": BASE, "sample": 12, "seed": 7, "assignments": 3, "items_per_hit": 5}
    opts.update(kw)
    out = tmp_path / name
    summary = export_hits(records, out_dir=out, **opts)
    return out, summary


def _rows(out: Path) -> list[dict[str, str]]:
    with (out / "upload" / "batch_input.csv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


# --- sampling -------------------------------------------------------------------------------

def test_allocate_is_proportional_with_one_per_stratum():
    # 10 units over sizes 60/30/10: one each, then 7 split 60:30:10 -> 4.2, 2.1, 0.7
    # floors 4, 2, 0 (6), the one left goes to the largest remainder (0.7) -> 5, 3, 2
    assert allocate({"a": 60, "b": 30, "c": 10}, 10) == {"a": 5, "b": 3, "c": 2}
    # fewer units than strata: no minimum, pure largest remainder
    assert allocate({"a": 60, "b": 30, "c": 10}, 2) == {"a": 1, "b": 1, "c": 0}
    # a stratum never gets more than it has; the excess goes elsewhere
    assert allocate({"a": 2, "b": 100}, 50) == {"a": 2, "b": 48}


def test_sample_is_stratified_by_template_with_distinct_images():
    records = make_records({"on_which_side_is_the_x": 60, "what_color_is_the_x": 30,
                            "are_there_x_near_the_y": 10})
    pairs = sample_pairs(records, 10, random.Random(0))
    per_template = Counter(p.template for p in pairs)
    assert per_template == {"on_which_side_is_the_x": 5, "what_color_is_the_x": 3, "are_there_x_near_the_y": 2}
    assert len({p.image_id for p in pairs}) == 10
    for p in pairs:
        assert p.record["image_id"] == p.image_id and p.record["template"] == p.template
        assert p.perturbation in p.record["perturbations"]


def test_sample_counts_shared_images_once_and_refills_shortfall():
    # both templates have the same 3 images only: one template cannot get its quota
    records = make_records({"on_which_side_is_the_x": 3, "what_color_is_the_x": 3}, shared_images=3)
    pairs = sample_pairs(records, 3, random.Random(1))
    assert sorted(p.image_id for p in pairs) == ["9000", "9001", "9002"]
    with pytest.raises(InputError, match="only 3 images"):
        sample_pairs(records, 4, random.Random(1))


def test_sample_chooses_among_perturbations():
    records = [record(f"q{i}", str(i), "are_there_x_near_the_y", n_perturbations=5) for i in range(40)]
    ranks = Counter(p.perturbation["rank"] for p in sample_pairs(records, 40, random.Random(3)))
    assert len(ranks) >= 4  # not always rank 1


# --- files and the layout contract -----------------------------------------------------------

def test_export_writes_upload_files_and_private_manifest(tmp_path):
    records = make_records({"on_which_side_is_the_x": 10, "what_color_is_the_x": 10})
    out, summary = _export(tmp_path, records)
    upload = sorted(p.name for p in (out / "upload").iterdir())
    assert upload == ["api_hits.jsonl", "batch_input.csv", "hit_layout.html", "hit_properties.json", "question.xml"]
    assert (out / "manifest.json").is_file()
    rows = _rows(out)
    assert summary.n_images == 12 and summary.n_hits == len(rows) == 5  # 24 items / 5 per HIT
    props = json.loads((out / "upload" / "hit_properties.json").read_text())
    assert props["MaxAssignments"] == 3 and props["Reward"] == "0.10"
    assert summary.cost_estimate == "1.50"


def test_csv_columns_are_exactly_the_layout_variables(tmp_path):
    out, _ = _export(tmp_path, make_records({"on_which_side_is_the_x": 20}), items_per_hit=7)
    layout = (out / "upload" / "hit_layout.html").read_text()
    with (out / "upload" / "batch_input.csv").open(newline="") as fh:
        header = next(csv.reader(fh))
    assert sorted(header) == sorted(layout_variables(layout))
    assert len(header) == 1 + 3 * 7
    # the layout uses crowd-html-elements: an answer box and a cannot-tell box per item
    assert 'src="https://assets.crowd.aws/crowd-html-elements.js"' in layout
    assert layout.count("<crowd-input ") == 7 and layout.count("<crowd-checkbox ") == 7
    assert "<crowd-form>" in layout
    assert all(f'name="item{i}_answer"' in layout for i in range(1, 8))


def test_question_xml_is_an_htmlquestion_wrapping_the_layout(tmp_path):
    out, _ = _export(tmp_path, make_records({"on_which_side_is_the_x": 20}))
    root = ET.fromstring((out / "upload" / "question.xml").read_bytes())
    assert root.tag.endswith("HTMLQuestion")
    ns = {"q": root.tag[1:].split("}")[0]}
    content = root.find("q:HTMLContent", ns).text
    assert "${item1_question}" in content and "<crowd-form>" in content
    # the per-HIT API questions are the same layout with the row filled in
    rows = _rows(out)
    api = [json.loads(line) for line in (out / "upload" / "api_hits.jsonl").read_text().splitlines()]
    assert [a["RequesterAnnotation"] for a in api] == [r["hit_token"] for r in rows]
    filled = ET.fromstring(api[0]["Question"].encode()).find("q:HTMLContent", ns).text
    assert "${" not in filled and rows[0]["item1_question"] in filled


def test_html_special_characters_are_escaped(tmp_path):
    records = make_records({"on_which_side_is_the_x": 12})
    records[0]["question"] = 'Is the <script>alert("x")</script> & "fence" left?'
    for r in records:
        r["image_id"] = r["image_id"]
    out, _ = _export(tmp_path, records, sample=12)
    api = (out / "upload" / "api_hits.jsonl").read_text()
    assert "<script>alert" not in api
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;fence&quot;" in api


# --- blinding ---------------------------------------------------------------------------------

def test_rows_carry_nothing_that_tells_an_items_role(tmp_path):
    records = make_records({"on_which_side_is_the_x": 30, "what_color_is_the_x": 30})
    out, _ = _export(tmp_path, records, sample=40, items_per_hit=10)
    rows = _rows(out)
    man = _manifest(out)
    qids = {r["question_id"] for r in records} | {p["question_id"] for r in records for p in r["perturbations"]}
    text = (out / "upload" / "batch_input.csv").read_text() + (out / "upload" / "api_hits.jsonl").read_text()
    for qid in qids:
        assert qid not in text
    for word in ("original", "perturb", "rank", "_c1", "gold", "evidence"):
        assert word not in text.lower()
    tokens = [row[f"item{s}_token"] for row in rows for s in range(1, 11)]
    assert all(re.fullmatch(r"[0-9a-f]{12}", t) for t in tokens) and len(set(tokens)) == len(tokens)
    # every question is typeset the same way, although the fixtures' perturbations are not
    questions = [row[f"item{s}_question"] for row in rows for s in range(1, 11)]
    assert all(re.fullmatch(r"[A-Z][^?]*\?", q) for q in questions)
    # roles are spread over slots and over the batch, not in blocks
    roles = {tok: it["role"] for tok, it in man["items"].items()}
    slot1 = Counter(roles[row["item1_token"]] for row in rows)
    assert slot1["original"] > 0 and slot1["perturbed"] > 0
    order = [roles[t] for t in tokens if roles[t] != "padding"]
    first_half = Counter(order[: len(order) // 2])
    assert 0.3 < first_half["original"] / (len(order) // 2) < 0.7
    # token order carries no role: sorted tokens alternate roles as often as chance would
    by_token = [roles[t] for t in sorted(tokens) if roles[t] != "padding"]
    switches = sum(a != b for a, b in zip(by_token, by_token[1:], strict=False))
    assert switches > len(by_token) / 4


def test_an_images_two_questions_never_share_a_hit(tmp_path):
    out, _ = _export(tmp_path, make_records({"on_which_side_is_the_x": 50}), sample=30, items_per_hit=8)
    man = _manifest(out)
    for hit in man["hits"]:
        pair_ids = [man["items"][t]["pair_id"] for t in hit["items"]]
        assert len(pair_ids) == len(set(pair_ids))


def test_manifest_maps_every_item_back(tmp_path):
    records = make_records({"on_which_side_is_the_x": 20})
    by_qid = {r["question_id"]: r for r in records}
    out, _ = _export(tmp_path, records, sample=10)
    man = _manifest(out)
    scored = [it for it in man["items"].values() if it["role"] in ("original", "perturbed")]
    assert Counter(it["role"] for it in scored) == {"original": 10, "perturbed": 10}
    for it in scored:
        rec = by_qid[it["pair_id"]]
        assert it["image_url"] == f"{BASE}/{rec['image_id']}.jpg"
        if it["role"] == "original":
            assert it["question_id"] == rec["question_id"] and it["answers"] == [rec["answer"]]
        else:
            pert = next(p for p in rec["perturbations"] if p["question_id"] == it["question_id"])
            assert it["answers"] == [pert["answer"]] and it["evidence"] == pert["evidence"]
            assert it["rank"] == pert["rank"]


def test_gold_items_are_mixed_into_every_hit(tmp_path):
    gold = [{"id": f"g{i}", "image_id": f"77{i}", "question": f"What color is the sky {i}?", "answer": "Blue"}
            for i in range(3)]
    out, summary = _export(tmp_path, make_records({"on_which_side_is_the_x": 20}), sample=12,
                           items_per_hit=5, gold=gold, gold_per_hit=1)
    man = _manifest(out)
    for hit in man["hits"]:
        roles = Counter(man["items"][t]["role"] for t in hit["items"])
        assert roles["gold"] >= 1 and roles["padding"] == 0
    golds = [it for it in man["items"].values() if it["role"] == "gold"]
    assert {g["answers"][0] for g in golds} == {"blue"}
    assert summary.n_gold_slots == len(golds)
    assert len(man["hits"]) == 6  # 24 items at 4 per HIT


def test_same_seed_same_bytes_other_seed_other_batch(tmp_path):
    records = make_records({"on_which_side_is_the_x": 30, "what_color_is_the_x": 12})
    a, _ = _export(tmp_path, records, name="a", seed=3)
    b, _ = _export(tmp_path, list(reversed(records)), name="b", seed=3)  # input order must not matter
    c, _ = _export(tmp_path, records, name="c", seed=4)
    files = ["manifest.json", "upload/batch_input.csv", "upload/hit_layout.html", "upload/question.xml",
             "upload/api_hits.jsonl", "upload/hit_properties.json"]
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    assert (a / "upload/batch_input.csv").read_bytes() != (c / "upload/batch_input.csv").read_bytes()


# --- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize(("content", "message"), [
    ("", "empty"),
    ('{"question_id": "1"\n', "malformed JSON"),
    ('{"question_id": "1", "image_id": "2"}\n', "missing field 'template'"),
    (json.dumps({**record("q1", "1", "on_which_side_is_the_x"), "perturbations": []}) + "\n",
     "non-empty list"),
])
def test_cli_rejects_bad_contrast_sets_with_exit_code_2(tmp_path, content, message):
    d = tmp_path / "gen"
    d.mkdir()
    (d / "contrast_sets.jsonl").write_text(content)
    res = CliRunner().invoke(cli, ["mturk", "export", "--contrast", str(d), "--images-base-url", BASE,
                                   "--sample", "1", "--out", str(tmp_path / "hits")])
    assert res.exit_code == 2, res.output
    assert message in res.output and "contrast_sets.jsonl" in res.output
    assert not (tmp_path / "hits").exists()


@pytest.mark.parametrize(("url", "why"), [
    ('https://img.example/x" onerror="alert(1)', "characters a URL cannot"),
    ("https://img.example/a b", "characters a URL cannot"),
    ("https://img.example/<script>", "characters a URL cannot"),
    ("https:///images", "names no host"),
    ("https://img.example/i?sig=1", "no ? or #"),
    ("javascript:alert(1)", "https"),
    ("https://[::1/x", "https"),
])
def test_a_base_url_that_is_no_url_is_refused_before_it_reaches_a_page_or_a_csv(tmp_path, url, why):
    records = make_records({"on_which_side_is_the_x": 5})
    with pytest.raises(InputError, match="--images-base-url") as err:
        _export(tmp_path, records, images_base_url=url, sample=2)
    assert why in str(err.value)
    assert not (tmp_path / "hits").exists()


def test_bad_options_are_errors(tmp_path):
    records = make_records({"on_which_side_is_the_x": 5})
    with pytest.raises(InputError, match="only 5 images"):
        _export(tmp_path, records, sample=6)
    with pytest.raises(InputError, match="https"):
        _export(tmp_path, records, images_base_url="ftp://x", sample=2)
    with pytest.raises(InputError, match="reward"):
        _export(tmp_path, records, reward="abc", sample=2)
    with pytest.raises(InputError, match="gold"):
        _export(tmp_path, records, sample=2, gold=[{"image_id": "1", "question": "Q?"}])
    assert not (tmp_path / "hits").exists()


def test_cli_export_with_gold_file(tmp_path):
    d = tmp_path / "gen"
    d.mkdir()
    (d / "contrast_sets.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in make_records({"what_color_is_the_x": 15})))
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "g1", "image_id": "5", "question": "Is it day?", "answers": ["yes", "Yes."]}) + "\n")
    res = CliRunner().invoke(cli, ["mturk", "export", "--contrast", str(d), "--images-base-url", BASE,
                                   "--sample", "10", "--seed", "1", "--items-per-hit", "6", "--gold", str(gold),
                                   "--out", str(tmp_path / "hits")])
    assert res.exit_code == 0, res.output
    man = _manifest(tmp_path / "hits")
    assert any(it["role"] == "gold" and it["answers"] == ["yes"] for it in man["items"].values())
    bad = tmp_path / "bad_gold.json"
    bad.write_text(json.dumps([{"image_id": "5", "question": "Q?", "answers": []}]))
    res = CliRunner().invoke(cli, ["mturk", "export", "--contrast", str(d), "--images-base-url", BASE,
                                   "--sample", "10", "--gold", str(bad), "--out", str(tmp_path / "h2")])
    assert res.exit_code == 2 and "bad_gold.json" in res.output and "gold item 1" in res.output


@pytest.mark.parametrize(("name", "second"), [
    ("gold.json", {"image_id": "5", "question": "Is it day?", "answer": "yes"}),
    ("gold.json", {"image_id": 5, "question": "is it  DAY?", "answer": "no"}),
    ("gold.jsonl", {"image_id": "5", "question": "Is it day?", "answers": ["yes"]}),
    ("gold.json", {"id": "g1", "image_id": "6", "question": "Is it night?", "answer": "no"}),
])
def test_a_gold_item_given_twice_is_refused_naming_the_file_and_the_item(tmp_path, name, second):
    """The same question on the same image, listed twice with or without an id (an item without one
    is named by its place, so only what a worker sees tells the copies apart), or one id twice."""
    d = tmp_path / "gen"
    d.mkdir()
    (d / "contrast_sets.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in make_records({"what_color_is_the_x": 15})))
    items = [{"id": "g1", "image_id": "5", "question": "Is it day?", "answer": "yes"},
             {"image_id": "7", "question": "Is it day?", "answer": "no"}, second]
    gold = tmp_path / name
    gold.write_text("".join(json.dumps(i) + "\n" for i in items) if name.endswith("l") else json.dumps(items))
    res = CliRunner().invoke(cli, ["mturk", "export", "--contrast", str(d), "--images-base-url", BASE,
                                   "--sample", "10", "--gold", str(gold), "--out", str(tmp_path / "hits")])
    assert res.exit_code == 2, res.output
    error = res.output.strip().splitlines()[-1]
    third = "line 3" if name.endswith("l") else "gold item 3"
    assert str(gold) in error and f"record {third}" in error and "given twice" in error, error
    assert "Traceback" not in res.output and not (tmp_path / "hits").exists()
    with pytest.raises(InputError, match="given twice"):
        _export(tmp_path, make_records({"what_color_is_the_x": 15}), name="lib", gold=items)


def test_preview_of_a_directory_that_is_not_an_export_is_an_input_error(tmp_path):
    res = CliRunner().invoke(cli, ["mturk", "preview", str(tmp_path)])
    assert res.exit_code == 2 and "hit_layout.html" in res.output


def test_preview_shows_the_first_hits_rows(tmp_path):
    from contrastgen.mturk import render_preview

    out, _ = _export(tmp_path, make_records({"on_which_side_is_the_x": 20}), sample=15, items_per_hit=5)
    page = render_preview(out, n_hits=2).read_text()
    rows = _rows(out)
    assert page.count("<iframe") == 2
    assert rows[0]["hit_token"] in page and rows[1]["hit_token"] in page and rows[2]["hit_token"] not in page
    # the frames hold the layout filled with the row's (escaped) values
    assert html_escape(html_escape(rows[0]["item1_question"])) in page
    assert "crowd-html-elements.js" not in page


def html_escape(text: str) -> str:
    import html

    return html.escape(text, quote=True)
