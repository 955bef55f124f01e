"""GQA-OOD built in two streamed passes writes, byte for byte, what the in-memory build writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contrastgen.datasets.gqa import load_questions
from contrastgen.errors import InputError
from contrastgen.ood.gqa_ood import GqaOodConfig, build_gqa_ood, write_gqa_ood
from contrastgen.ood.gqa_ood_stream import run_gqa_ood_streamed

from .helpers import (
    gqa_questions,
    refuse_an_empty_file_and_a_broken_record,
    refuse_an_id_given_twice,
    write_json,
)

REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "gqa" / "val_balanced_questions_sample.json"
FILES = ("all.json", "head.json", "tail.json", "groups.json", "stats.json", "manifest.json")


def _both(source: Path, tmp_path: Path, config: GqaOodConfig) -> tuple[Path, Path, dict]:
    qs = load_questions(source)
    write_gqa_ood(build_gqa_ood(qs, config), qs, tmp_path / "memory")
    stats = run_gqa_ood_streamed(source, tmp_path / "streamed", config)
    return tmp_path / "memory", tmp_path / "streamed", stats


def _same(a: Path, b: Path) -> None:
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir()) == sorted(FILES)
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.parametrize("config", [GqaOodConfig(), GqaOodConfig(rule="released"), GqaOodConfig(alpha=3),
                                   GqaOodConfig(alpha=0.2)])
def test_the_streamed_build_writes_the_in_memory_files(tmp_path, config):
    # ids out of order in the file, one not ASCII: the output is in id order all the same
    questions = dict(reversed(list(gqa_questions().items())))
    questions["q\u00e9004"] = {**questions.pop("q004"), "imageId": 7}  # validated: written as "7"
    write_json(tmp_path / "q.json", questions)
    memory, streamed, stats = _both(tmp_path / "q.json", tmp_path, config)
    _same(memory, streamed)
    assert stats == json.loads((streamed / "stats.json").read_text())


def test_a_directory_of_shards_is_read_in_order(tmp_path):
    items = list(gqa_questions().items())
    (tmp_path / "shards").mkdir()
    write_json(tmp_path / "shards" / "train_all_questions_0.json", dict(items[:15]))
    write_json(tmp_path / "shards" / "train_all_questions_1.json", dict(items[15:]))
    memory, streamed, _ = _both(tmp_path / "shards", tmp_path, GqaOodConfig())
    _same(memory, streamed)


@pytest.mark.skipif(not REAL.exists(), reason=f"real GQA questions absent ({REAL}); they live in ../shared")
@pytest.mark.parametrize("rule", ["paper", "released"])
def test_the_real_sample_streams_to_the_same_files(tmp_path, rule):
    memory, streamed, _ = _both(REAL, tmp_path, GqaOodConfig(rule=rule))
    _same(memory, streamed)


def test_an_id_given_twice_names_the_file_of_its_second_occurrence(tmp_path):
    refuse_an_id_given_twice(run_gqa_ood_streamed, tmp_path)


def test_bad_input_is_refused_and_writes_nothing(tmp_path):
    refuse_an_empty_file_and_a_broken_record(run_gqa_ood_streamed, tmp_path, lambda q: q.pop("answer"))
    balanced = {k: v for k, v in gqa_questions().items() if v.get("groups", {}).get("local") in ("g2", "g3")}
    write_json(tmp_path / "balanced.json", balanced)
    with pytest.raises(InputError, match="no imbalanced"):
        run_gqa_ood_streamed(tmp_path / "balanced.json", tmp_path / "out")
    assert not (tmp_path / "out").exists()
