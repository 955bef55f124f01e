"""Two-image groups (`generate --groups`): found on real-shaped data, proven, written without
touching a byte of a run without them, the same whatever the workers, and re-proven by `verify`,
which turns down a group whose cells do not hold."""

from __future__ import annotations

import copy
import json

import numpy as np
import orjson
import pytest

from contrastgen.datasets.gqa import load_questions, load_scene_graphs
from contrastgen.engine import Engine
from contrastgen.groups.index import GroupIndex
from contrastgen.groups.search import MAX_TRIED
from contrastgen.run.generate import generate
from contrastgen.verify.checker import verify_contrast_sets


@pytest.fixture(scope="module")
def engine():
    return Engine.load()


@pytest.fixture(scope="module")
def grouped(engine, sample):
    questions, graphs = sample
    return generate(questions, graphs, engine=engine, max_k=5, seed=0, workers=1, mode="both", groups=True)


def _groups(gen):
    return [(r, p) for r in gen.records for p in r["perturbations"] if "group" in p]


def test_groups_are_found_on_the_sample_and_every_cell_is_re_proven(grouped, sample):
    found = _groups(grouped)
    stats = grouped.stats["groups"]
    assert len(found) == stats["grouped"] == stats["swap"] + stats["differs"] > 50
    assert stats["swap"] > 10  # full 2x2 swaps, not only partial groups
    assert sum(stats["reasons"].values()) > 0 and stats["pairs"] > stats["grouped"]
    report = verify_contrast_sets(grouped.records, sample[1])
    assert report.ok, report.failures[:5]
    assert report.groups == len(found)
    for rec, p in found:
        g = p["group"]
        assert g["images"][0] == rec["image_id"] != g["images"][1]
        assert [c["question_id"] for c in g["cells"]] == [rec["question_id"], p["question_id"],
                                                         p["question_id"] + "_gq", p["question_id"] + "_gp"]
        assert g["cells"][2]["answer"] != rec["answer"]  # the same question, another answer
        if g["kind"] == "swap":
            assert (g["cells"][2]["answer"], g["cells"][3]["answer"]) == (p["answer"], rec["answer"])


def test_without_groups_not_a_byte_changes(engine, sample, grouped):
    questions, graphs = sample
    plain = generate(questions, graphs, engine=engine, max_k=5, seed=0, workers=1, mode="both")
    assert "groups" not in plain.stats
    stripped = []
    for line in grouped.lines:
        rec = orjson.loads(line)
        for p in rec["perturbations"]:
            p.pop("group", None)
        stripped.append(rec)
    assert [orjson.loads(line) for line in plain.lines] == stripped
    assert not any(b'"group"' in line for line in plain.lines)
    assert [v.gqa for v in plain.views] == [v.gqa for v in grouped.views]


def test_the_same_inputs_and_seed_give_the_same_groups_whatever_the_workers(engine, tmp_path):
    import synth

    qpath, gpath = synth.write_dataset(tmp_path / "synth", 600, 2400, seed=4, workers=1)  # 3 shards
    questions, graphs = load_questions(qpath), load_scene_graphs(gpath)
    one = generate(questions, graphs, engine=engine, max_k=3, seed=1, workers=1, groups=True)
    two = generate(questions, graphs, engine=engine, max_k=3, seed=1, workers=2, groups=True)
    assert list(one.lines) == list(two.lines) and one.stats == two.stats
    assert one.stats["groups"]["grouped"] > 20
    assert verify_contrast_sets(one.records, graphs).ok


def test_a_cell_that_does_not_hold_is_turned_down(grouped, sample):
    graphs = sample[1]
    rec, p = next((r, p) for r, p in _groups(grouped) if p["group"]["kind"] == "swap")

    def tampered(change) -> list[str]:
        r = copy.deepcopy(rec)
        q = next(x for x in r["perturbations"] if x["question_id"] == p["question_id"])
        change(q["group"])
        report = verify_contrast_sets([r], graphs)
        return [f.problem for f in report.failures if f.check == "group"]

    def wrong_answer(g):
        g["cells"][3]["answer"] = g["cells"][3]["evidence"]["answer"] = "maybe"

    def same_image(g):
        g["images"][1] = g["cells"][2]["image_id"] = g["cells"][3]["image_id"] = rec["image_id"]

    def other_program(g):
        g["cells"][2]["semantic"] = g["cells"][3]["semantic"]

    def claimed_swap_that_is_not(g):
        g["cells"][2]["answer"] = g["cells"][2]["evidence"]["answer"] = rec["answer"]

    def missing_image(g):
        g["images"][1] = g["cells"][2]["image_id"] = g["cells"][3]["image_id"] = "no-such-image"

    for change in (wrong_answer, same_image, other_program, claimed_swap_that_is_not, missing_image):
        assert tampered(change), change.__name__
    assert not tampered(lambda g: None)


