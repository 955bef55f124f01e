"""The large-run path of `generate`: streamed, packed questions; the screen; views joined from bytes.

Each of these is a faster or leaner stand-in for a simpler form (docs/performance.md); the
tests hold every one of them to the result of the simple form.
"""

from __future__ import annotations

import gc
import json
import pickle
import random
import tempfile
from collections import Counter
from pathlib import Path

import orjson
import pytest
from cyclic_garbage import cyclic_garbage

from contrastgen.cli.engine_cmds import sample_paths
from contrastgen.datasets.gqa import load_questions, load_scene_graphs
from contrastgen.datasets.question_spill import spill_questions, spill_scene_graphs
from contrastgen.errors import InputError
from contrastgen.results.view_bytes import ViewEntry
from contrastgen.run.generate import generate
from contrastgen.run.pipeline import RunRequest, generate_files
from contrastgen.templates.patterns import load_templates, match_all, screener
from contrastgen.writers.base import json_list, json_object

QUESTIONS, GRAPHS = sample_paths()


# -- the screen ----------------------------------------------------------------------------------

def _screen_is_superset(texts: list[str]) -> tuple[int, int]:
    screen = screener()
    kept = 0
    for text in texts:
        if match_all(text):
            assert screen(text), f"the screen drops a question a template matches: {text!r}"
        kept += screen(text)
    return kept, len(texts)


def test_screen_keeps_every_matching_question_of_the_sample_and_the_template_examples():
    texts = [q["question"] for q in load_questions(QUESTIONS).values()]
    texts += [ex for t in load_templates() for ex in t.examples.get("match", [])]
    kept, total = _screen_is_superset(texts)
    assert 0 < kept < total  # it screens something out, or it would be pointless


def test_screen_keeps_every_matching_real_gqa_question(real_gqa_questions):
    kept, total = _screen_is_superset([q["question"] for q in real_gqa_questions.values()])
    assert kept < total * 0.9  # on real GQA most questions are dropped


def test_screen_honours_a_template_without_required_words():
    import dataclasses

    t = dataclasses.replace(load_templates()[0], requires=())
    assert screener((t,))("anything at all")


# -- the inputs, streamed into files ------------------------------------------------------------

def test_spilled_questions_equal_the_loaded_ones(tmp_path):
    loaded = load_questions(QUESTIONS)
    screen = screener()
    spilled = spill_questions(QUESTIONS, screen, tmp_path, 4)  # many small shards
    assert len(spilled) == len(loaded) and all(len(images) <= 4 for images in spilled.shard_images)
    first_seen = list(dict.fromkeys(str(q["imageId"]) for q in loaded.values()))
    assert spilled.image_ids == first_seen
    order = {qid: i for i, qid in enumerate(loaded)}
    seen = []
    for image in reversed(spilled.image_ids):  # out of shard order: the one-shard cache reloads
        for qid, text, record in spilled.questions_of(image):
            seen.append(qid)
            q = loaded[qid]
            assert (q["imageId"], q["question"]) == (image, text)
            assert record == (orjson.dumps(q, option=orjson.OPT_SORT_KEYS) if screen(text) else None)
            assert spilled.position_of(image, qid) == order[qid]
    assert sorted(seen) == sorted(loaded)
    assert spilled.full == sum(screen(q["question"]) for q in loaded.values())
    assert spilled.suspicious_ids == {qid for qid in loaded if "_" in qid}


def test_spilling_reads_a_directory_of_shards_in_order(tmp_path):
    data = json.loads(QUESTIONS.read_text())
    ids = list(data)
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "part_0.json").write_text(json.dumps({k: data[k] for k in ids[:100]}))
    (shards / "part_1.json").write_text(json.dumps({k: data[k] for k in ids[100:]}))
    spilled = spill_questions(shards, screener(), tmp_path, 256)
    positions = {qid: spilled.position_of(image, qid) for image in spilled.image_ids
                 for qid, _, _ in spilled.questions_of(image)}
    assert sorted(positions, key=positions.get) == ids


