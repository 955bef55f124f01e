"""Ingest: hand-computed accuracy and kappa on a synthetic results CSV in MTurk's layout;
rejected assignments, gold flagging, both answer encodings, and malformed files."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from contrastgen.mturk import export_hits, ingest_results
from mturk_helpers import record, write_results

from contrastgen.cli import cli
from contrastgen.errors import InputError

WORKERS = ["W1", "W2", "W3"]
# Each item's three ratings (W1, W2, W3); "?" ticks "cannot tell". Computed answers: p1, p2
# yes/no; p3 left/right; p4 red/blue (original/perturbed).
ANSWERS = {
    ("p1", "original"): ["Yes.", "yes", "YES"],
    ("p1", "perturbed"): ["no", "no", "yes"],
    ("p2", "original"): ["yes", "no", "yes"],
    ("p2", "perturbed"): ["yes", "yes", "no"],
    ("p3", "original"): [" Left ", "the left", "left"],
    ("p3", "perturbed"): ["right", "?", "?"],
    ("p4", "original"): ["blue", "blue", "red"],
    ("p4", "perturbed"): ["blue", "blue", "blue"],
}


def _records():
    return [record("p1", "1", "are_there_x_near_the_y"), record("p2", "2", "are_there_x_near_the_y"),
            record("p3", "3", "on_which_side_is_the_x"), record("p4", "4", "what_color_is_the_x")]


@pytest.fixture()
def batch(tmp_path):
    out = tmp_path / "hits"
    export_hits(_records(), images_base_url="https://img.example.org", sample=4, seed=11, assignments=3,
                items_per_hit=4, out_dir=out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["hits"]) == 2
    return out, manifest


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_hand_computed_accuracy_and_agreement(batch, tmp_path):
    out, manifest = batch
    results = tmp_path / "Batch_1_batch_results.csv"
    # a fourth worker's assignments are rejected: they must not count
    answers = {k: v + ["purple"] for k, v in ANSWERS.items()}
    write_results(results, manifest, answers, workers=WORKERS + ["W4"],
                  statuses={"ASSIGN00003": "Rejected", "ASSIGN00103": "Rejected"})
    rep = ingest_results(out / "manifest.json", [results], out=tmp_path / "report")

    assert rep["assignments"] == {"kept": 6, "rejected_dropped": 2}
    orig, pert = rep["accuracy"]["original"], rep["accuracy"]["perturbed"]
    # majorities: originals p1 yes, p2 yes, p3 left correct; p4 blue wrong -> 3/4
    assert orig["items"] == 4 and orig["majority_accuracy"] == 0.75
    # perturbed: p1 no, p4 blue correct; p2 yes and p3 "cannot tell" wrong -> 2/4
    assert pert["items"] == 4 and pert["majority_accuracy"] == 0.5
    # mean per-item share of correct ratings: (3+2+3+1)/12 and (2+1+1+3)/12
    assert orig["rating_accuracy"] == pytest.approx(9 / 12, abs=1e-6)
    assert pert["rating_accuracy"] == pytest.approx(7 / 12, abs=1e-6)
    assert orig["majority_accuracy_ci95"] == pytest.approx(list(_wilson(3, 4)), abs=1e-6)
    assert pert["majority_accuracy_ci95"] == pytest.approx(list(_wilson(2, 4)), abs=1e-6)
    assert rep["gap"]["pairs"] == 4 and rep["gap"]["original_minus_perturbed"] == 0.25

    ag = rep["agreement"]["all"]
    # Fleiss: P-bar = 14/24, P_e = 120/576 over categories yes 8, no 4, left 3, right 1,
    # cannot tell 2, blue 5, red 1 (24 ratings) -> kappa = 0.375 / (456/576) = 9/19
    assert ag["fleiss_items"] == 8 and ag["fleiss_raters"] == 3
    assert ag["fleiss_kappa"] == pytest.approx(9 / 19, abs=1e-6)
    # Cohen, first vs second rating: p_o = 6/8, p_e = 13/64 -> kappa = 35/51
    assert ag["cohen_items"] == 8
    assert ag["cohen_kappa"] == pytest.approx(35 / 51, abs=1e-6)
    assert ag["krippendorff_alpha"] is not None and 0 < ag["krippendorff_alpha"] < 1

    per_t = rep["per_template"]["are_there_x_near_the_y"]
    assert per_t["original"]["majority_accuracy"] == 1.0 and per_t["perturbed"]["majority_accuracy"] == 0.5

    review = {(e["pair_id"], e["role"]): e for e in rep["review"]}
    assert set(review) == {("p2", "perturbed"), ("p3", "perturbed"), ("p4", "original")}
    p2 = review[("p2", "perturbed")]
    assert p2["majority"] == "yes" and p2["computed_answer"] == "no" and p2["answers"] == {"no": 1, "yes": 2}
    assert p2["evidence"]["facts"] == [{"fact": "absent", "names": ["wall"]}]
    assert p2["partner"]["question"] == "Is there a fence near the puddle in image 2?"
    assert review[("p3", "perturbed")]["majority"] == "cannot tell"

    files = sorted(p.name for p in (tmp_path / "report").iterdir())
    assert files == ["items.jsonl", "report.json", "report.md", "review.jsonl", "workers.jsonl"]
    md = (tmp_path / "report" / "report.md").read_text()
    assert "| perturbed | 4 | 50.0% |" in md and "0.474" in md and "0.686" in md
    review_lines = [json.loads(x) for x in (tmp_path / "report" / "review.jsonl").read_text().splitlines()]
    assert {e["question_id"] for e in review_lines if e["role"] == "perturbed"} == {"p2_c1", "p3_c1"}


def test_report_is_deterministic(batch, tmp_path):
    out, manifest = batch
    results = tmp_path / "r.csv"
    write_results(results, manifest, ANSWERS, workers=WORKERS)
    ingest_results(out / "manifest.json", [results], out=tmp_path / "a")
    ingest_results(out / "manifest.json", [results], out=tmp_path / "b")
    for name in ("report.json", "report.md", "items.jsonl", "review.jsonl", "workers.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_task_answers_json_column_gives_the_same_numbers(batch, tmp_path):
    out, manifest = batch
    flat, js = tmp_path / "flat.csv", tmp_path / "json.csv"
    write_results(flat, manifest, ANSWERS, workers=WORKERS)
    write_results(js, manifest, ANSWERS, workers=WORKERS, json_answers=True)
    a = ingest_results(out / "manifest.json", [flat])
    b = ingest_results(out / "manifest.json", [js])
    assert a["accuracy"] == b["accuracy"] and a["agreement"] == b["agreement"]


def test_two_results_files_and_two_annotators(batch, tmp_path):
    """Two workers per item, split over two downloads: Cohen's kappa is the two annotators'."""
    out, manifest = batch
    two = {k: v[:2] for k, v in ANSWERS.items()}
    r1, r2 = tmp_path / "r1.csv", tmp_path / "r2.csv"
    write_results(r1, manifest, {k: v[:1] for k, v in two.items()}, workers=["W1"])
    write_results(r2, manifest, {k: v[1:] for k, v in two.items()}, workers=["W2"])
    # the second file's assignment ids must differ from the first's
    rows = list(csv.DictReader(r2.open(newline="")))
    for row in rows:
        row["AssignmentId"] = "B" + row["AssignmentId"]
    with r2.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    rep = ingest_results(out / "manifest.json", [r1, r2])
    ag = rep["agreement"]["all"]
    assert ag["cohen_kappa"] == pytest.approx(35 / 51, abs=1e-6)  # same first two ratings as above
    assert ag["fleiss_raters"] == 2 and ag["fleiss_items"] == 8


def test_gold_failures_flag_workers_and_can_exclude_them(tmp_path):
    gold = [{"id": "g1", "image_id": "50", "question": "What color is the sky?", "answer": "blue"}]
    out = tmp_path / "hits"
    export_hits(_records(), images_base_url="https://img.example.org", sample=4, seed=2, assignments=3,
                items_per_hit=5, gold=gold, out_dir=out)
    manifest = json.loads((out / "manifest.json").read_text())
    n_gold = sum(1 for it in manifest["items"].values() if it["role"] == "gold")
    results = tmp_path / "r.csv"
    write_results(results, manifest, ANSWERS, workers=WORKERS,
                  gold_answers={"W1": ["Blue"] * n_gold, "W2": ["blue"] * n_gold, "W3": ["green"] * n_gold})
    rep = ingest_results(out / "manifest.json", [results], out=tmp_path / "rep")
    assert rep["workers"]["flagged"] == ["W3"]
    workers = {json.loads(x)["worker_id"]: json.loads(x) for x in (tmp_path / "rep" / "workers.jsonl").read_text().splitlines()}
    assert workers["W3"]["gold_accuracy"] == 0.0 and workers["W1"]["gold_accuracy"] == 1.0
    assert rep["ratings"]["used"] == 24
    strict = ingest_results(out / "manifest.json", [results], exclude_flagged=True)
    assert strict["ratings"]["used"] == 16 and strict["ratings"]["from_flagged_workers_dropped"] == 8
    # without W3, p1 perturbed is no/no and p3 perturbed right/cannot tell (a tie)
    assert strict["agreement"]["all"]["fleiss_raters"] == 2


# --- malformed results ------------------------------------------------------------------------

def _rewrite(path: Path, edit) -> None:
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        header, rows = list(reader.fieldnames), list(reader)
    header, rows = edit(header, rows)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=header, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


@pytest.fixture()
def results(batch, tmp_path):
    out, manifest = batch
    path = tmp_path / "Batch_9_batch_results.csv"
    write_results(path, manifest, ANSWERS, workers=WORKERS)
    return out / "manifest.json", path


def _set(col, value, row_index=0):
    def edit(header, rows):
        rows[row_index][col] = value
        return header, rows
    return edit


@pytest.mark.parametrize(("edit", "message"), [
    (_set("Input.hit_token", "ffffffffffff", 2), "unknown HIT"),
    (lambda h, r: ([c for c in h if c != "WorkerId"], r), "missing column(s) WorkerId"),
    (lambda h, r: ([c for c in h if c != "Input.item3_question"], r), "different layout"),
    (lambda h, r: (h + ["Input.item5_token"], r), "different layout"),
    (lambda h, r: ([c for c in h if not c.startswith("Answer.")], r), "answer column"),
    (_set("Input.item1_token", "000000000000", 1), "another export"),
    (_set("AssignmentStatus", "Lost"), "unknown AssignmentStatus"),
    (_set("Answer.item2_cannot_tell.on", "maybe"), "expected true/false"),
    (_set("AssignmentId", "ASSIGN00000", 1), "appears twice"),
    (lambda h, r: (h, []), "no assignments"),
])
def test_malformed_results_are_input_errors_naming_file_and_record(results, edit, message):
    manifest, path = results
    _rewrite(path, edit)
    with pytest.raises(InputError) as err:
        ingest_results(manifest, [path])
    assert message in str(err.value)
    assert path.name in str(err.value)


@pytest.mark.parametrize(("tail", "message"), [
    ('"A2,unterminated\n', "malformed CSV (unexpected end of data)"),
    ("\xff\xfe\n", "not UTF-8"),
])
def test_a_results_file_cut_or_not_utf8_is_an_input_error(results, tail, message):
    # a download that stopped inside a quoted answer, or a file saved in another encoding
    manifest, path = results
    path.write_bytes(path.read_bytes() + tail.encode("latin-1"))
    with pytest.raises(InputError) as err:
        ingest_results(manifest, [path])
    assert message in str(err.value) and path.name in str(err.value)


def _spoil_answer_field(m):
    m["answer_fields"][0] = None


def _spoil_hit_item(m):
    m["hits"][1]["items"][2] = None


def _spoil_role(m):
    m["items"][next(iter(m["items"]))]["role"] = "boss"


def _spoil_slots(m):
    m["params"]["items_per_hit"] = -1


def _spoil_unknown_item(m):
    m["hits"][0]["items"][0] = "ffffffffffff"


@pytest.mark.parametrize(("spoil", "message"), [
    (_spoil_answer_field, "manifest field answer_fields[0]: Input should be a valid string"),
    (_spoil_hit_item, "manifest field hits[1].items[2]: Input should be a valid string"),
    (_spoil_role, "manifest field items."),
    (_spoil_slots, "manifest field params.items_per_hit: Input should be greater than or equal to 1"),
    (_spoil_unknown_item, "manifest field hits[0].items names 'ffffffffffff', which is not in items"),
])
def test_a_hand_edited_manifest_is_refused_naming_the_field(results, tmp_path, spoil, message):
    manifest, path = results
    data = json.loads(manifest.read_text())
    spoil(data)
    edited = tmp_path / "manifest.json"
    edited.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        ingest_results(edited, [path])
    assert message in str(err.value) and "manifest.json" in str(err.value)


def test_empty_results_file_and_foreign_manifest(results, tmp_path):
    manifest, path = results
    path.write_text("")
    with pytest.raises(InputError, match="empty"):
        ingest_results(manifest, [path])
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hits": []}))
    with pytest.raises(InputError, match="not a contrastgen MTurk manifest"):
        ingest_results(other, [path])


def test_results_from_an_export_with_another_layout_are_rejected(results, tmp_path):
    manifest, path = results
    other = tmp_path / "other_hits"
    export_hits(_records(), images_base_url="https://img.example.org", sample=4, seed=11, assignments=3,
                items_per_hit=2, out_dir=other)
    with pytest.raises(InputError, match="different layout"):
        ingest_results(other / "manifest.json", [path])


def test_cli_ingest_exit_codes(results, tmp_path):
    manifest, path = results
    ok = CliRunner().invoke(cli, ["mturk", "ingest", "--manifest", str(manifest), "--results", str(path),
                                  "--out", str(tmp_path / "rep")])
    assert ok.exit_code == 0, ok.output
    assert "Fleiss' kappa 0.474" in ok.output and (tmp_path / "rep" / "report.md").is_file()
    _rewrite(path, _set("Input.hit_token", "ffffffffffff", 0))
    bad = CliRunner().invoke(cli, ["mturk", "ingest", "--manifest", str(manifest), "--results", str(path),
                                   "--out", str(tmp_path / "rep2")])
    assert bad.exit_code == 2 and "unknown HIT" in bad.output and "HITId HIT0000" in bad.output
    assert not (tmp_path / "rep2").exists()


def test_dawid_skene_aggregation_and_unknown_aggregator(batch, tmp_path):
    out, manifest = batch
    results = tmp_path / "r.csv"
    write_results(results, manifest, ANSWERS, workers=WORKERS)
    rep = ingest_results(out / "manifest.json", [results], aggregator="dawid-skene")
    majority = {(r["pair_id"], r["role"]): r["majority"] for r in rep["items"]}
    # unanimous items cannot change under any aggregator
    assert majority[("p1", "original")] == "yes" and majority[("p4", "perturbed")] == "blue"
    assert majority[("p3", "original")] == "left"
    assert rep["aggregator"] == "dawid-skene"
    with pytest.raises(InputError, match="unknown aggregator"):
        ingest_results(out / "manifest.json", [results], aggregator="mode")
