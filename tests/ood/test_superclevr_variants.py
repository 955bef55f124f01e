"""Super-CLEVR's dataset variants drawn from a pool: the targets, the draw (within the tolerance or
refused, seeded), and `ood superclevr --variant` end to end, re-read by `evaluate --ood` with
Relative Degrade from predictions of models named with their training variant."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import random
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.ood.superclevr_draw import Unreachable, draw, reachable
from contrastgen.ood.superclevr_targets import co_matrix, concept_lists, kl_divergence, target

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _weights(variant: str, block: str) -> dict[str, float]:
    b = next(b for b in target(variant).blocks if b.name == block)
    return {b.label(c): w for c, w in zip(b.values, b.weights, strict=True)}


def test_long_tail_targets_are_the_papers_a_to_the_minus_i():
    colors = concept_lists()["color"]
    for variant, a in (("slt", 1.3), ("long", 2.0)):
        w = _weights(variant, "color")
        for first, second in zip(colors, colors[1:], strict=False):
            assert w[first] / w[second] == pytest.approx(a)
        assert sum(w.values()) == pytest.approx(1.0)
    assert list(_weights("bal", "color").values()) == pytest.approx([1 / 8] * 8)
    for variant in ("bal", "slt", "long", "head", "oppo", "co-1"):
        assert _weights(variant, "size") == {"large": 0.5, "small": 0.5}  # size kept fixed
    shapes = _weights("long", "shape")
    # a shape weighs its category's weight times its own within it, unnormalised as the authors'
    # generator computes it: suv (car's first) over road (bicycle's, the fifth category, first) is 2^4
    assert shapes["suv"] / shapes["road"] == pytest.approx(2.0 ** 4)


def test_head_tail_and_oppo_rearrange_the_long_distribution():
    long, head, tail, oppo = (_weights(v, "color") for v in ("long", "head", "tail", "oppo"))
    ranked = sorted(long, key=lambda c: -long[c])
    assert {c for c, w in head.items() if w > 0} == set(ranked[:4])
    assert {c for c, w in tail.items() if w > 0} == set(ranked[4:])
    assert [oppo[c] for c in ranked] == [long[c] for c in reversed(ranked)]
    assert _weights("head", "material") == {"rubber": 1.0, "metal": 0.0}  # two concepts: one each
    assert _weights("tail", "material") == {"rubber": 0.0, "metal": 1.0}


def test_co_distribution_matrices_differ_within_or_across_categories_as_the_paper_says():
    co0, co1, co2 = co_matrix("co-0"), co_matrix("co-1"), co_matrix("co-2")
    assert all(row == co0["suv"] for row in co0.values())
    # co-1: shapes of one category differ, categories share rows (suv, jet: first of theirs)
    assert co1["suv"] != co1["wagon"] and co1["suv"] == co1["jet"]
    # co-2: a category shares one row, categories differ
    assert co2["suv"] == co2["wagon"] == co2["truck"] and co2["suv"] != co2["articulated"]
    assert all(sum(row) == pytest.approx(1.0) for m in (co0, co1, co2) for row in m.values())
    joint = _weights("co-2", "shape x color")
    assert sum(joint.values()) == pytest.approx(1.0) and len(joint) == 21 * 8


def test_kl_divergence_of_counts_against_a_target():
    assert kl_divergence([5, 5], (0.5, 0.5)) == 0.0
    assert kl_divergence([3, 1], (0.5, 0.5)) == pytest.approx(0.75 * math.log(1.5) + 0.25 * math.log(0.5))
    assert kl_divergence([1, 1], (1.0, 0.0)) == math.inf


def _uniform_pool(n: int) -> dict[str, list[dict[str, str]]]:
    """Scenes of two to four objects with uniformly drawn concepts (seeded)."""
    rng = random.Random(0)
    lists = concept_lists()
    return {f"s{i:04d}": [{a: rng.choice(lists[a]) for a in ("shape", "color", "material", "size")}
                          for _ in range(rng.randint(2, 4))] for i in range(n)}


def _measured_kl(variant: str, scenes, pool) -> float:
    """The worst block's KL of the chosen scenes' objects, counted here from the objects."""
    worst = 0.0
    for block in target(variant).blocks:
        counts = Counter(block.cell_of(o) for s in scenes for o in pool[s])
        worst = max(worst, kl_divergence([counts[c] for c in block.values], block.weights))
    return worst


def test_a_draw_is_within_its_tolerance_and_the_same_for_the_same_seed():
    pool = _uniform_pool(600)
    names = sorted(pool)
    one = draw(target("bal"), names, pool, 80, 0.05, "0:bal:train")
    assert len(one.scenes) == 80 == len(set(one.scenes))
    assert _measured_kl("bal", one.scenes, pool) == pytest.approx(one.max_kl) and one.max_kl <= 0.05
    assert draw(target("bal"), names, pool, 80, 0.05, "0:bal:train") == one
    assert draw(target("bal"), names, pool, 80, 0.05, "1:bal:train").scenes != one.scenes
    reach = reachable(target("bal"), names, pool, 0.05)
    assert len(reach.best.scenes) >= 80 and reach.best.max_kl <= 0.05


def test_a_pool_that_cannot_reach_the_target_is_refused_with_how_close_it_comes():
    lists = concept_lists()
    pool = {f"s{i}": [{"shape": lists["shape"][i % 21], "color": "gray", "material": "rubber", "size": "large"}]
            for i in range(50)}
    with pytest.raises(Unreachable, match=r"variant bal: the pool \(50 scenes\) holds no 10 scenes .* KL 0\.01"):
        draw(target("bal"), sorted(pool), pool, 10, 0.01, "0")
    # tail admits only the rarer half of the concepts (metal only): a scene with another is never drawn
    with pytest.raises(Unreachable, match="only 0 of the 50 in the pool"):
        draw(target("tail"), sorted(pool), pool, 1, 0.5, "0")
    assert not reachable(target("long"), sorted(pool), pool, 0.01).best.scenes


# --- end to end -------------------------------------------------------------------------------


def _synth():
    if not (BENCH / "synth_superclevr.py").is_file():
        pytest.skip("benchmarks/synth_superclevr.py absent (installed package)")
    spec = importlib.util.spec_from_file_location("synth_superclevr", BENCH / "synth_superclevr.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> Path:
    """A synthetic Super-CLEVR-format pool, half its scenes sampled as bal, half as co-2."""
    out = tmp_path_factory.mktemp("pool") / "pool"
    _synth().write_pool(out, 360, seed=3, sampled_as=("bal", "co-2"), object_questions=2, part_questions=1)
    return out


VARIANTS_ARGS = ["--variant", "bal,co-2", "--variant", "rd-,rd,rd+", "--tolerance", "0.3", "--test-share", "0.4"]


def _build(pool: Path, out: Path, *extra: str):
    return CliRunner().invoke(cli, ["ood", "superclevr", "--scenes", str(pool / "scenes.json"), "--questions",
                                    str(pool / "questions.json"), "--out", str(out), *VARIANTS_ARGS, *extra])


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(pool, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("variants") / "v"
    result = _build(pool, out)
    assert result.exit_code == 0, result.output
    return out


def test_variants_are_drawn_within_tolerance_train_and_test_apart_and_byte_identical(pool, built, tmp_path):
    stats = json.loads((built / "stats.json").read_text())
    assert set(stats["variants"]) == {"bal", "co-2", "rd-", "rd", "rd+"}
    objects = {s["image_filename"].rsplit(".", 1)[0]: s["objects"]
               for s in json.loads((pool / "scenes.json").read_text())["scenes"]}
    for v in ("bal", "co-2"):
        scenes = json.loads((built / "variants" / v / "scenes.json").read_text())
        assert not set(scenes["train"]) & set(scenes["test"])
        for part in ("train", "test"):
            got = stats["variants"][v]["parts"][part]
            assert got["scenes"] == len(scenes[part]) > 0
            assert _measured_kl(v, scenes[part], objects) == pytest.approx(got["max_kl"]) and got["max_kl"] <= 0.3
            qs = json.loads((built / "variants" / v / f"{part}.json").read_text())["questions"]
            assert {q["image"] for q in qs} <= set(scenes[part])
            assert all(str(q["question_index"]).startswith(f"{v}/") for q in qs)
        assert (built / "variants" / v / "distribution.png").stat().st_size > 1000
    # training parts are the same size, so variants differ in distribution, not in amount
    assert stats["variants"]["bal"]["parts"]["train"]["scenes"] == stats["variants"]["co-2"]["parts"]["train"]["scenes"]
    # rd-, rd, rd+: bal's scenes, the same questions at three levels of redundancy
    bal_scenes = json.loads((built / "variants" / "bal" / "scenes.json").read_text())
    said = stats["left_out"]["redundancy"]["test"]["mean_attributes_said"]
    assert said["rd-"] < said["rd"] < said["rd+"]
    ids = {}
    for v in ("rd-", "rd", "rd+"):
        assert json.loads((built / "variants" / v / "scenes.json").read_text()) == bal_scenes
        ids[v] = {q["question_index"].split("/", 1)[1]
                  for q in json.loads((built / "variants" / v / "test.json").read_text())["questions"]}
    assert ids["rd-"] == ids["rd"] == ids["rd+"]
    again = tmp_path / "again"
    assert _build(pool, again).exit_code == 0
    assert _digest(again) == _digest(built)
    other = tmp_path / "other"
    assert _build(pool, other, "--seed", "1").exit_code == 0
    assert (other / "variants" / "bal" / "scenes.json").read_bytes() != (built / "variants" / "bal" / "scenes.json").read_bytes()


def test_a_variant_the_pool_cannot_reach_is_refused_and_nothing_is_written(pool, tmp_path):
    out = tmp_path / "v"
    result = CliRunner().invoke(cli, ["ood", "superclevr", "--scenes", str(pool / "scenes.json"), "--questions",
                                      str(pool / "questions.json"), "--out", str(out), "--variant", "long"])
    assert result.exit_code == 2
    assert "reaches no draw of long within KL 0.01" in result.output and "closest KL" in result.output
    assert not out.exists()


@pytest.mark.parametrize("option", ["--train-scenes", "--test-scenes"])
def test_more_scenes_than_the_pool_holds_is_refused_naming_the_option(pool, tmp_path, option):
    out = tmp_path / "v"
    result = CliRunner().invoke(cli, ["ood", "superclevr", "--scenes", str(pool / "scenes.json"), "--questions",
                                      str(pool / "questions.json"), "--out", str(out), "--variant", "bal",
                                      "--tolerance", "0.3", option, "100000000"])
    assert result.exit_code == 2
    assert f"{option} 100000000: the {option[2:-7]} pool holds" in result.output
    assert not out.exists()


def _answers(built: Path, variant: str) -> dict[str, str]:
    def words(a):
        return ("yes" if a else "no") if isinstance(a, bool) else str(a)
    return {q["question_index"]: words(q["answer"])
            for q in json.loads((built / "variants" / variant / "test.json").read_text())["questions"]}


def test_evaluate_ood_reads_the_variants_back_with_relative_degrade_per_training_variant(built, tmp_path):
    """Model m trained on rd: right on every rd question, on every other rd- one and on none of
    rd+; trained on rd-: right everywhere. RD of redundancy is then the mean over the two of
    |(a(rd) - a(rd-)) + (a(rd) - a(rd+))| / a(rd) for the one and 0 for the other."""
    rd, rd_minus, rd_plus = (_answers(built, v) for v in ("rd", "rd-", "rd+"))
    half = {q: (a if i % 2 == 0 else "no such answer") for i, (q, a) in enumerate(sorted(rd_minus.items()))}
    on_rd = {**rd, **half, **{q: "no such answer" for q in rd_plus}}
    on_rd_minus = {**rd, **rd_minus, **rd_plus}
    (tmp_path / "rd.json").write_text(json.dumps(on_rd))
    (tmp_path / "rdm.json").write_text(json.dumps(on_rd_minus))
    (tmp_path / "bal.json").write_text(json.dumps(_answers(built, "bal")))
    result = CliRunner().invoke(cli, ["evaluate", "--ood", str(built), "-p", f"m@rd={tmp_path / 'rd.json'}",
                                      "-p", f"m@rd-={tmp_path / 'rdm.json'}", "-p", f"m@bal={tmp_path / 'bal.json'}",
                                      "--out", str(tmp_path / "eval")])
    assert result.exit_code == 0, result.output
    assert "Relative Degrade" in result.output
    report = json.loads((tmp_path / "eval" / "ood_report.json").read_text())
    assert report["layout"] == "variants"
    m = report["models"]["m"]
    a_minus = sum(1 for i in range(len(rd_minus)) if i % 2 == 0) / len(rd_minus)
    assert m["accuracy"]["rd"] == {"rd-": pytest.approx(a_minus), "rd": 1.0, "rd+": 0.0}
    assert m["accuracy"]["bal"] == {"bal": 1.0}  # tested on bal only: other parts are not its tests
    redundancy = m["relative_degrade"]["redundancy"]
    assert redundancy["by_training"]["rd"]["value"] == pytest.approx(abs((1 - a_minus) + (1 - 0)) / 1)
    assert redundancy["by_training"]["rd-"]["value"] == 0.0
    assert redundancy["value"] == pytest.approx((2 - a_minus) / 2)
    # bal alone has none of the distribution factor's other tests: named, not guessed
    assert m["relative_degrade"]["distribution"]["value"] is None
    assert set(m["relative_degrade"]["distribution"]["missing"]["bal"]) == {"head", "tail", "long", "oppo"}


def test_evaluate_ood_refuses_a_training_variant_that_is_not_one(built, tmp_path):
    (tmp_path / "p.json").write_text(json.dumps(_answers(built, "bal")))
    result = CliRunner().invoke(cli, ["evaluate", "--ood", str(built), "-p", f"m@balanced={tmp_path / 'p.json'}"])
    assert result.exit_code == 2
    assert "'balanced', which is no Super-CLEVR variant" in result.output


# --- visual complexity: the released variants' own scenes ---------------------------------------

SHARED_SC = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "super-clevr"


def _recoloured_parts(src: Path, dst: Path) -> None:
    """A copy of the scenes in which every part of every object has another colour: the same
    layouts rendered differently, as the released variants are."""
    import shutil

    shutil.copytree(src, dst)
    colors = concept_lists()["color"]
    for path in sorted(dst.glob("*.json")):
        data = json.loads(path.read_text())
        for obj in data["objects"]:
            for part in obj.get("parts", {}).values():
                part["color"] = colors[(colors.index(part["color"]) + 1) % len(colors)]
        path.write_text(json.dumps(data))


@pytest.mark.shared
def test_visual_variants_are_the_same_questions_answered_on_each_variants_own_scenes(tmp_path):
    if not (SHARED_SC / "scenes").is_dir():
        pytest.skip("../shared/data/super-clevr absent")
    _recoloured_parts(SHARED_SC / "scenes", tmp_path / "hard")
    out = tmp_path / "out"
    questions = ["--questions", str(SHARED_SC / "superCLEVR_questions_5.json"),
                 "--questions", str(SHARED_SC / "superCLEVR_questions_part_5.json")]
    result = CliRunner().invoke(cli, ["ood", "superclevr", "--visual", f"easy={SHARED_SC / 'scenes'}",
                                      "--visual", f"mid={SHARED_SC / 'scenes'}", "--visual", f"hard={tmp_path / 'hard'}",
                                      *questions, "--out", str(out)])
    assert result.exit_code == 0, result.output

    def read(variant):
        return {q["question_index"].split("/", 1)[1]: q for part in ("train", "test")
                for q in json.loads((out / "variants" / variant / f"{part}.json").read_text())["questions"]}
    easy, hard = read("easy"), read("hard")
    assert easy.keys() == hard.keys()
    # a question kept only where it runs on every variant's scenes (a recoloured part may make a
    # reference ambiguous); those left out are counted
    visual = json.loads((out / "stats.json").read_text())["left_out"]["visual"]
    assert len(easy) == visual["kept"] > 300 and visual["kept"] + visual["left_out"] == visual["questions"]

    def words(a):
        return ("yes" if a else "no") if isinstance(a, bool) else str(a)
    released, part_questions = {}, set()
    for f in ("superCLEVR_questions_5.json", "superCLEVR_questions_part_5.json"):
        for q in json.loads((SHARED_SC / f).read_text())["questions"]:
            released[(q["image_filename"], q["question"])] = words(q["answer"])
            if "part" in f:
                part_questions.add((q["image_filename"], q["question"]))
    # on the released scenes the answers are the released ones; with parts recoloured, some part
    # questions' answers change, and no object question's
    assert all(words(q["answer"]) == released[(q["image_filename"], q["question"])] for q in easy.values())
    changed = [k for k in easy if words(easy[k]["answer"]) != words(hard[k]["answer"])]
    assert changed and all((easy[k]["image_filename"], easy[k]["question"]) in part_questions for k in changed)

    # re-read by evaluate --ood: a model trained on easy that answers as on easy's scenes is right
    # on easy and mid and wrong where hard differs; its visual RD is that drop over 1
    test_ids = {q["question_index"].split("/", 1)[1]
                for q in json.loads((out / "variants" / "easy" / "test.json").read_text())["questions"]}
    preds = {f"{v}/{k}": words(easy[k]["answer"]) for v in ("easy", "mid", "hard") for k in test_ids}
    (tmp_path / "p.json").write_text(json.dumps(preds))
    result = CliRunner().invoke(cli, ["evaluate", "--ood", str(out), "-p", f"m@easy={tmp_path / 'p.json'}",
                                      "--out", str(tmp_path / "eval")])
    assert result.exit_code == 0, result.output
    m = json.loads((tmp_path / "eval" / "ood_report.json").read_text())["models"]["m"]
    wrong_on_hard = sum(1 for k in test_ids if k in changed) / len(test_ids)
    assert wrong_on_hard > 0
    assert m["accuracy"]["easy"] == {"easy": 1.0, "mid": 1.0, "hard": pytest.approx(1 - wrong_on_hard)}
    assert m["relative_degrade"]["visual"]["value"] == pytest.approx(wrong_on_hard)


def test_a_visual_variant_without_its_scenes_is_refused_saying_rendering_is_not_done_here(tmp_path):
    result = CliRunner().invoke(cli, ["ood", "superclevr", "--scenes", str(tmp_path), "--questions", str(tmp_path),
                                      "--variant", "easy", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "--visual easy=DIR" in result.output and "rendered images" in result.output


def test_the_prior_baseline_script_trains_on_one_variant_and_answers_every_test_part(built, tmp_path):
    if not (BENCH / "superclevr_prior.py").is_file():
        pytest.skip("benchmarks/superclevr_prior.py absent (installed package)")
    spec = importlib.util.spec_from_file_location("superclevr_prior", BENCH / "superclevr_prior.py")
    prior = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prior)
    out = tmp_path / "prior.json"
    prior.main(str(built), "co-2", str(out))
    preds = json.loads(out.read_text())
    train = json.loads((built / "variants" / "co-2" / "train.json").read_text())["questions"]
    by_family: dict[str, Counter] = {}
    for q in train:
        by_family.setdefault(prior.family(q), Counter())[prior.answer_words(q["answer"])] += 1
    overall = sum(by_family.values(), Counter())
    answered = 0
    for v in ("bal", "co-2", "rd"):
        for q in json.loads((built / "variants" / v / "test.json").read_text())["questions"]:
            counts = by_family.get(prior.family(q), overall)
            assert preds[q["question_index"]] == min(counts, key=lambda a: (-counts[a], a))
            answered += 1
    assert answered == len(preds) - sum(  # every test part answered, and nothing else
        len(json.loads((built / "variants" / v / "test.json").read_text())["questions"]) for v in ("rd-", "rd+"))


def test_a_scene_given_twice_in_the_pool_is_refused_naming_both_sources(pool, tmp_path):
    copy = tmp_path / "copy.json"
    copy.write_bytes((pool / "scenes.json").read_bytes())
    result = CliRunner().invoke(cli, ["ood", "superclevr", "--scenes", str(pool / "scenes.json"), "--scenes", str(copy),
                                      "--questions", str(pool / "questions.json"), "--variant", "bal",
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "superCLEVR_synth_000000" in result.output and "a pool names each scene once" in result.output
    assert not (tmp_path / "o").exists()


def _twice_in_one_file(scenes: list) -> None:
    again = json.loads(json.dumps(scenes[0]))
    again["objects"][0]["color"] = "purple" if again["objects"][0]["color"] != "purple" else "red"
    scenes.append(again)


def _parts_as_a_list(scenes: list) -> None:
    scenes[1]["objects"][0]["parts"] = ["wheel", "door"]


def _relations_short(scenes: list) -> None:
    scenes[2]["relationships"]["left"] = scenes[2]["relationships"]["left"][:-1]


def _parts_null(scenes: list) -> None:
    scenes[1]["objects"][0]["parts"] = None


def _no_relationships(scenes: list) -> None:
    del scenes[2]["relationships"]


@pytest.mark.parametrize(("spoil", "message"), [
    (_twice_in_one_file, "is given twice"),
    (_parts_as_a_list, "'parts' must be an object"),
    (_parts_null, "'parts' must be an object"),
    (_relations_short, "does not have one list per object"),
    (_no_relationships, "scene has no 'relationships'"),
])
def test_a_pool_scene_generate_would_refuse_is_refused_by_the_variants(pool, tmp_path, spoil, message):
    data = json.loads((pool / "scenes.json").read_text())
    spoil(data["scenes"])
    bad = tmp_path / "scenes.json"
    bad.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["ood", "superclevr", "--scenes", str(bad), "--questions",
                                      str(pool / "questions.json"), "--variant", "bal", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert message in result.output and "scenes.json" in result.output
    assert not (tmp_path / "o").exists()


def test_variants_show_a_bar_counting_every_variant_on_a_terminal_and_write_the_same(pool, built, tmp_path,
                                                                                     monkeypatch):
    """`--variant` on a terminal: the bar counts the five variants asked (bal, co-2, rd-, rd, rd+)
    to its total, and the files are the same bytes as without it."""
    from contrastgen.ood.superclevr_variants import VariantConfig, variant_count
    from contrastgen.terminal import progress as progress_module

    monkeypatch.setattr(progress_module, "on_terminal", lambda: True)
    result = _build(pool, tmp_path / "v")
    assert result.exit_code == 0, result.output
    assert "building variants" in result.stderr and "5/5" in result.stderr
    assert _digest(tmp_path / "v") == _digest(built)
    assert variant_count(VariantConfig(variants=("rd",))) == 2  # rd is worded on bal's scenes
    assert variant_count(VariantConfig(variants=("bal", "rd", "slt"))) == 3


@pytest.mark.parametrize("answer", [None, {}, ["red"]])
def test_a_question_whose_answer_is_no_answer_is_refused_as_generate_refuses_it(pool, tmp_path, answer):
    data = json.loads((pool / "questions.json").read_text())
    data["questions"][3]["answer"] = answer
    bad = tmp_path / "questions.json"
    bad.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["ood", "superclevr", "--scenes", str(pool / "scenes.json"), "--questions",
                                      str(bad), "--variant", "bal", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert "field 'answer' must be text, a number or a boolean" in result.output and "question 3" in result.output
    assert not (tmp_path / "o").exists()