def test_a_reference_to_more_objects_than_the_words_say_is_turned_down(grouped, sample):
    """A J cell whose listed ids are not every object its words denote there: "the X" is then not
    what the words pick out."""
    graphs = sample[1]
    for rec, p in _groups(grouped):
        cell = p["group"]["cells"][2]
        step = next((s for s in cell["semantic"] if s["operation"] == "select" and s["argument"].endswith(")")
                     and "-" not in s["argument"]), None)
        if step is None:
            continue
        others = [o for o in graphs[cell["image_id"]]["objects"] if o not in step["argument"]]
        name = step["argument"].rpartition("(")[0].strip()
        r = copy.deepcopy(rec)
        q = next(x for x in r["perturbations"] if x["question_id"] == p["question_id"])
        s = next(s for s in q["group"]["cells"][2]["semantic"] if s["argument"] == step["argument"])
        s["argument"] = f"{name} ({','.join([step['argument'].rpartition('(')[2][:-1], others[0]])})"
        assert not verify_contrast_sets([r], graphs).ok
        return
    pytest.fail("no group with a definite reference on the sample")


def test_the_index_finds_exactly_the_images_that_have_what_is_asked(engine, sample):
    graphs = sample[1]
    index = GroupIndex.build(graphs, engine.lex)
    keys = {image: set() for image in graphs}
    for image, g in graphs.items():
        for o in g["objects"].values():
            keys[image].add("n:" + engine.lex.canonical(o["name"].strip().lower()))
            keys[image].update("a:" + a.strip().lower() for a in o.get("attributes") or ())
            keys[image].update("r:" + r["name"].strip().lower() for r in o.get("relations") or ())
    common = sorted({k for ks in keys.values() for k in ks})
    rng = np.random.default_rng(0)
    for _ in range(200):
        asked = frozenset(frozenset(rng.choice(common, size=rng.integers(1, 3), replace=False).tolist())
                          for _ in range(rng.integers(1, 3)))
        want = [i for i, ks in sorted(keys.items()) if all(ks & alt for alt in asked)]
        start = int(rng.integers(0, len(graphs)))
        # the walk begins at the first image at or after `start` and goes round once
        after = [i for i in want if index.image_ids.index(i) >= start]
        assert [index.image_ids[p] for p in index.walk(asked, start)] == after + want[:len(want) - len(after)]
    assert list(index.walk(frozenset(), 3)) == [*range(3, len(graphs)), *range(3)]


def test_the_search_is_bounded_and_depends_only_on_the_seed(engine, sample, grouped):
    questions, graphs = sample
    again = generate(questions, graphs, engine=engine, max_k=5, seed=0, workers=1, mode="both", groups=True)
    other = generate(questions, graphs, engine=engine, max_k=5, seed=7, workers=1, mode="both", groups=True)
    assert list(again.lines) == list(grouped.lines)
    images = [p["group"]["images"][1] for _, p in _groups(grouped)]
    moved = [p["group"]["images"][1] for _, p in _groups(other)]
    assert images != moved  # the seed decides where the walk over the candidates begins
    assert MAX_TRIED <= 4
    json.dumps(grouped.stats["groups"])  # the stats stay plain JSON


def test_the_walk_over_a_large_corpus_meets_what_the_whole_intersection_holds_in_its_order():
    # postings from dense to rare, so the walk reads many windows of its leading postings
    rng = np.random.default_rng(1)
    size = 20_000
    postings = {f"n:{d}": np.flatnonzero(rng.random(size) < d).astype(np.int32)
                for d in (0.9, 0.5, 0.2, 0.05, 0.01, 0.001)}
    index = GroupIndex([f"{i:06d}" for i in range(size)], postings, {})
    held = {k: set(v.tolist()) for k, v in postings.items()}
    for _ in range(60):
        asked = frozenset(frozenset(rng.choice(sorted(postings), size=rng.integers(1, 3), replace=False).tolist())
                          for _ in range(rng.integers(1, 4)))
        want = [p for p in range(size) if all(any(p in held[k] for k in alt) for alt in asked)]
        start = int(rng.integers(0, size))
        assert list(index.walk(asked, start)) == [p for p in want if p >= start] + [p for p in want if p < start]
    assert list(index.walk(frozenset({frozenset({"n:absent"})}), 5)) == []


