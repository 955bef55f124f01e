"""`export --format lmms-eval`: the task folder loaded and run the way lmms-eval loads and runs
it (tests/export/lmms_eval_emulation.py), by scripted models, on the bundled GQA sample (images
by path), the bundled Super-CLEVR sample and ../shared's Super-CLEVR renders (embedded)."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import random
import sys
from collections import defaultdict
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lmms_eval_emulation import load_task, run, write_samples

from contrastgen.answers import normalize_answer, score_form
from contrastgen.errors import InputError
from contrastgen.export.lmms_eval import export_lmms_eval
from contrastgen.records import load_contrast_records

REQUIRED_KEYS = ("task", "dataset_path", "dataset_kwargs", "test_split", "output_type", "doc_to_visual",
                 "doc_to_text", "doc_to_target", "process_results", "metric_list", "generation_kwargs",
                 "lmms_eval_specific_kwargs", "metadata")


def oracle(doc, text, visuals) -> str:
    return doc["answer"]


def always_yes(doc, text, visuals) -> str:
    return "Yes."


def noisy(doc, text, visuals) -> str:
    """Right on about two questions in three, else "yes" or a colour: a model whose scores
    differ per template, type and kind."""
    roll = int(hashlib.sha256(doc["question_id"].encode()).hexdigest(), 16) % 6
    return {0: "yes", 1: "The red."}.get(roll, doc["answer"].upper() + ".")


@pytest.fixture(scope="module")
def gqa_task(gqa_with_image_files, tmp_path_factory, hf_module):
    """The GQA sample with its records naming their images, exported by path."""
    folder = tmp_path_factory.mktemp("gqa_lmms")
    result = export_lmms_eval(gqa_with_image_files, folder / "task", name="gqa_sample")
    return result, load_task(result.out, folder / "cache"), gqa_with_image_files


@pytest.fixture(scope="module")
def hf_module(tmp_path_factory):
    datasets = pytest.importorskip("datasets", reason="the `datasets` package (extra [harness]) is not installed")
    datasets.disable_progress_bars()
    return datasets


@pytest.fixture(scope="module")
def clevr_task(clevr_output, tmp_path_factory, hf_module):
    from contrastgen.resources import clevr_sample_dir

    folder = tmp_path_factory.mktemp("clevr_lmms")
    result = export_lmms_eval(clevr_output, folder / "task", name="clevr_sample",
                              images=clevr_sample_dir() / "images")
    return result, load_task(result.out, folder / "cache"), clevr_output


@pytest.fixture(scope="module")
def shared_clevr_task(shared_clevr_output, shared_clevr_images, tmp_path_factory, hf_module):
    folder = tmp_path_factory.mktemp("shared_clevr_lmms")
    result = export_lmms_eval(shared_clevr_output, folder / "task", name="superclevr",
                              images=shared_clevr_images)
    return result, load_task(result.out, folder / "cache"), shared_clevr_output


TASKS = ("gqa_task", "clevr_task", "shared_clevr_task")
_RUNS: dict = {}


def scored(task, model):
    """The task run by `model`, once per module, without opening the images (the scripted models
    answer without looking; `test_every_image_reaches_the_model_as_an_rgb_image` opens them)."""
    key = (id(task), model.__name__)
    if key not in _RUNS:
        _RUNS[key] = run(task, model, visuals=False)
    return _RUNS[key]


def expected_scores(source: Path, model) -> dict[str, float]:
    """The overall metrics computed straight from the contrast records, with no code of the
    export: each set (original, template) with contrast perturbations, every perturbation."""
    orig, pert, pert_n, consistent, sets = 0, 0, 0, 0, 0
    inv_sets, inv_consistent, inv_right, inv_n = 0, 0, 0, 0
    for rec in load_contrast_records(source):
        def right(question_id, question, answer):
            return normalize_answer(model({"question_id": question_id, "answer": answer}, question, [])) == normalize_answer(answer)
        o = right(rec["question_id"], rec["question"], rec["answer"])
        contrasts = [p for p in rec["perturbations"] if p.get("kind") != "invariance"]
        invariances = [p for p in rec["perturbations"] if p.get("kind") == "invariance"]
        if contrasts:
            ok = [right(p["question_id"], p["question"], p["answer"]) for p in contrasts]
            sets += 1
            orig += o
            pert += sum(ok)
            pert_n += len(ok)
            consistent += o and all(ok)
        if invariances:  # right against the gold answer (the original's), as the contrasts are
            ok = [right(p["question_id"], p["question"], p["answer"]) for p in invariances]
            inv_sets += 1
            inv_consistent += o and all(ok)
            inv_right += sum(ok)
            inv_n += len(ok)
    out = {"original_accuracy": orig / sets, "perturbed_accuracy": pert / pert_n,
           "consistency": consistent / sets}
    out["drop"] = out["original_accuracy"] - out["perturbed_accuracy"]
    if inv_sets:
        out["invariance_consistency"] = inv_consistent / inv_sets
        out["invariance_accuracy"] = inv_right / inv_n
    return out


@pytest.mark.parametrize("fixture", TASKS)
def test_the_yaml_has_every_key_lmms_eval_reads_and_resolves(fixture, request):
    result, task, _ = request.getfixturevalue(fixture)
    cfg = task.config
    for key in REQUIRED_KEYS:
        assert key in cfg, key
    assert cfg["task"].startswith("contrast_") and cfg["task"] == result.names[0]
    data_file = Path(cfg["dataset_kwargs"]["data_files"][cfg["test_split"]])
    assert cfg["dataset_path"] == "parquet" and data_file.is_absolute() and data_file.is_file()
    assert cfg["output_type"] == "generate_until" and cfg["doc_to_target"] == "answer"
    assert all(callable(cfg[k]) for k in ("doc_to_visual", "doc_to_text", "process_results"))
    assert cfg["lmms_eval_specific_kwargs"]["default"]["post_prompt"] == (
        "\nAnswer the question using a single word or phrase.")
    assert isinstance(cfg["metadata"], dict) and cfg["metadata"]["version"] == 1.0
    names = [m["metric"] for m in cfg["metric_list"]]
    assert len(names) == len(set(names))
    assert all(callable(m["aggregation"]) and isinstance(m["higher_is_better"], bool) for m in cfg["metric_list"])
    text = (result.out / f"{cfg['task']}.yaml").read_text()
    assert "!function utils.process_results\n" in text and "'utils." not in text


@pytest.mark.parametrize("fixture", TASKS)
def test_process_results_keys_are_exactly_the_metric_names(fixture, request):
    _, task, _ = request.getfixturevalue(fixture)
    result = scored(task, oracle)
    listed = set(task.metrics)
    returned = set(result.items)
    assert listed <= returned  # every listed metric is aggregated
    # the only keys left unaggregated are the invariance metrics, on an export without invariances
    invariance = {"invariance_consistency", "invariance_accuracy"}
    assert returned - listed <= invariance
    has_invariance = any(d["role"] == "invariance" for d in task.rows)
    assert all((name in listed) == has_invariance for name in invariance)


@pytest.mark.parametrize("fixture", TASKS)
def test_the_scene_graph_oracle_scores_100_percent_on_every_metric(fixture, request):
    _, task, _ = request.getfixturevalue(fixture)
    scores = scored(task, oracle).scores
    assert len(scores) == len(task.metrics)
    for name, value in scores.items():
        assert value == (0.0 if name.startswith("drop") else 1.0), name


@pytest.mark.parametrize("fixture", TASKS)
def test_always_yes_scores_what_the_records_say(fixture, request):
    _, task, source = request.getfixturevalue(fixture)
    scores = scored(task, always_yes).scores
    expected = expected_scores(source, always_yes)
    for name, value in expected.items():
        assert scores[name] == pytest.approx(value, abs=1e-12), name
    assert 0 < scores["original_accuracy"] < 1


@pytest.mark.parametrize("fixture", TASKS)
def test_each_question_is_one_row_and_every_set_is_named(fixture, request):
    result, task, source = request.getfixturevalue(fixture)
    records = load_contrast_records(source)
    ids = [d["question_id"] for d in task.rows]
    assert len(ids) == len(set(ids)) == result.questions
    expected = {r["question_id"] for r in records} | {p["question_id"] for r in records for p in r["perturbations"]}
    assert set(ids) == expected
    by_id = {d["question_id"]: d for d in task.rows}
    for rec in records:
        cid = f"{rec['question_id']}:{rec['template']}"
        assert cid in by_id[rec["question_id"]]["contrast_ids"]
        assert by_id[rec["question_id"]]["role"] == "original"
        for p in rec["perturbations"]:
            row = by_id[p["question_id"]]
            assert row["contrast_ids"] == [cid]
            assert row["role"] == ("invariance" if p.get("kind") == "invariance" else "perturbation")
            assert row["answer"] == normalize_answer(p["answer"])


def test_an_original_heading_two_sets_is_asked_once_and_scored_in_both(gqa_task):
    _, task, _ = gqa_task
    shared = [d for d in task.rows if d["role"] == "original" and len(d["contrast_ids"]) > 1]
    assert shared, "the GQA sample in both modes has originals heading two sets"
    assert all(len(d["templates"]) == len(set(d["templates"])) for d in shared)


def test_the_metrics_are_evaluate_s_figures_per_template_type_and_kind(gqa_task):
    from contrastgen.evaluation.contrast import evaluate_contrast

    result, task, source = gqa_task
    utils = _utils(result.out)
    scores = scored(task, noisy).scores
    predictions = {d["question_id"]: noisy(d, "", []) for d in task.rows}
    report = evaluate_contrast(load_contrast_records(source), {"noisy": predictions}, n_boot=0)
    k = str(max(report["settings"]["ks"]))
    figures = report["results"]["noisy"][k]
    compared = 0
    for metric in ("original_accuracy", "perturbed_accuracy", "drop", "consistency"):
        assert scores[metric] == pytest.approx(figures["overall"][metric]["value"], abs=1e-6)
    for breakdown, dimension in (("by_template", "template"), ("by_question_type", "type"), ("by_kind", "kind")):
        for value, metrics in figures[breakdown].items():
            for metric in ("original_accuracy", "perturbed_accuracy", "consistency"):
                name = f"{metric}_{dimension}_{utils.metric_slug(value)}"
                assert scores[name] == pytest.approx(metrics[metric]["value"], abs=1e-6), name
                compared += 1
    assert compared > 30
    inv = report["invariance"]["noisy"]["overall"]
    assert scores["invariance_consistency"] == pytest.approx(inv["consistency"], abs=1e-9)
    assert scores["invariance_accuracy"] == pytest.approx(inv["perturbed_accuracy"], abs=1e-9)
    assert 0 < inv["consistency"] < 1
    assert len({round(scores[f"consistency_template_{utils.metric_slug(t)}"], 6)
                for t in figures["by_template"]}) > 1


def says_nothing(doc, text, visuals) -> str:
    return " . "


@pytest.mark.parametrize("model", [always_yes, says_nothing])
def test_a_constant_or_empty_model_is_not_invariance_consistent_in_either(model, gqa_task, tmp_path):
    """On the bundled sample in both modes, always-"yes" used to keep every invariance answer
    (1.0) and so did an empty answer; scored against the gold answers, the task and `evaluate`
    (on the task's own samples log) give the same figure, and not 1.0."""
    from contrastgen.evaluation.contrast import evaluate_contrast
    from contrastgen.evaluation.predictions import load_predictions

    _, task, source = gqa_task
    lmms = scored(task, model)
    samples = write_samples(tmp_path / f"20260101_000000_samples_contrast_{model.__name__}.jsonl", lmms, "0.7")
    report = evaluate_contrast(load_contrast_records(source), {"m": load_predictions(samples)}, n_boot=0)
    inv = report["invariance"]["m"]
    assert lmms.scores["invariance_consistency"] == pytest.approx(inv["overall"]["consistency"], abs=1e-12)
    assert lmms.scores["invariance_accuracy"] == pytest.approx(inv["overall"]["perturbed_accuracy"], abs=1e-12)
    expected = expected_scores(source, model)
    assert lmms.scores["invariance_consistency"] == pytest.approx(expected["invariance_consistency"], abs=1e-12)
    if model is always_yes:
        assert 0 < inv["overall"]["consistency"] < 1 and inv["empty"] == 0
    else:  # every answer is empty: wrong, and counted as such
        assert inv["overall"]["consistency"] == 0 and inv["overall"]["perturbed_accuracy"] == 0
        assert inv["empty"] == inv["questions"] > 100 and inv["missing"] == 0
        assert report["coverage"]["m"]["empty"] == report["coverage"]["m"]["questions"]


def test_row_order_and_ranks_do_not_change_any_metric(gqa_task):
    """Aggregations group by explicit ids: docs run shuffled, and items gathered from two ranks
    (each rank's list concatenated, as lmms-eval gathers them) give the same figures."""
    _, task, _ = gqa_task
    order = list(range(len(task.docs)))
    random.Random(3).shuffle(order)
    plain = scored(task, noisy)
    shuffled = run(task, noisy, order=order, visuals=False)
    assert shuffled.scores == pytest.approx(plain.scores)
    for name, agg in task.metrics.items():
        items = plain.items[name]
        ranks = items[1::2] + items[0::2]
        assert agg(ranks) == pytest.approx(plain.scores[name], abs=1e-12), name


@pytest.mark.parametrize("fixture", TASKS)
def test_every_image_reaches_the_model_as_an_rgb_image(fixture, request):
    """doc_to_visual on the first row of each image (the other rows hold the same image)."""
    _, task, _ = request.getfixturevalue(fixture)
    first = {}
    for i, row in enumerate(task.rows):
        first.setdefault(row["image_id"], i)
    for i in first.values():
        (visual,) = task.config["doc_to_visual"](task.docs[i])
        assert visual.mode == "RGB" and visual.size[0] > 0


def test_embedded_renders_load_as_pil_images_with_the_files_pixels(shared_clevr_task, shared_clevr_images):
    from PIL import Image

    _, task, _ = shared_clevr_task
    assert "image" in task.docs.features and "image_path" not in task.docs.features
    first = {}
    for i, row in enumerate(task.rows):
        first.setdefault(row["image_id"], i)
    for i in first.values():
        doc = task.docs[i]
        (visual,) = task.config["doc_to_visual"](doc)
        assert isinstance(doc["image"], Image.Image) and visual.mode == "RGB"
        with Image.open(shared_clevr_images / f"{doc['image_id']}.png") as source:
            assert visual.tobytes() == source.convert("RGB").tobytes()
    assert len(first) >= 3


def test_identical_images_are_stored_once_per_row_group(shared_clevr_task, shared_clevr_images):
    import pyarrow.parquet as pq
    result, task, _ = shared_clevr_task
    data = result.out / "data" / "test.parquet"
    images = {d["image_id"] for d in task.rows}
    one_copy_each = sum((shared_clevr_images / f"{i}.png").stat().st_size for i in images)
    assert len(task.rows) > 3 * len(images)
    assert data.stat().st_size < 1.3 * one_copy_each * pq.ParquetFile(data).num_row_groups


def test_by_path_the_visual_is_the_named_file(gqa_task, gqa_images):
    from PIL import Image

    _, task, _ = gqa_task
    doc = task.docs[0]
    assert "image" not in task.docs.features and Path(doc["image_path"]).is_absolute()
    (visual,) = task.config["doc_to_visual"](doc)
    with Image.open(gqa_images / f"{doc['image_id']}.jpg") as source:
        assert visual.tobytes() == source.convert("RGB").tobytes()


def test_a_missing_image_names_the_question_and_leaves_nothing(gqa_output, gqa_images, tmp_path):
    folder = tmp_path / "images"
    folder.mkdir()
    first = orjson.loads((gqa_output / "contrast_sets.jsonl").read_bytes().splitlines()[0])
    for image in gqa_images.iterdir():
        if image.stem != first["image_id"]:
            (folder / image.name).write_bytes(image.read_bytes())
    out = tmp_path / "task"
    with pytest.raises(InputError) as err:
        export_lmms_eval(gqa_output, out, name="x", images=folder)
    assert f"question {first['question_id']}" in str(err.value) and repr(first["image_id"]) in str(err.value)
    assert not out.exists() and not list(tmp_path.glob(".task*"))
    with pytest.raises(InputError, match="give --images DIR"):
        export_lmms_eval(gqa_output, out, name="x")  # the records name no image file


def test_an_unreadable_image_is_refused(gqa_output, gqa_images, tmp_path):
    folder = tmp_path / "images"
    folder.mkdir()
    for image in gqa_images.iterdir():
        (folder / image.name).write_bytes(b"not a jpeg" if image == sorted(gqa_images.iterdir())[0] else image.read_bytes())
    with pytest.raises(InputError, match="not a readable image"):
        export_lmms_eval(gqa_output, tmp_path / "task", name="x", images=folder)


def test_a_name_that_is_not_an_identifier_is_refused(gqa_output, tmp_path):
    with pytest.raises(InputError, match="--name"):
        export_lmms_eval(gqa_output, tmp_path / "task", name="gqa; rm -rf", images=tmp_path)


def test_the_same_input_writes_the_same_bytes(clevr_output, tmp_path, hf_module):
    from contrastgen.resources import clevr_sample_dir

    images = clevr_sample_dir() / "images"
    a = export_lmms_eval(clevr_output, tmp_path / "a" / "task", name="x", images=images)
    b = export_lmms_eval(clevr_output, tmp_path / "b" / "task", name="x", images=images)
    for name in a.files:
        left, right = (a.out / name).read_bytes(), (b.out / name).read_bytes()
        if name.endswith(".yaml") or name == "README.md":  # they name their own folder
            left, right = left.replace(b"/a/", b"/b/"), right
        assert left == right, name


def _utils(folder: Path):
    spec = importlib.util.spec_from_file_location("utils", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_utils_imports_only_the_standard_library_and_pil(clevr_task):
    result, _, _ = clevr_task
    tree = ast.parse((result.out / "utils.py").read_text())
    modules = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert modules - sys.stdlib_module_names <= {"PIL"}, modules
    assert "__future__" in modules and "contrastgen" not in modules


ANSWERS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cn", "Co")), max_size=30)


@settings(max_examples=300, deadline=None)
@given(answer=st.one_of(ANSWERS, st.sampled_from(["Three.", "the left", "An apple", "TWO dogs", " Yes!", "ten",
                                                  "n/a", "a-b", "Right\u00a0 side", "eleven", "a dog and the cat",
                                                  "dont", "1,000 m", "yes , no", "it's 3.5", "none", "*the* dog"])))
def test_the_task_matches_answers_as_contrastgen_evaluate_does(clevr_task, answer):
    result, _, _ = clevr_task
    utils = _UTILS.setdefault(result.out, _utils(result.out))
    assert utils.normalize_answer(answer) == score_form(answer)


_UTILS: dict = {}


def test_number_words_and_articles_are_read_as_gqa_and_vqa_scorers_read_them(clevr_task):
    result, _, _ = clevr_task
    utils = _utils(result.out)
    assert utils.normalize_answer("Three.") == "3" == normalize_answer("three")
    assert utils.normalize_answer("The Left") == "left"
    assert utils.normalize_answer("eleven") == "eleven"
    # VQA's official rules: every article, not only a leading one; its contractions
    assert utils.normalize_answer("a dog and the cat") == "dog and cat"
    assert utils.normalize_answer("dont") == utils.normalize_answer("don't")


def test_a_samples_log_of_every_version_reads_back_as_the_run(gqa_task, tmp_path):
    """The samples log the emulation writes is what `evaluate` reads (tests/evaluation has the
    format's own cases); here: every doc's answer comes back under its question id."""
    from contrastgen.evaluation.predictions import load_predictions

    _, task, _ = gqa_task
    result = scored(task, noisy)
    for version in ("0.3", "0.4", "0.7"):
        log = write_samples(tmp_path / f"{version}_samples_x.jsonl", result, version)
        back = load_predictions(log)
        assert back == {s["doc"]["question_id"]: s["answer"] for s in result.samples}


def test_per_breakdown_metrics_count_only_their_sets(gqa_task):
    """A per-template metric sees an original heading two sets only in its own template's set."""
    result, task, _ = gqa_task
    utils = _utils(result.out)
    per_template = defaultdict(set)
    for d in task.rows:
        if d["role"] == "perturbation":
            per_template[d["templates"][0]].update(d["contrast_ids"])
    scores = scored(task, oracle)
    for template, sets in per_template.items():
        items = scores.items[f"consistency_template_{utils.metric_slug(template)}"]
        rebuilt = {c for i in items if i["role"] == "perturbation" for c in i["contrast_ids"]}
        assert rebuilt == sets


def _evaluate_figures(report: dict, model: str, utils) -> dict[str, float]:
    """`contrastgen evaluate`'s figures under the task's metric names, at the largest k."""
    k = str(max(report["settings"]["ks"]))
    figures = report["results"][model][k]
    out = {m: figures["overall"][m]["value"] for m in utils.OVERALL_METRICS}
    for breakdown, dimension in (("by_template", "template"), ("by_question_type", "type"), ("by_kind", "kind")):
        for value, metrics in figures[breakdown].items():
            for m in utils.BREAKDOWN_METRICS:
                out[f"{m}_{dimension}_{utils.metric_slug(value)}"] = metrics[m]["value"]
    inv = report.get("invariance", {}).get(model)
    if inv:
        out["invariance_consistency"] = inv["overall"]["consistency"]
        out["invariance_accuracy"] = inv["overall"]["perturbed_accuracy"]
    return out


@pytest.mark.parametrize("limit", [10, 25, 60, 97, 150])
def test_a_limited_run_scores_back_to_the_task_s_own_figures(gqa_task, tmp_path, limit):
    """`--limit N` asks the first N docs: the task scores the sets asked in full, and `evaluate`
    reading the samples file (a partial run) gives the same figure for every metric, where the
    old reading (unasked = wrong) gave 0.016 against 0.286 on a real run."""
    import math

    from contrastgen.evaluation.contrast import evaluate_contrast
    from contrastgen.evaluation.predictions import load_predictions

    result, task, source = gqa_task
    utils = _utils(result.out)
    limited = run(task, noisy, list(range(limit)), visuals=False)
    samples = write_samples(tmp_path / f"20260101_000000_samples_contrast_gqa_sample_{limit}.jsonl", limited, "0.7")
    report = evaluate_contrast(load_contrast_records(source), {"m": load_predictions(samples)}, n_boot=0)
    cov = report["coverage"]["m"]
    assert cov["partial"] and cov["missing"] == cov["questions"] - len(
        {s["doc"]["question_id"] for s in limited.samples} & _contrast_question_ids(source))
    assert 0 < cov["sets_scored"] < cov["sets"]
    figures = _evaluate_figures(report, "m", utils)
    compared = 0
    for name, value in limited.scores.items():
        if name.startswith("group_"):
            continue
        theirs = figures.get(name)
        if math.isnan(value):  # no set of the metric asked in full: absent or empty in the report
            assert theirs is None or math.isnan(theirs), name
            continue
        assert theirs == pytest.approx(value, abs=1e-6), name  # the report rounds to 6 places
        compared += 1
    assert compared >= len(utils.OVERALL_METRICS)


def test_a_run_that_asked_no_set_in_full_is_refused_with_the_count(gqa_task, tmp_path):
    from contrastgen.evaluation.contrast import evaluate_contrast
    from contrastgen.evaluation.predictions import load_predictions

    _, task, source = gqa_task
    limited = run(task, noisy, [0, 1, 2], visuals=False)
    samples = write_samples(tmp_path / "20260101_000000_samples_contrast_gqa_sample.jsonl", limited, "0.7")
    assert all(limited.scores[m] != limited.scores[m] for m in ("original_accuracy", "consistency"))  # NaN there too
    with pytest.raises(InputError, match="asked no contrast set in full"):
        evaluate_contrast(load_contrast_records(source), {"m": load_predictions(samples)}, n_boot=0)


def _contrast_question_ids(source: Path) -> set[str]:
    out = set()
    for rec in load_contrast_records(source):
        contrasts = [p["question_id"] for p in rec["perturbations"] if p.get("kind") != "invariance"]
        out.update([rec["question_id"], *contrasts] if contrasts else [])
    return out
