"""`contrastgen generate / match / augment` end to end on the shipped sample data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.cli.engine_cmds import sample_paths

QUESTIONS, GRAPHS = sample_paths()


def _generate(out: Path, *extra: str) -> None:
    result = CliRunner().invoke(cli, ["generate", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS),
                                      "--out", str(out), "--no-progress", *extra])
    assert result.exit_code == 0, result.output


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def k5(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "k5"
    _generate(out, "--workers", "1")
    return out


def _records(d: Path) -> list[dict]:
    return [json.loads(line) for line in (d / "contrast_sets.jsonl").read_text().splitlines()]


def test_outputs_exist_and_cover_every_template(k5):
    for name in ("contrast_sets.jsonl", "original.json", "augmented.json", "augmented_k1.json",
                 "augmented_k3.json", "stats.json", "stats.md", "lxmert/augmented.json"):
        assert (k5 / name).is_file(), name
    templates = {r["template"] for r in _records(k5)}
    assert len(templates) == 6
    stats = json.loads((k5 / "stats.json").read_text())
    assert stats["reasons"]["no_scene_graph"] > 0  # the sample has questions without a graph
    lx = json.loads((k5 / "lxmert" / "augmented.json").read_text())
    assert set(lx[0]) == {"img_id", "label", "question_id", "sent"}


def test_deterministic_and_independent_of_workers(k5, tmp_path):
    _generate(tmp_path / "again", "--workers", "1")
    _generate(tmp_path / "parallel", "--workers", "2")
    assert _files(tmp_path / "again") == _files(k5)
    assert _files(tmp_path / "parallel") == _files(k5)


def test_another_seed_changes_choices(k5, tmp_path):
    _generate(tmp_path / "s1", "--seed", "1", "--workers", "1")
    assert _files(tmp_path / "s1")["contrast_sets.jsonl"] != _files(k5)["contrast_sets.jsonl"]


def test_k_sets_are_nested(k5, tmp_path):
    _generate(tmp_path / "k1", "--max-k", "1", "--workers", "1")
    _generate(tmp_path / "k3", "--max-k", "3", "--workers", "1")
    by_k = {k: {p["question_id"]: p for r in _records(d) for p in r["perturbations"]}
            for k, d in ((1, tmp_path / "k1"), (3, tmp_path / "k3"), (5, k5))}
    assert set(by_k[1]) <= set(by_k[3]) <= set(by_k[5])
    assert set(by_k[1]) == {i for i, p in by_k[5].items() if p["rank"] <= 1}
    assert set(by_k[3]) == {i for i, p in by_k[5].items() if p["rank"] <= 3}
    assert all(by_k[1][i] == by_k[5][i] for i in by_k[1])
    aug_k1 = json.loads((k5 / "augmented_k1.json").read_text())
    assert {q for q in aug_k1 if "contrast" in aug_k1[q]} == set(by_k[1])


def test_every_perturbation_verifies_and_tampering_fails(k5, tmp_path):
    runner = CliRunner()
    ok = runner.invoke(cli, ["verify", str(k5), "--scene-graphs", str(GRAPHS)])
    assert ok.exit_code == 0, ok.output
    bad = tmp_path / "bad"
    bad.mkdir()
    records = _records(k5)
    p = records[0]["perturbations"][0]
    p["answer"] = records[0]["answer"]
    (bad / "contrast_sets.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    failed = runner.invoke(cli, ["verify", str(bad), "--scene-graphs", str(GRAPHS)])
    assert failed.exit_code == 1


def test_perturbations_change_one_atom_and_the_answer(k5):
    questions = json.loads(QUESTIONS.read_text())
    for r in _records(k5):
        assert r["question"] == questions[r["question_id"]]["question"]
        for p in r["perturbations"]:
            assert p["answer"] != r["answer"]
            assert p["change"]["from"] != p["change"]["to"]
            assert p["question"] != r["question"] and p["question"].endswith("?")
            assert p["question"][0].isupper()


def test_match_cli_prints_jsonl(tmp_path):
    result = CliRunner().invoke(cli, ["match", str(QUESTIONS)])
    assert result.exit_code == 0
    lines = [json.loads(x) for x in result.output.splitlines()]
    assert lines and all(set(x) == {"question_id", "template", "slots"} for x in lines)
    assert all(x["template"] and "x" in x["slots"] and "x_head" in x["slots"] for x in lines)
    everything = CliRunner().invoke(cli, ["match", str(QUESTIONS), "--all"])
    assert any(json.loads(x)["template"] is None for x in everything.output.splitlines())


def test_augment_replace_keeps_size(tmp_path):
    runner = CliRunner()
    out = tmp_path / "train_aug.json"
    r = runner.invoke(cli, ["augment", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS),
                            "--out", str(out), "--replace", "--max-k", "1", "--workers", "1"])
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    original = json.loads(QUESTIONS.read_text())
    assert len(data) == len(original)
    assert any("contrast" in q for q in data.values())
    plain = tmp_path / "plain.json"
    runner.invoke(cli, ["augment", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS),
                        "--out", str(plain), "--workers", "1"])
    assert len(json.loads(plain.read_text())) > len(original)


def test_augment_writes_the_same_questions_in_lxmert_format(tmp_path):
    out = tmp_path / "train_aug.json"
    r = CliRunner().invoke(cli, ["augment", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS),
                                 "--out", str(out), "--max-k", "1", "--workers", "1"])
    assert r.exit_code == 0, r.output
    gqa = json.loads(out.read_text())
    lxmert = json.loads((tmp_path / "train_aug.lxmert.json").read_text())
    assert [item["question_id"] for item in lxmert] == sorted(gqa)
    for item in lxmert:
        q = gqa[item["question_id"]]
        assert (item["sent"], item["img_id"], item["label"]) == (q["question"], q["imageId"], {q["answer"]: 1.0})
    assert any("contrast" in gqa[item["question_id"]] for item in lxmert)


@pytest.mark.parametrize("replace,seed,mode,max_k", [(False, 0, "templates", 5), (True, 5, "templates", 5),
                                                     (True, 0, "both", 1), (True, 1, "both", 5)])
def test_augment_streams_the_files_the_in_memory_writer_writes(tmp_path, replace, seed, mode, max_k):
    """The CLI reads the questions from their files (a directory of shards here) and never holds
    them; the library's writer takes them in memory. Same bytes, both formats."""
    import synth

    from contrastgen.datasets.gqa import load_questions, load_scene_graphs
    from contrastgen.engine import Engine
    from contrastgen.run.generate import generate
    from contrastgen.writers.augmented import write_augmented_training

    questions, graphs = synth.write_dataset(tmp_path / "synth", 40, 600, seed=2, workers=1)
    items = list(json.loads(questions.read_text()).items())
    (tmp_path / "shards").mkdir()
    for n, start in enumerate(range(0, len(items), 250)):
        (tmp_path / "shards" / f"train_all_questions_{n}.json").write_text(json.dumps(dict(items[start:start + 250])))
    r = CliRunner().invoke(cli, ["augment", "--questions", str(tmp_path / "shards"), "--scene-graphs", str(graphs),
                                 "--out", str(tmp_path / "streamed.json"), "--workers", "2", "--seed", str(seed),
                                 "--mode", mode, "--max-k", str(max_k), *(["--replace"] if replace else [])])
    assert r.exit_code == 0, r.output
    qs = load_questions(tmp_path / "shards")
    gen = generate(qs, load_scene_graphs(graphs), engine=Engine.load(), max_k=max_k, seed=seed, mode=mode, workers=1)
    counts = write_augmented_training(gen, qs, tmp_path / "memory.json", replace=replace, seed=seed,
                                      lxmert_file=tmp_path / "memory.lxmert.json")
    assert counts["added"] > 0 and (counts["dropped"] > 0) == replace
    assert (tmp_path / "streamed.json").read_bytes() == (tmp_path / "memory.json").read_bytes()
    assert (tmp_path / "streamed.lxmert.json").read_bytes() == (tmp_path / "memory.lxmert.json").read_bytes()
    assert f"{counts['original']} originals + {counts['added']} perturbations - {counts['dropped']} dropped" in r.output