def test_merged_postings_forgotten_when_the_memory_is_full_give_the_same_walks(monkeypatch):
    """Requirements of several keys are merged once and remembered; a bounded memory that empties
    itself changes nothing in the walks."""
    import contrastgen.groups.index as group_index

    rng = np.random.default_rng(2)
    size = 3_000
    postings = {f"n:{i}": np.flatnonzero(rng.random(size) < 0.1).astype(np.int32) for i in range(12)}
    asked = [frozenset({frozenset(rng.choice(sorted(postings), size=3, replace=False).tolist())})
             for _ in range(40)]
    roomy = GroupIndex([f"{i:05d}" for i in range(size)], postings, {})
    want = [list(roomy.walk(a, 100)) for a in asked]
    monkeypatch.setattr(group_index, "MERGED_KEPT", 3)
    tight = GroupIndex([f"{i:05d}" for i in range(size)], postings, {})
    assert [list(tight.walk(a, 100)) for a in asked] == want
    assert len(tight._merged) <= 3 < len(roomy._merged)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_from_files_groups_as_the_library_does(engine, sample, grouped, workers):
    """From files, the index is built as the graphs are read and candidates are read from their
    lookup records, not from the graphs: the same groups, byte for byte."""
    from contrastgen.cli.engine_cmds import sample_paths
    from contrastgen.run.pipeline import RunRequest, generate_files

    questions, graphs = sample_paths()
    from_files = generate_files(RunRequest(questions, graphs, max_k=5, seed=0, workers=workers, groups=True,
                                           options={"engine": engine, "mode": "both"}))
    assert list(from_files.lines) == list(grouped.lines) and from_files.stats == grouped.stats


def test_the_index_built_as_graphs_are_read_is_the_index_and_its_records_read_back_to_the_scenes(
        engine, sample, tmp_path):
    from contrastgen.groups.index import IndexBuilder, RecordFile
    from contrastgen.scene.index import SceneIndex

    graphs = sample[1]
    built = GroupIndex.build(graphs, engine.lex)
    builder = IndexBuilder(engine.lex, RecordFile(tmp_path / "lookup.bin"))
    for image_id in reversed(list(graphs)):  # any reading order gives the same positions
        builder.add(image_id, graphs[image_id])
    streamed = builder.finish(graphs)
    assert streamed.image_ids == built.image_ids and streamed.postings.keys() == built.postings.keys()
    assert all(np.array_equal(streamed.postings[k], built.postings[k]) for k in built.postings)
    assert built.records is None and len(streamed.records) == len(graphs)
    for image_id, graph in graphs.items():
        whole = SceneIndex.build(image_id, graph, engine.lex)
        read = SceneIndex.from_lookup_record(image_id, streamed.records[image_id])
        assert (read.objects, read.by_name, read.by_canonical, read.edges) == (
            whole.objects, whole.by_name, whole.by_canonical, whole.edges)
        assert read.out_edges == whole.out_edges and read.in_edges == whole.in_edges
        assert read.graph == {k: v for k, v in graph.items() if k != "objects"}


def test_steps_are_read_once_each_apart_by_every_part_and_the_memory_stays_bounded(engine, monkeypatch):
    """The search reads each distinct step once (`_ReadSteps`): steps that differ only in their
    dependencies or argument read apart, a step seen before still refuses a pronoun by ids, and
    the table empties itself at its limit."""
    from collections import Counter

    import contrastgen.groups.search as search
    from contrastgen.groups.index import GroupIndex
    from contrastgen.groups.search import GroupFinder

    monkeypatch.setattr(search._ReadSteps, "LIMIT", 3)
    monkeypatch.setattr(search, "_STEPS", search._ReadSteps())
    finder, reasons = GroupFinder(GroupIndex([], {}, {}), engine.lex), Counter()
    select = {"operation": "select", "argument": "cat (1)", "dependencies": []}
    first = finder._steps([select, {"operation": "query", "argument": "color", "dependencies": [0]}], reasons)
    other = finder._steps([select, {"operation": "exist", "argument": "", "dependencies": [0]},
                           {"operation": "query", "argument": "color", "dependencies": [1]}], reasons)
    assert first is not None and other is not None
    assert first[1].dependencies == (0,) and other[2].dependencies == (1,) and first[0] is other[0]
    he = [{"operation": "select", "argument": "he (2)", "dependencies": []}]
    assert finder._steps(he, reasons) is None and finder._steps(he, reasons) is None
    assert reasons["unnameable"] == 2 and len(search._STEPS) <= 3
    assert finder._steps([{"argument": "cat"}], reasons) is None and reasons["no_program"] == 1


