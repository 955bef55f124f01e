"""VQA-VS built from GQA files in three streamed passes writes, byte for byte, what the in-memory
build writes, and refuses bad input without writing anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import synth

from contrastgen.datasets import formats as formats_module
from contrastgen.datasets.formats import OOD_FORMATS, detect_format
from contrastgen.datasets.samples import load_gqa_samples
from contrastgen.errors import InputError
from contrastgen.ood.objects import load_image_objects
from contrastgen.ood.vqavs import VqaVsConfig, build_vqavs, write_vqavs
from contrastgen.ood.vqavs_stream import Workers, run_vqavs_gqa_streamed

from .helpers import (
    gqa_questions,
    refuse_an_empty_file_and_a_broken_record,
    refuse_an_id_given_twice,
    write_json,
)

REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "gqa" / "val_balanced_questions_sample.json"


def _both(tmp_path: Path, questions: Path, *, graphs: Path | None = None, mi: Path | None = None,
          config: VqaVsConfig | None = None, workers: Workers | None = None) -> tuple[Path, Path, dict]:
    objects = load_image_objects(graphs) if graphs is not None else None
    memory, streamed = tmp_path / "memory", tmp_path / "streamed"
    build = build_vqavs(load_gqa_samples(questions), config, data_format="gqa", objects=objects,
                        mi_samples=load_gqa_samples(mi) if mi is not None else None)
    write_vqavs(build, memory)
    stats = run_vqavs_gqa_streamed(questions, streamed, objects=objects, mi_questions=mi, config=config,
                                   workers=workers)
    return memory, streamed, stats


def _same(a: Path, b: Path) -> int:
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    return len(files)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """GQA-like questions and graphs; ids out of order, a long one, a non-ASCII one."""
    out = tmp_path_factory.mktemp("synth")
    synth.write_dataset(out, 60, 1500, 3)
    questions = json.loads((out / "questions.json").read_text())
    items = list(reversed(questions.items()))
    items[10] = ("q\u00e9-" + items[10][0], items[10][1])
    items[20] = ("x" * 70, items[20][1])  # widens the index's ids past their first width
    write_json(out / "questions.json", dict(items))
    return out


@pytest.mark.parametrize("config", [None, VqaVsConfig(drop_stopwords=True, shortcuts=("KW", "KOP", "QT+KW+KO")),
                                   VqaVsConfig(entropy_threshold=0.8, tail_factor=1.0)])
def test_the_streamed_build_writes_the_in_memory_files(tmp_path, data, config):
    memory, streamed, stats = _both(tmp_path, data / "questions.json", graphs=data / "scene_graphs.json",
                                    config=config)
    assert _same(memory, streamed) >= 8
    assert stats == json.loads((streamed / "stats.json").read_text())
    assert any(s.get("tail") for s in stats["shortcuts"].values())  # the comparison has OOD sets to compare


@pytest.mark.parametrize("workers", [Workers(workers=2, batch=97), Workers(workers=1, batch=1)])
def test_forked_workers_and_any_batch_size_write_the_same_files(tmp_path, data, workers):
    memory, streamed, _ = _both(tmp_path, data / "questions.json", graphs=data / "scene_graphs.json",
                                workers=workers)
    _same(memory, streamed)


def test_without_objects_and_with_mi_from_another_split(tmp_path, data):
    qs = json.loads((data / "questions.json").read_text())
    items = list(qs.items())
    write_json(tmp_path / "test.json", dict(items[:500]))
    write_json(tmp_path / "train.json", dict(items[500:]))
    memory, streamed, stats = _both(tmp_path, tmp_path / "test.json", mi=tmp_path / "train.json",
                                    workers=Workers(workers=2, batch=50))
    _same(memory, streamed)
    assert stats["mi_source"] == "separate" and "skipped" in stats["shortcuts"]["KO"]


def test_a_directory_of_shards_is_read_in_order(tmp_path, data):
    items = list(json.loads((data / "questions.json").read_text()).items())
    (tmp_path / "shards").mkdir()
    write_json(tmp_path / "shards" / "train_all_questions_0.json", dict(items[:700]))
    write_json(tmp_path / "shards" / "train_all_questions_1.json", dict(items[700:]))
    memory, streamed, _ = _both(tmp_path, tmp_path / "shards", graphs=data / "scene_graphs.json")
    _same(memory, streamed)


@pytest.mark.skipif(not REAL.exists(), reason=f"real GQA questions absent ({REAL}); they live in ../shared")
def test_the_real_sample_streams_to_the_same_files(tmp_path):
    memory, streamed, _ = _both(tmp_path, REAL)
    _same(memory, streamed)


def test_an_id_given_twice_names_the_file_of_its_second_occurrence(tmp_path):
    refuse_an_id_given_twice(run_vqavs_gqa_streamed, tmp_path)


def test_bad_input_is_refused_and_writes_nothing(tmp_path):
    refuse_an_empty_file_and_a_broken_record(run_vqavs_gqa_streamed, tmp_path, lambda q: q.pop("answer"))
    write_json(tmp_path / "none.json", {})
    with pytest.raises(InputError, match="no questions found"):
        run_vqavs_gqa_streamed(tmp_path / "none.json", tmp_path / "out")
    write_json(tmp_path / "good.json", gqa_questions())
    with pytest.raises(InputError, match="without object annotations"):
        run_vqavs_gqa_streamed(tmp_path / "good.json", tmp_path / "out", config=VqaVsConfig(shortcuts=("KO",)))
    assert not (tmp_path / "out").exists()


def test_gqa_format_is_told_from_the_first_record_without_parsing_the_file(tmp_path, monkeypatch):
    write_json(tmp_path / "q.json", gqa_questions())

    def whole_file(path):
        raise AssertionError(f"{path} parsed whole")

    monkeypatch.setattr(formats_module, "read_json", whole_file)
    assert detect_format(tmp_path / "q.json", OOD_FORMATS) == "gqa"


def test_an_id_given_twice_in_the_mi_split_is_refused(tmp_path):
    """The MI split is read only in pass one: an id it gives twice would be counted twice."""
    main = write_json(tmp_path / "main.json", gqa_questions())
    refuse_an_id_given_twice(lambda mi, out: run_vqavs_gqa_streamed(main, out, mi_questions=mi), tmp_path)


def test_the_first_record_is_read_from_the_head_of_the_file_only(tmp_path, monkeypatch):
    """A VQA file opening with its whole `questions` list is no record: it is refused at the
    head's end, and the whole file is parsed once, by the reader that tells VQA from GQA."""
    from contrastgen.datasets import streaming

    monkeypatch.setattr(streaming, "FIRST_RECORD_BYTES", 4096)
    questions = [{"image_id": i, "question": f"What is {i}?", "question_id": i} for i in range(400)]
    write_json(tmp_path / "vqa.json", {"questions": questions, "info": {}})
    assert streaming.first_record(tmp_path / "vqa.json") is None
    assert detect_format(tmp_path / "vqa.json", OOD_FORMATS) == "vqa"
    write_json(tmp_path / "gqa.json", gqa_questions())
    assert streaming.first_record(tmp_path / "gqa.json") == gqa_questions()["q001"]
    for bad in (b"", b"[1, 2]", b'{"q1": {"question": "Is it', b"   "):
        (tmp_path / "bad.json").write_bytes(bad)
        assert streaming.first_record(tmp_path / "bad.json") is None