@pytest.mark.parametrize("text,needle", [
    ('{"q1": {"imageId": "1", "question": "Is it?"}, "q2": {"imageId": "1", "quest', "after question q1"),
    ('{"q1": {"imageId": "1", "question": "Is it?"},, }', "malformed JSON"),
    ("", "file is empty"),
    ("  \n ", "file is empty"),
    ('["q1"]', "object keyed by question id"),
    ("{}", "no questions found"),
    ('{"q3": {"imageId": "1"}}', "record question q3"),
])
def test_spilling_errors_name_the_file_and_the_record(tmp_path, text, needle):
    path = tmp_path / "questions.json"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        spill_questions(path, screener(), tmp_path, 256)
    assert needle in str(err.value) and "questions.json" in str(err.value)


def test_a_question_id_given_twice_is_an_error_naming_its_second_file(tmp_path):
    record = {"imageId": "1", "question": "What color is the cat?", "answer": "black"}
    shards = tmp_path / "shards"
    shards.mkdir()
    (shards / "a.json").write_text(json.dumps({"q1": record, "q2": record}))
    (shards / "b.json").write_text(json.dumps({"q3": record, "q1": record}))
    with pytest.raises(InputError, match=r"question id 'q1' is given twice \(record 1 of .*a\.json, and record 2 of "
                                         r".*b\.json\)") as err:
        spill_questions(shards, screener(), tmp_path, 256)
    assert err.value.record == "question q1" and err.value.path.endswith("b.json")
    (shards / "b.json").write_text(json.dumps({"q3": record, "x_r1": record}))
    assert spill_questions(shards, screener(), tmp_path, 256).suspicious_ids == {"x_r1"}


def test_spilled_graphs_equal_the_loaded_ones_and_give_the_same_corpus(engine, tmp_path):
    from contrastgen.datasets.gqa import load_scene_graphs

    loaded = load_scene_graphs(GRAPHS)
    spilled = spill_scene_graphs(GRAPHS, tmp_path)
    assert list(spilled) == list(loaded) and len(spilled) == len(loaded)
    assert all(spilled[i] == g and spilled.get(i) == g for i, g in loaded.items())
    assert spilled.get("no such image") is None and "no such image" not in spilled
    assert dict(spilled.object_names()) == {i: [o["name"] for o in g["objects"].values()]
                                            for i, g in loaded.items()}
    a, b = engine.build_corpus(loaded), engine.build_corpus(spilled)
    assert a.kinds == b.kinds and (a.cooccurrence != b.cooccurrence).nnz == 0
    some = list(loaded)[:3]
    assert dict(spilled.subset([*some, "missing"]).items()) == {i: loaded[i] for i in some}


@pytest.mark.parametrize("text,needle", [
    ('{"1": {"width": 10, "objects": {}}, "2": {"width": 10, "obj', "after image 1"),
    ("", "file is empty"),
    ('[{"width": 10}]', "object keyed by image id"),
    ("{}", "no scene graphs found"),
    ('{"7": {"width": 10, "objects": {"1": {"name": "cat", "x": 0, "y": 0, "w": 1}}}}', "image 7 object 1"),
    ('{"7": {"width": 10, "objects": {"1": {"name": "cat", "x": 0, "y": 0, "w": 1, "h": 1, '
     '"relations": [{"name": "on", "object": "9"}]}}}}', "unknown object '9'"),
])
def test_spilled_graph_errors_are_the_loaders(tmp_path, text, needle):
    """The streaming loader says what the whole-file loader says (file, record, reason)."""
    from contrastgen.datasets.gqa import load_scene_graphs

    path = tmp_path / "scene_graphs.json"
    path.write_text(text)
    with pytest.raises(InputError) as spilled_err:
        spill_scene_graphs(path, tmp_path)
    assert needle in str(spilled_err.value) and "scene_graphs.json" in str(spilled_err.value)
    if "after image" not in needle:  # orjson reports a malformed file without the last good image
        with pytest.raises(InputError) as loaded_err:
            load_scene_graphs(path)
        assert str(loaded_err.value) == str(spilled_err.value)


