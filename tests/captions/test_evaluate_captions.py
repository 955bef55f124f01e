"""`contrastgen evaluate --captions`: a similarity file scored per kind with intervals, beside the
two blind baselines."""

from __future__ import annotations

import json

import pytest
from caption_cli import run

from contrastgen.jsonio import read_jsonl

pytest.importorskip("sklearn", reason="the text-only classifier needs scikit-learn (extra [captions])")


def write_scores(path, gqa_captions, score_of, *, skip=0):
    rows = ["image_id,caption_id,score"]
    for i, r in enumerate(read_jsonl(gqa_captions / "captions.jsonl")):
        if i < skip:
            continue
        rows.append(f"{r['image_id']},{r['id']},{score_of(r, None)}")
        rows += [f"{r['image_id']},{n['id']},{score_of(r, n)}" for n in r["negatives"]]
    path.write_text("\n".join(rows) + "\n")
    return path


def evaluate(gqa_captions, scores, *extra):
    return run("evaluate", "--captions", gqa_captions, "-p", scores, "--n-boot", "200", *extra)


def test_a_model_that_sees_the_truth_scores_100_and_a_constant_one_0(tmp_path, gqa_captions):
    perfect = write_scores(tmp_path / "perfect.csv", gqa_captions, lambda r, n: 0.0 if n else 1.0)
    flat = write_scores(tmp_path / "flat.csv", gqa_captions, lambda r, n: 0.5)
    result = evaluate(gqa_captions, perfect, "-p", flat, "--out", tmp_path / "report")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["perfect"]["kinds"]["all"]["model"]["value"] == 1.0
    assert report["flat"]["kinds"]["all"]["model"]["value"] == 0.0  # a tie is wrong (SugarCrepe's rule)
    kinds = report["perfect"]["kinds"]
    assert set(kinds) - {"all"} == {n["kind"] for r in read_jsonl(gqa_captions / "captions.jsonl")
                                    for n in r["negatives"]}
    for row in kinds.values():
        assert 0.0 <= row["plausibility"]["value"] <= 1.0
        low, high = row["plausibility"]["ci"]
        assert low <= row["plausibility"]["value"] <= high
    assert "text classifier" in result.output and "replace_obj" in result.output


def test_missing_scores_count_wrong_and_strict_refuses(tmp_path, gqa_captions):
    partial = write_scores(tmp_path / "partial.csv", gqa_captions, lambda r, n: 0.0 if n else 1.0, skip=10)
    result = evaluate(gqa_captions, partial, "--out", tmp_path / "r")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r" / "report.json").read_text())["partial"]
    first = list(read_jsonl(gqa_captions / "captions.jsonl"))[:10]
    assert report["missing_scores"] == sum(len(r["negatives"]) for r in first)
    assert report["kinds"]["all"]["model"]["value"] < 1.0
    strict = evaluate(gqa_captions, partial, "--strict")
    assert strict.exit_code == 2 and "no score" in strict.output


@pytest.mark.parametrize("body,needle", [
    ("image_id,caption_id,score\nimg,c1,abc\n", "line 2"),
    ("image_id,caption_id,score\nimg,c1,1\nimg,c1,2\n", "twice"),
    ("image_id,caption\nimg,c1\n", "header lacks"),
    ("image_id,caption_id,score\nimg,c1,nan\n", "finite"),
    (b"image_id,caption_id,score\nimg,c\xff\xfe,1\n", "not UTF-8"),
    ("image_id,caption_id,score\nimg,c1," + "9" * 200_000 + "\n", "malformed CSV (field larger than field limit"),
    ('image_id,caption_id,score\nimg,c1,1\nimg,"c2,2\n', "malformed CSV (unexpected end of data)"),
])
def test_a_bad_similarity_file_exits_2_naming_the_place(tmp_path, gqa_captions, body, needle):
    bad = tmp_path / "bad.csv"
    if isinstance(body, bytes):
        bad.write_bytes(body)
    else:
        bad.write_text(body)
    result = evaluate(gqa_captions, bad)
    assert result.exit_code == 2 and needle in result.output and "bad.csv" in result.output