# -- bad input -----------------------------------------------------------------------------------

def _bad(tmp_path: Path, questions: str | None = None, graphs: str | None = None, *extra: str):
    q = tmp_path / "q.json"
    g = tmp_path / "g.json"
    q.write_text(questions if questions is not None else QUESTIONS.read_text())
    g.write_text(graphs if graphs is not None else GRAPHS.read_text())
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["generate", "--questions", str(q), "--scene-graphs", str(g),
                                      "--out", str(out), "--no-progress", *extra])
    return result, out


@pytest.mark.parametrize("questions,needle", [
    ('{"q1": {"imageId": "1", "question": "Is', "malformed JSON"),
    ("", "empty"),
    ('{"q7": {"imageId": "1"}}', "q7"),
    ('{"q8": {"imageId": "1", "question": 5}}', "q8"),
    ("[1, 2]", "object keyed by question id"),
])
def test_bad_questions_name_file_and_record(tmp_path, questions, needle):
    result, out = _bad(tmp_path, questions=questions)
    assert result.exit_code == 2
    assert needle in result.output and "q.json" in result.output
    assert not out.exists()


def test_bad_scene_graph_names_image_and_object(tmp_path):
    graphs = json.dumps({"img9": {"width": 100, "objects": {"o1": {"name": "cat", "x": 1, "y": 1, "w": 1, "h": 1,
                                                                      "relations": [{"name": "near", "object": "o2"}]}}}})
    result, out = _bad(tmp_path, graphs=graphs)
    assert result.exit_code == 2 and "img9" in result.output and "o1" in result.output
    assert not out.exists()