def test_every_step_of_the_sample_reads_as_step_of_and_unnameable_read_it_and_fills_no_shared_cache(
        engine, sample, grouped, monkeypatch):
    """`_ReadSteps` parses a step without `step_of`'s cache and tests it without `read_reference`'s:
    over every step of the sample's programs and of their perturbations (and steps written to
    test the edges: pronouns and "scene" with and without ids, spaces, a relation argument), each
    reads to what `step_of` and the rule as `split_reference` and `relation_of` say give, and
    reading them adds nothing to their caches (the steps, the references, the splits)."""
    import contrastgen.groups.search as search
    from contrastgen.datasets.gqa_program import (
        REFERENCE_OPS,
        _step,
        read_reference,
        relation_of,
        split_reference,
        step_of,
    )

    questions, _ = sample
    steps = [s for q in questions.values() if isinstance(q.get("semantic"), list) for s in q["semantic"]]
    steps += [s for r in grouped.records for p in r["perturbations"] if isinstance(p.get("program"), dict)
              for s in p["program"].get("semantic") or ()]
    steps += [{"operation": op, "argument": arg, "dependencies": [0]}
              for op in ("select", "relate", " filter  color ", "query", "verify rel", "choose rel")
              for arg in ("he (2)", "he", " scene (3) ", "scene", "it (4,5)", "cat (-)", "cat (1, 2)",
                          "man,wearing,s (1)", "he,wearing,o (1)", " they ,to the left of,s", "red")]
    assert len(steps) > 500 and any(s["argument"].startswith("he (") for s in steps)
    monkeypatch.setattr(search, "_STEPS", search._ReadSteps())
    step_of(steps[0])  # the caches as `step_of` and the rule leave them, before any step below is read
    before = (_step.cache_info().currsize, read_reference.cache_info().currsize, split_reference.cache_info().currsize)
    read = [search._STEPS[s["operation"], str(s.get("argument", "")), tuple(s.get("dependencies", ()))]
            for s in steps]
    assert (_step.cache_info().currsize, read_reference.cache_info().currsize,
            split_reference.cache_info().currsize) == before
    refused = 0
    for s, got in zip(steps, read, strict=True):
        slow = step_of(s)
        unnameable = (slow.operation in REFERENCE_OPS and split_reference(slow.argument)[1] is not None
                      and relation_of(slow)[0] in search._NOT_NAMES)
        assert got == (None if unnameable else slow), s
        assert got is None or (got.head, got.kind) == (slow.head, slow.kind)
        refused += unnameable
    assert refused >= 12  # the pronouns and "scene" with ids, under each reference operation


def test_a_programs_shape_is_read_once_per_shape_apart_by_its_dependencies_and_the_memory_stays_bounded(
        engine, monkeypatch):
    """`shape_of` remembers what a program's operations and dependencies say: programs that
    differ only in their arguments share it (and their requirements follow their own words),
    a program whose dependencies differ reads its own, and the table empties itself at its
    limit. Each shape read from the table equals the one read afresh."""
    import contrastgen.groups.search as search
    from contrastgen.datasets.gqa_program import step_of

    monkeypatch.setattr(search._Shapes, "LIMIT", 2)
    monkeypatch.setattr(search, "_SHAPES", search._Shapes())

    def program(*steps: tuple[str, str, list[int]]) -> list:
        return [step_of({"operation": o, "argument": a, "dependencies": d}) for o, a, d in steps]

    cat = program(("select", "cat (1)", []), ("filter color", "white", [0]), ("query", "material", [1]))
    dog = program(("select", "dog (2)", []), ("filter color", "black", [0]), ("query", "material", [1]))
    bare = program(("select", "cat (1)", []), ("filter color", "white", [0]), ("exist", "?", [1]))
    assert search.shape_of(cat) is search.shape_of(dog)
    # the same operations, the query reading the select itself: "the cat", not "the white cat"
    rewired = program(("select", "cat (1)", []), ("filter color", "white", [0]), ("query", "material", [0]))
    assert search.shape_of(rewired).presupposed == {0}
    assert search.shape_of(cat).presupposed == search.presupposed(cat) == {0, 1}
    assert search.shape_of(bare).presupposed == set() and search.requirements(bare, engine.lex) == frozenset()
    assert frozenset({"a:white"}) in search.requirements(cat, engine.lex)
    assert frozenset({"a:black"}) in search.requirements(dog, engine.lex)
    assert "n:cat" in set().union(*search.requirements(cat, engine.lex))
    assert len(search._SHAPES) <= 2
    for p in (cat, dog, bare, rewired):
        assert search.shape_of(p) == search._read_shape(p)
    worn = program(("select", "man (3)", []), ("relate", "shirt,wearing,o (4)", [0]), ("query", "color", [1]))
    assert search.said_unannotated(worn, engine.lex) and not search.said_unannotated(cat, engine.lex)