def test_input_errors_keep_file_and_record_across_processes():
    err = pickle.loads(pickle.dumps(InputError("bad", path="q.json", record="question 7")))
    assert (err.path, err.record, err.reason, str(err)) == ("q.json", "question 7", "bad",
                                                             "q.json: record question 7: bad")


# -- the run ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dict_run(engine):
    from contrastgen.datasets.gqa import load_scene_graphs

    return generate(load_questions(QUESTIONS), load_scene_graphs(GRAPHS), engine=engine, max_k=5, seed=3, workers=1)


@pytest.mark.parametrize("workers,shard_images", [(1, 256), (2, 256), (2, 4)])
def test_the_file_path_equals_the_library_path(engine, dict_run, workers, shard_images, monkeypatch):
    import contrastgen.families.base

    monkeypatch.setattr(contrastgen.families.base, "SHARD_IMAGES", shard_images)  # 4: many shards, 2 workers
    gen = generate_files(RunRequest(QUESTIONS, GRAPHS, max_k=5, seed=3, workers=workers, options={"engine": engine}))
    # the file path spills results to disk as shards finish and reads them back, re-iterably
    assert list(gen.lines) == dict_run.lines and dict_run.lines and list(gen.lines) == dict_run.lines
    assert list(gen.views) == dict_run.views and list(gen.views) == dict_run.views
    assert gen.stats == dict_run.stats and gen.perturbed == dict_run.perturbed
    assert [r["question_id"] for r in gen.records] == [r["question_id"] for r in dict_run.records]


def test_the_spilled_files_go_with_the_run(engine, monkeypatch, tmp_path):
    import gc

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # this test's spill folders only
    gen = generate_files(RunRequest(QUESTIONS, GRAPHS, max_k=5, seed=3, workers=1, options={"engine": engine}))
    folder = gen.spill.folder
    assert (folder / "lines.bin").is_file() and (folder / "views.sorted.bin").is_file()
    assert not (folder / "views.bin").exists()  # the unmerged runs are gone once merged
    assert not list(tmp_path.glob("contrastgen-input-*"))  # the inputs' folder went with the generation
    del gen
    gc.collect()
    assert not folder.exists()


def test_local_workers_write_their_own_results_and_the_driver_only_notes_them(engine, dict_run, monkeypatch,
                                                                             tmp_path):
    import os

    import contrastgen.families.base
    from contrastgen.run import result_spill

    monkeypatch.setattr(contrastgen.families.base, "SHARD_IMAGES", 4)  # many shards over the two workers
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    received = []
    add = result_spill.ResultSpill.add_spilled
    monkeypatch.setattr(result_spill.ResultSpill, "add_spilled",
                        lambda self, shard: (received.append(shard), add(self, shard))[1])
    gen = generate_files(RunRequest(QUESTIONS, GRAPHS, max_k=5, seed=3, workers=2, options={"engine": engine}))
    folder = gen.spill.folder
    assert (folder / "lines.bin").stat().st_size == 0  # the driver wrote no line itself
    writers = {shard.name for shard in received}
    assert writers and str(os.getpid()) not in writers
    assert all((folder / f"lines-{name}.bin").stat().st_size for name in writers)
    assert sum(len(shard.lines) for shard in received) == len(dict_run.perturbed)
    assert list(gen.lines) == dict_run.lines and list(gen.views) == dict_run.views
    assert not list(folder.glob("views-*.bin"))  # the workers' unmerged runs are gone once merged


def test_a_workers_shard_is_on_disk_when_the_driver_hears_of_it(tmp_path):
    """A pool worker is ended, not closed: what `spill_shard` reports written must already be
    readable by another process, however small the shard (a few bytes stayed in the file
    object's own buffer and were lost, so the driver read past the file's end)."""
    from contrastgen.results.generation import ShardResult
    from contrastgen.run.result_spill import SpilledLines, _ShardWriter

    writer = _ShardWriter(tmp_path, "worker")
    spilled = [writer.write(ShardResult(questions=1, lines=[(f"q{i}", (f'{{"q":{i}}}\n'.encode(),))],
                                        positions=[i]))
               for i in range(3)]
    entries = [(0, offset, qid) for shard in spilled for _, offset, qid in shard.lines]
    lines = SpilledLines([tmp_path / "lines-worker.bin"], entries)
    assert list(lines) == [b'{"q":0}\n', b'{"q":1}\n', b'{"q":2}\n']  # read before any close
    writer.close()


