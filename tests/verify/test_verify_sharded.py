"""`verify` in shards (`verify.sharded`): the report is the in-memory checker's, whatever the
workers and however the images fall into shards, including the checks that span the file."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from verify_cases import VALID, as_record, make_graph

from contrastgen.datasets.gqa import load_scene_graphs
from contrastgen.jsonio import read_jsonl, write_json, write_jsonl
from contrastgen.records import read_contrast_lines
from contrastgen.verify import sharded
from contrastgen.verify.checker import verify_contrast_sets
from contrastgen.verify.sharded import verify_contrast_file

_CASES = ["side", "color", "exists_related_yes", "relation_no", "relation_yes"]


def _records() -> list:
    """Valid records over four images, and each kind of failure the whole file decides."""
    records = [as_record(VALID[c][0], [VALID[c][1]], qid=f"q{i}", image_id=f"img{i % 4}")
               for i, c in enumerate(_CASES * 3)]
    flipped = as_record(VALID["side"][0], [VALID["side"][1]], qid="flip", image_id="img2")
    flipped["perturbations"][0]["answer"] = flipped["answer"]
    records.append(flipped)
    records.append(copy.deepcopy(records[3]))  # the same question and template again
    again = as_record(VALID["color"][0], [VALID["color"][1]], qid="other", image_id="img3")
    again["perturbations"][0]["question_id"] = records[0]["perturbations"][0]["question_id"]
    records.append(again)  # a perturbation id given before, on another image
    records.append(as_record(VALID["side"][0], [VALID["side"][1]], qid="lost", image_id="img404"))
    records.append(["not", "a", "record"])
    records.append({"question_id": "bare", "image_id": "img1", "perturbations": []})
    grouped = as_record(VALID["color"][0], [VALID["color"][1]], qid="grouped", image_id="img0")
    cells = [{"question_id": "cell", "image_id": "img3", "question": "?", "answer": "?"}] * 4
    grouped["perturbations"][0]["group"] = {"id": "grouped_c1_g", "kind": "differs", "images": ["img0", "img3"],
                                            "cells": cells}
    records.append(grouped)  # its second image's graph must reach its shard
    return records


@pytest.fixture
def contrast(tmp_path: Path) -> tuple[Path, Path]:
    path = tmp_path / "contrast_sets.jsonl"
    write_jsonl(path, _records())
    sg = tmp_path / "sg.json"
    write_json(sg, {f"img{i}": make_graph() for i in range(4)})
    return path, sg


def _as_compared(report) -> tuple:
    return report.checked, report.groups, [vars(f) for f in report.failures]


@pytest.mark.parametrize(("workers", "shard_images"), [(1, 200), (1, 1), (2, 1)])
def test_the_report_is_the_in_memory_checkers(contrast, rules, monkeypatch, workers, shard_images):
    path, sg = contrast
    expected = verify_contrast_sets(read_jsonl(path), load_scene_graphs(sg), rules=rules)
    checks = {f.check for f in expected.failures}
    assert {"ids", "image", "structure", "answer", "group"} <= checks  # each whole-file check is exercised
    # the group is read up to its second image's graph, which its shard must hold
    assert any(f.check == "group" and "need programs" in f.problem for f in expected.failures)
    monkeypatch.setattr(sharded, "SHARD_IMAGES", shard_images)
    advanced = []
    got = verify_contrast_file(read_contrast_lines(path), path, sg, rules=rules, workers=workers,
                               advance=advanced.append)
    assert _as_compared(got) == _as_compared(expected)
    assert sum(advanced) == len(_records())


def test_a_hash_clash_that_is_no_repeat_is_not_reported(contrast, rules, monkeypatch):
    """Every key hashed alike: the second pass compares the keys themselves."""
    path, sg = contrast
    expected = verify_contrast_sets(read_jsonl(path), load_scene_graphs(sg), rules=rules)
    monkeypatch.setattr(sharded, "hash", lambda key: 7, raising=False)
    got = verify_contrast_file(read_contrast_lines(path), path, sg, rules=rules)
    assert _as_compared(got) == _as_compared(expected)


def test_shards_are_the_records_in_file_order_over_at_most_shard_images_each(contrast, monkeypatch, tmp_path):
    """Cut from the stream: consecutive records, each shard over at most `SHARD_IMAGES` images of
    its own and carrying the graphs its groups' second images need; a shard for another process
    carries lines, and gives up its records once they are taken."""
    path, sg = contrast
    monkeypatch.setattr(sharded, "SHARD_IMAGES", 2)
    graphs = sharded._Graphs(sg, tmp_path)
    keys = sharded._Keys()
    tasks = list(sharded._shards(read_contrast_lines(path), graphs, keys, in_process=False))
    assert [n for t in tasks for n, _ in t.records] == list(range(1, len(_records()) + 1))
    assert all(isinstance(line, bytes) for t in tasks for _, line in t.records)
    for task in tasks:
        taken = list(task.take())
        own = {sharded._graph_of(r, graphs) for _, r in taken} - {None}  # a record with nothing to check joins any
        assert len(own) <= 2 and own <= set(task.graphs)
        if any(isinstance(r, dict) and r.get("question_id") == "grouped" for _, r in taken):
            assert "img3" in task.graphs  # the group's second image
        assert task.records == []
    assert len(keys.records) == sum(1 for r in _records() if isinstance(r, dict) and r.get("perturbations"))