class _QuestionsReadAfter:
    """Stands for the questions' job of a two-process load: done after `graphs` graphs are read."""

    def __init__(self, graphs: int):
        self.asked, self.graphs = 0, graphs

    def ready(self) -> bool:
        self.asked += 1
        return self.asked > self.graphs


@pytest.mark.parametrize("indexed_here", [0, 5, 10_000])
def test_graphs_handed_to_the_loading_helper_give_the_index_and_records_of_one_process(engine, tmp_path, indexed_here):
    """A two-process load indexes graphs here until the questions are read, then hands the rest
    to the helper in batches (one handed from its middle when the switch falls inside it): the
    index and every lookup record, byte for byte, are those one builder makes of all the graphs."""
    from contrastgen.cli.engine_cmds import sample_paths
    from contrastgen.datasets.gqa import load_scene_graphs
    from contrastgen.datasets.question_spill import GraphSpill
    from contrastgen.families.gqa_index_load import HelperIndex, SharedIndexing
    from contrastgen.groups.index import IndexBuilder, RecordFile
    from contrastgen.scene.index import SceneIndex

    path = sample_paths()[1]
    graphs = load_scene_graphs(path)
    builder = IndexBuilder(engine.lex, RecordFile(tmp_path / "lookup.bin"))
    from contrastgen.parallel.tasks import helper

    with helper(HelperIndex(engine.lex)) as beside:
        sharing = SharedIndexing(builder, beside, _QuestionsReadAfter(indexed_here), tmp_path)
        spill = GraphSpill(path, tmp_path, sharing.each)
        for batch in spill.batches(4):
            sharing.batch_written(batch)
        handed = sum(len(r.get()[0]) for r in sharing._results)
        sharing.join()
    index = builder.finish(spill.graphs())
    assert handed == max(0, len(graphs) - indexed_here)
    built = GroupIndex.build(graphs, engine.lex)
    assert index.image_ids == built.image_ids and index.postings.keys() == built.postings.keys()
    assert all(np.array_equal(index.postings[k], built.postings[k]) for k in built.postings)
    assert len(index.records) == len(graphs)
    assert all(index.records[i] == SceneIndex.lookup_record(g, engine.lex) for i, g in graphs.items())


def test_an_image_is_indexed_for_the_search_only_when_a_record_has_a_pair_to_group(engine, sample):
    """The search asks for the image's scene only for a record with a contrast pair whose two
    questions have programs; records without one count nothing and build nothing."""
    from collections import Counter

    from contrastgen.groups.record import PAIRS, add_groups
    from contrastgen.groups.search import GroupFinder

    class Untouchable:
        @property
        def scene(self):
            raise AssertionError("the scene was asked for a record with nothing to group")

    _, graphs = sample
    finder = GroupFinder(GroupIndex.build(graphs, engine.lex), engine.lex)
    from contrastgen.perturb import PerturbResult
    from contrastgen.records import Perturbation

    def perturbation(kind, program):
        return Perturbation("q_1", "q", "a", 1, {"kind": "object"}, {"facts": []}, program, kind)

    results = [PerturbResult("q", "1", "q", "a", "t",
                             program=[{"operation": "select", "argument": "cat", "dependencies": []}],
                             perturbations=[perturbation("invariance", {"semantic": []}), perturbation("contrast", {})]),
               PerturbResult("r", "1", "r", "a", "t", program=None,
                             perturbations=[perturbation("contrast", {"semantic": []})])]
    counts: Counter = Counter()
    add_groups(results, Untouchable(), finder, 0, counts)
    assert counts[PAIRS] == 0


def test_the_command_line_names_the_kinds_as_stats_json_does(tmp_path):
    from click.testing import CliRunner

    from contrastgen.cli import cli
    from contrastgen.cli.engine_cmds import sample_paths

    questions, graphs = sample_paths()
    result = CliRunner().invoke(cli, ["generate", "--questions", str(questions), "--scene-graphs", str(graphs),
                                      "--out", str(tmp_path / "o"), "--no-progress", "--workers", "1", "--groups"])
    assert result.exit_code == 0, result.output
    g = json.loads((tmp_path / "o" / "stats.json").read_text())["groups"]
    assert f"({g['swap']:,} swaps, {g['differs']:,} differs)" in result.output