def test_a_second_writer_of_one_name_fails_rather_than_truncating_the_first(tmp_path):
    """Worker files are named by pid: a pid reused within one run must not empty the frames
    the first worker of that pid wrote and reported."""
    from contrastgen.results.generation import ShardResult
    from contrastgen.run.result_spill import _ShardWriter

    first = _ShardWriter(tmp_path, "4242")
    first.write(ShardResult(questions=1, lines=[("q0", (b'{"q":0}\n',))], positions=[0]))
    size = (tmp_path / "lines-4242.bin").stat().st_size
    with pytest.raises(RuntimeError, match="two writers of one run"):
        _ShardWriter(tmp_path, "4242")
    assert (tmp_path / "lines-4242.bin").stat().st_size == size > 0
    first.close()


def test_shard_tallies_merged_equal_the_outcomes_counted_at_once():
    from contrastgen.results.stats import KS, Outcome, StatsTally

    rng = random.Random(5)
    templates = ["a", "b", "c"]
    outcomes = []
    for n in range(400):
        image = f"img{n // 7}"
        for t in rng.sample(templates, rng.randint(1, 2)):
            ranks = tuple(sorted(rng.sample(range(1, 6), rng.randint(0, 3))))
            outcomes.append(Outcome(f"q{n}", image, t, None if ranks else rng.choice(["x", "y"]), ranks,
                                    rng.choice(["verify", "query"]), rng.choice(["d1", "d2", "d3"]),
                                    bool(ranks) and rng.random() < 0.5))
    # shards of whole images, as a run cuts them
    shards = [[o for o in outcomes if int(o.image_id[3:]) // 5 == s] for s in range(12)]
    for ids in (None, ["c", "a", "b"]):
        whole = StatsTally(ids, 5)
        merged = StatsTally(ids, 5)
        for shard in shards:
            whole.add(shard)
            part = StatsTally(None, 5)
            part.add(shard)
            merged.merge(part)
        graphs = {f"img{i}": {} for i in range(0, 60, 2)}
        images = {o.image_id for o in outcomes}
        assert merged.result(500, images, graphs, 3) == whole.result(500, images, graphs, 3)
        assert json.dumps(merged.result(500, images, graphs, 3)) == json.dumps(whole.result(500, images, graphs, 3))
        assert whole.result(500, images, graphs, 3)["perturbations"][f"k{KS[0]}"] > 0
    strict = StatsTally(["a"], 5)
    with pytest.raises(KeyError):
        strict.merge(merged)  # a template outside the rows, as `add` refuses it


def test_no_match_is_counted_for_every_unmatched_question(dict_run, engine):
    questions = load_questions(QUESTIONS)
    unmatched = sum(1 for q in questions.values() if not engine.match(q["question"]))
    assert unmatched > sum(1 for q in questions.values() if not match_all(q["question"])), \
        "the sample has questions whose pattern matches but whose slots are not read"
    assert unmatched and dict_run.stats["reasons"]["no_match"] == unmatched
    assert dict_run.stats["questions"] == len(questions)


def test_records_parse_the_jsonl_lines(dict_run):
    assert [orjson.dumps(r, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
            for r in dict_run.records] == dict_run.lines


def test_a_question_named_like_a_perturbation_is_an_error(engine, dict_run):
    from contrastgen.datasets.gqa import load_scene_graphs

    questions = load_questions(QUESTIONS)
    taken = dict_run.records[0]["perturbations"][0]["question_id"]
    questions[taken] = {"imageId": "nowhere", "question": "Is it?", "answer": "no"}
    with pytest.raises(InputError, match="rename it") as err:
        generate(questions, load_scene_graphs(GRAPHS), engine=engine, max_k=5, seed=3, workers=1)
    assert err.value.record == f"question {taken}"


# -- views joined from bytes ----------------------------------------------------------------------

def test_joined_views_equal_orjson_of_the_whole_object():
    rng = random.Random(0)
    alphabet = ["a", "Z", "0", "_", "é", "中", "\U0001F600", '"', "\\", " "]
    for size in (0, 1, 2, 17):
        records = {"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5))): {"n": i, "b": [i, "x"]}
                   for i in range(size)}
        entries = sorted((ViewEntry(k, 0, orjson.dumps(v, option=orjson.OPT_SORT_KEYS),
                                    orjson.dumps({"id": k}, option=orjson.OPT_SORT_KEYS))
                          for k, v in records.items()), key=lambda e: e.key)
        opts = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
        assert b"".join(json_object(entries)) == orjson.dumps(records, option=opts)
        assert b"".join(json_list(entries)) == orjson.dumps([{"id": k} for k in sorted(records)], option=opts)


def test_written_views_hold_originals_and_perturbations_by_rank(dict_run, tmp_path: Path):
    from contrastgen.writers import write_outputs

    out = write_outputs(dict_run, tmp_path / "out")
    original = json.loads((out / "original.json").read_text())
    augmented = json.loads((out / "augmented.json").read_text())
    k1 = json.loads((out / "augmented_k1.json").read_text())
    perturbations = {p["question_id"]: p for r in dict_run.records for p in r["perturbations"]}
    assert set(original) == {r["question_id"] for r in dict_run.records}
    assert set(augmented) == set(original) | set(perturbations)
    assert set(k1) == set(original) | {pid for pid, p in perturbations.items() if p["rank"] == 1}
    lxmert = json.loads((out / "lxmert" / "augmented.json").read_text())
    assert [x["question_id"] for x in lxmert] == sorted(augmented)


def test_the_allocator_settings_take_on_glibc():
    """`generate` sets glibc's allocator for a batch run (run.allocator); glibc accepts every
    setting (mallopt returns 1 for each), checked in a forked child so this process keeps its own."""
    import multiprocessing as mp
    import platform

    from contrastgen.run.allocator import tune_for_batch

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("the allocator settings are glibc's")
    with mp.get_context("fork").Pool(1) as pool:
        assert pool.apply(tune_for_batch) is True


@pytest.mark.parametrize("buffer", [1, 7, 1 << 20])
def test_spill_cursors_read_frames_across_their_buffers(tmp_path, buffer):
    """A run's cursor reads through a small buffer: frames larger than it, and frames that
    straddle two reads, come back whole and in order."""
    import os

    from contrastgen.run.result_spill import _Appender, _Cursor

    items = [(f"q{i}", i, b"x" * (i * 37 % 500), "é" * (i % 5)) for i in range(200)]
    out = _Appender(tmp_path / "frames.bin")
    spans = [out.append(item) for item in items]
    out.close()
    fd = os.open(tmp_path / "frames.bin", os.O_RDONLY)
    try:
        assert list(_Cursor(fd, 0, spans[-1][1], buffer)) == items
        start, end = spans[50][0], spans[120][1]
        assert list(_Cursor(fd, start, end, buffer)) == items[50:121]
    finally:
        os.close(fd)


# -- the collector -------------------------------------------------------------------------------

def _cyclic_garbage_of_a_run(engine, mode: str, groups: bool = False) -> Counter:
    """What a run leaves for the collector: the types of the objects only a cycle kept alive."""
    questions, graphs = load_questions(QUESTIONS), load_scene_graphs(GRAPHS)
    return cyclic_garbage(lambda: generate(questions, graphs, engine=engine, mode=mode, workers=1, groups=groups).lines)


@pytest.mark.parametrize(("mode", "groups"), [("templates", False), ("both", False), ("both", True)])
def test_a_run_leaves_no_cyclic_garbage(engine, mode, groups, monkeypatch):
    """Each image's scene index, and each question's editor, go when their last reference does.
    A reference cycle (the program editor's proofs holding the editor through a bound method)
    kept 140k objects per shard of 256 images waiting for the collector, whose passes over them
    were the workers' largest overhead; the shard loop also pauses the collector for a whole
    shard (`gc_policy.one_collection`), so a cycle would hold a shard's garbage in memory until
    its end. With groups, the search freezes what is alive as it caches a candidate scene
    (`gc_policy.freeze_in_batch`), which is sound only because nothing makes a cycle: a frozen
    one is never freed. Here it does not freeze, so the shard's collection sees every cycle."""
    import contrastgen.groups.search as search

    monkeypatch.setattr(search, "freeze_in_batch", lambda: None)
    garbage = _cyclic_garbage_of_a_run(engine, mode, groups)
    assert not garbage, f"objects freed only by the collector: {garbage.most_common(8)}"


def test_a_run_collects_once_per_shard_and_leaves_the_collector_as_it_was(engine, monkeypatch):
    """A shard runs with the collector paused and one collection at its end; what it keeps is
    frozen until the run ends, and then the collector is as the caller left it."""
    import contrastgen.families.base as families

    monkeypatch.setattr(families, "SHARD_IMAGES", 2)  # several shards from the small sample
    questions, graphs = load_questions(QUESTIONS), load_scene_graphs(GRAPHS)
    n_shards = -(-len({q["imageId"] for q in questions.values()}) // 2)
    seen: list[str] = []
    frozen: list[int] = []

    def watch(phase: str, info: dict) -> None:
        seen.append(phase)
        if phase == "start":
            frozen.append(gc.get_freeze_count())

    before = gc.get_freeze_count()
    gc.callbacks.append(watch)
    try:
        gen = generate(questions, graphs, engine=engine, workers=1)
    finally:
        gc.callbacks.remove(watch)
    assert gen.lines and gc.isenabled() and gc.get_freeze_count() == before
    assert n_shards > 2 and seen == ["start", "stop"] * n_shards, "the collector ran during a shard"
    assert frozen == sorted(frozen) and frozen[-1] > frozen[0], "a shard's survivors were not frozen"


def test_a_freeze_asked_for_within_a_batch_happens_there_and_nowhere_else():
    """`freeze_in_batch` freezes only inside the shard loop's batch (the run's own processes);
    a library caller's or a Ray worker's objects are never frozen by it."""
    from contrastgen.gc_policy import freeze_in_batch, one_collection

    before = gc.get_freeze_count()
    try:
        kept = [[i] for i in range(50)]  # tracked containers, alive while the freeze is asked for
        freeze_in_batch()
        assert gc.get_freeze_count() == before
        with one_collection():
            more = [[i] for i in range(50)]
            freeze_in_batch()
            assert gc.get_freeze_count() >= before + len(more)
        freeze_in_batch()
        after = gc.get_freeze_count()
        freeze_in_batch()
        assert gc.get_freeze_count() == after and kept
    finally:
        if not before:  # as the run leaves it (`run.generate._frozen`)
            gc.unfreeze()


def test_a_failed_runs_folder_goes_even_when_its_writer_cannot_be_closed(tmp_path, monkeypatch):
    """A run that fails on a full TMPDIR ends with the driver's writer unable to flush either:
    its close raises the same `ScratchError`, and the run's folder must still be removed."""
    import os

    from contrastgen.files import scratch
    from contrastgen.run import result_spill

    folder = tmp_path / "run"
    folder.mkdir()
    writer = result_spill._ShardWriter(folder, "driver")
    writer.lines.append_frame(b"unflushed")

    def full(*_args, **_kwargs):
        raise scratch.ScratchError("cannot write temporary files (No space left on device)")

    monkeypatch.setattr(writer.lines, "flush", full)
    monkeypatch.setitem(result_spill._WRITERS, (folder, os.getpid()), writer)
    result_spill._remove(folder)
    assert not folder.exists()
    assert (folder, os.getpid()) not in result_spill._WRITERS