def _graph_with(**changes) -> str:
    obj = {"name": "cat", "x": 1, "y": 1, "w": 1, "h": 1, "attributes": ["black"], "relations": []}
    obj.update(changes)
    return json.dumps({"img9": {"width": 100, "objects": {"o1": {k: v for k, v in obj.items() if v is not None}}}})


@pytest.mark.parametrize("changes,needle", [
    ({"name": None}, "'name'"),
    ({"name": "  "}, "'name'"),
    ({"x": "1"}, "'x'"),
    ({"w": True}, "'w'"),  # a bool is not a coordinate
    ({"h": None}, "'h'"),
    ({"attributes": "black"}, "'attributes'"),
    ({"attributes": ["black", 3]}, "'attributes'"),
    ({"relations": {"name": "near"}}, "'relations'"),
    ({"relations": [{"object": "o1"}]}, "'name'"),
])
def test_bad_scene_graph_objects_name_the_field(tmp_path, changes, needle):
    result, out = _bad(tmp_path, graphs=_graph_with(**changes))
    assert result.exit_code == 2, result.output
    assert needle in result.output and "img9" in result.output and "o1" in result.output
    assert not out.exists()


def test_a_valid_object_passes_the_scene_graph_checks():
    from contrastgen.datasets.gqa import validate_scene_graph

    graph = json.loads(_graph_with(relations=[{"name": "near", "object": "o1"}]))["img9"]
    assert validate_scene_graph("img9", graph) is graph


def test_generate_prints_the_seconds_of_each_phase(tmp_path):
    result = CliRunner().invoke(cli, ["generate", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS),
                                      "--out", str(tmp_path / "out"), "--no-progress", "--workers", "1"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("seconds: "))
    phases = dict(p.rsplit(" ", 1) for p in line.removeprefix("seconds: ").split(", "))
    assert list(phases) == ["engine", "load", "generation", "write", "total"]
    assert all(float(v) >= 0 for v in phases.values())


def test_unknown_template_is_an_error(tmp_path):
    result, out = _bad(tmp_path, None, None, "--templates", "what_colour")
    assert result.exit_code == 2 and "what_colour" in result.output
    assert not out.exists()


def test_failed_run_keeps_previous_output(k5, tmp_path):
    import shutil
    out = tmp_path / "out"
    shutil.copytree(k5, out)
    before = _files(out)
    result, _ = _bad(tmp_path, questions="{")
    assert result.exit_code == 2
    assert _files(out) == before


def test_every_reason_is_a_documented_one(k5):
    from contrastgen.families import all_reasons

    REASONS = all_reasons()

    stats = json.loads((k5 / "stats.json").read_text())
    seen = set(stats["reasons"]) | {r for t in stats["templates"].values() for r in t["reasons"]}
    assert seen and seen <= set(REASONS)
    repo = Path(__file__).resolve().parents[2]
    docs = "".join(p.read_text() for p in [repo / "README.md", *sorted((repo / "docs").glob("*.md"))])
    assert all(f"`{r}`" in docs for r in REASONS), [r for r in REASONS if f"`{r}`" not in docs]
    import re

    handlers = Path(__file__).resolve().parents[2] / "contrastgen" / "templates"
    raised = {m for f in handlers.glob("*.py") for m in re.findall(r'Refusal\("([a-z_]+)"\)', f.read_text())}
    assert raised and raised <= set(REASONS)


def _kinds_everywhere(out: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Each perturbation's `kind`, in contrast_sets.jsonl and in the GQA-format view's `contrast`."""
    kinds = {p["question_id"]: p["kind"] for r in _records(out) for p in r["perturbations"]}
    view = json.loads((out / "augmented.json").read_text())
    return kinds, {qid: q["contrast"]["kind"] for qid, q in view.items() if "contrast" in q}


def test_every_perturbation_says_its_kind_in_every_output(tmp_path):
    """A user filtering on `kind` (or training on the augmented view) finds every contrast: the
    templates' are contrasts by construction, the program path's are contrasts or invariances."""
    out = tmp_path / "both"
    _generate(out, "--workers", "1", "--mode", "both")
    kinds, in_view = _kinds_everywhere(out)
    assert set(kinds.values()) == {"contrast", "invariance"}
    assert in_view == kinds
    for r in _records(out):
        if r["template"] != "program":
            assert {p["kind"] for p in r["perturbations"]} == {"contrast"}, r["question_id"]


@pytest.mark.parametrize("questions,needle", [
    ('{"q1": {"imageId": "1", "question": "Is', "malformed JSON"),
    ("", "empty"),
    ('{"q7": {"imageId": "1"}}', "q7"),
])
def test_augment_refuses_bad_questions_and_writes_nothing(tmp_path, questions, needle):
    (tmp_path / "q.json").write_text(questions)
    out = tmp_path / "aug" / "train.json"
    out.parent.mkdir()
    result = CliRunner().invoke(cli, ["augment", "--questions", str(tmp_path / "q.json"), "--scene-graphs",
                                      str(GRAPHS), "--out", str(out)])
    assert result.exit_code == 2 and needle in result.output and "q.json" in result.output
    assert list(out.parent.iterdir()) == []


def test_a_run_whose_images_have_no_scene_graph_says_so(tmp_path):
    graphs = json.loads(GRAPHS.read_text())
    first = next(q for q in json.loads(QUESTIONS.read_text()).values() if q["imageId"] in graphs)
    qs = {"q1": first, "q2": {**first, "imageId": "no-such-image"}}
    (tmp_path / "q.json").write_text(json.dumps(qs))
    for command, out in (("generate", tmp_path / "out"), ("augment", tmp_path / "train.json")):
        result = CliRunner().invoke(cli, [command, "--questions", str(tmp_path / "q.json"), "--scene-graphs",
                                          str(GRAPHS), "--out", str(out), "--workers", "1"])
        assert result.exit_code == 0, result.output
        assert "warning: 1 of 2 images have no scene graph" in result.output


def test_questions_given_twice_are_all_read_and_a_file_given_twice_is_refused(tmp_path, k5):
    """`--questions A --questions B` reads A and B (a user splitting a file expects every question
    back), and the output is the one run of the whole file gives."""
    qs = json.loads(QUESTIONS.read_text())
    ids = sorted(qs)
    (tmp_path / "a.json").write_text(json.dumps({k: qs[k] for k in ids[: len(ids) // 2]}))
    (tmp_path / "b.json").write_text(json.dumps({k: qs[k] for k in ids[len(ids) // 2:]}))
    out = tmp_path / "two"
    result = CliRunner().invoke(cli, ["generate", "--questions", str(tmp_path / "a.json"), "--questions",
                                      str(tmp_path / "b.json"), "--scene-graphs", str(GRAPHS), "--out", str(out),
                                      "--no-progress", "--workers", "1"])
    assert result.exit_code == 0, result.output
    whole = json.loads((k5 / "stats.json").read_text())
    stats = json.loads((out / "stats.json").read_text())
    assert stats["questions"] == whole["questions"] == len(qs)
    assert _files(out)["contrast_sets.jsonl"] == _files(k5)["contrast_sets.jsonl"]
    again = CliRunner().invoke(cli, ["generate", "--questions", str(tmp_path / "a.json"), "--questions",
                                     str(tmp_path / "a.json"), "--scene-graphs", str(GRAPHS),
                                     "--out", str(tmp_path / "twice"), "--no-progress"])
    assert again.exit_code == 2 and "file given twice" in again.output and "a.json" in again.output


def test_clevr_question_files_given_together_are_keyed_by_file():
    from contrastgen.datasets.clevr import load_questions
    from contrastgen.resources import clevr_sample_dir

    files = sorted((clevr_sample_dir() / "questions").glob("*.json"))
    one_by_one = [load_questions(f) for f in files]
    together = load_questions(tuple(files))
    assert len(together) == sum(len(q) for q in one_by_one) == 463
    assert {k.split("/")[0] for k in together} == {f.stem for f in files}


@pytest.mark.parametrize("share", [None, "0.2"])
def test_augment_replace_keeps_at_least_the_share_of_originals_and_says_what_it_did(tmp_path, share):
    """More perturbations than half the originals (k = 5 on the sample): --replace keeps the size,
    replaces at most the share asked (half by default), and says so."""
    out = tmp_path / "train.json"
    extra = [] if share is None else ["--replace-share", share]
    r = CliRunner().invoke(cli, ["augment", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS),
                                 "--out", str(out), "--replace", "--max-k", "5", "--workers", "1", *extra])
    assert r.exit_code == 0, r.output
    original = json.loads(QUESTIONS.read_text())
    data = json.loads(out.read_text())
    kept = [qid for qid in data if qid in original]
    bound = int(len(original) * float(share or 0.5))
    assert len(data) == len(original)
    assert len(original) - len(kept) == bound
    assert f"--replace: {bound} of {len(original)} originals" in r.output
    assert "perturbations left out" in r.output
    # the lowest ranks are kept: no rank-2 perturbation while a rank-1 one was left out
    ranks = [q["contrast"]["rank"] for q in data.values() if "contrast" in q]
    assert ranks and min(ranks) == 1


def test_mode_both_on_questions_without_programs_warns(tmp_path):
    qs = {k: {f: v for f, v in q.items() if f != "semantic"} for k, q in json.loads(QUESTIONS.read_text()).items()}
    (tmp_path / "q.json").write_text(json.dumps(qs))
    for command, out in (("generate", tmp_path / "out"), ("augment", tmp_path / "train.json")):
        result = CliRunner().invoke(cli, [command, "--questions", str(tmp_path / "q.json"), "--scene-graphs",
                                          str(GRAPHS), "--out", str(out), "--workers", "1", "--mode", "both"])
        assert result.exit_code == 0, result.output
        assert "warning: --mode both: no question has a program (`semantic`)" in result.output, command
    with_programs = CliRunner().invoke(cli, ["generate", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS),
                                             "--out", str(tmp_path / "p"), "--workers", "1", "--mode", "both"])
    assert with_programs.exit_code == 0 and "no question has a program" not in with_programs.output


def test_piped_tables_keep_whole_template_names(tmp_path):
    # CliRunner's output is no terminal, as a pipe or a CI log is not: rich would assume 80 columns
    result = CliRunner().invoke(cli, ["generate", "--questions", str(QUESTIONS), "--scene-graphs", str(GRAPHS),
                                      "--out", str(tmp_path / "o"), "--no-progress", "--workers", "1"])
    assert result.exit_code == 0, result.output
    templates = json.loads((tmp_path / "o" / "stats.json").read_text())["templates"]
    assert "is_the_x_rel_the_y__relation" in templates and "…" not in result.output
    for name in templates:
        assert f"│ {name} " in result.output, name
