import json

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.errors import InputError
from contrastgen.ood.gqa_ood import GqaOodConfig, build_gqa_ood, write_gqa_ood

from .helpers import gqa_questions, write_json


def test_paper_rule_keeps_imbalanced_groups_and_splits_head_tail():
    split = build_gqa_ood(gqa_questions())
    kept = sorted(k for k, g in split.groups.items() if g.imbalanced)
    assert kept == ["g1", "g4"]  # g2 uniform, g3 single answer
    g1_tail = [q for q in split.tail_ids if q <= "q010"]
    assert g1_tail == ["q009", "q010"]  # blue and green: 1 <= 1.2 * 10/3
    # g4: mean 2, tail threshold 2.4: cat (1) tail, dog (3) head
    assert "q028" in split.tail_ids and "q025" in split.head_ids
    stats = split.stats()
    assert stats["groups_kept"] == 2
    assert stats["questions"] == {"all": 14, "head": 11, "tail": 3}
    assert stats["input"]["questions_without_local_group"] == 1
    assert stats["input"]["single_answer_groups"] == 1


def test_alpha_moves_answers_between_head_and_tail():
    # g4 mean 2: alpha 0.5 -> threshold 1: cat (1) still tail; g1 mean 3.33, threshold 1.67: blue/green tail
    assert len(build_gqa_ood(gqa_questions(), GqaOodConfig(alpha=0.5)).tail_ids) == 3
    # alpha 0.2: g1 threshold 0.67, g4 threshold 0.4: nothing is tail
    assert build_gqa_ood(gqa_questions(), GqaOodConfig(alpha=0.2)).tail_ids == []
    # alpha 3: g1 threshold 10 takes red too; g4 threshold 6 takes dog too
    assert len(build_gqa_ood(gqa_questions(), GqaOodConfig(alpha=3)).tail_ids) == 14


def test_entropy_threshold_is_strict():
    # g4's normalised entropy is 0.8113: kept below 0.82, dropped at 0.8
    assert build_gqa_ood(gqa_questions(), GqaOodConfig(entropy_threshold=0.82)).groups["g4"].imbalanced
    assert not build_gqa_ood(gqa_questions(), GqaOodConfig(entropy_threshold=0.8)).groups["g4"].imbalanced


def test_released_rule_uses_mean_minus_std_and_a_strict_tail():
    split = build_gqa_ood(gqa_questions(), GqaOodConfig(rule="released"))
    # entropies (released): g1 0.5817, g2 1.0, g3 1.0 (single answer), g4 0.8113 -> mean 0.8483, std 0.1721, threshold 0.6761
    assert split.entropy_threshold_used == pytest.approx(0.6761, abs=1e-3)
    assert [k for k, g in split.groups.items() if g.imbalanced] == ["g1"]
    assert split.tail_ids == ["q009", "q010"]


def test_unknown_rule_and_missing_answer_are_input_errors():
    with pytest.raises(InputError):
        GqaOodConfig(rule="nope")  # type: ignore[arg-type]
    qs = gqa_questions()
    del qs["q003"]["answer"]
    with pytest.raises(InputError, match="q003"):
        build_gqa_ood(qs, path="x.json")


def test_writes_gqa_format_files_deterministically(tmp_path):
    qs = gqa_questions()
    split = build_gqa_ood(qs)
    write_gqa_ood(split, qs, tmp_path / "a")
    write_gqa_ood(build_gqa_ood(gqa_questions()), gqa_questions(), tmp_path / "b")
    for name in ("all.json", "head.json", "tail.json", "groups.json", "stats.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    tail = json.loads((tmp_path / "a" / "tail.json").read_text())
    assert set(tail) == {"q009", "q010", "q028"}
    assert tail["q009"] == qs["q009"]  # original records, GQA format
    stats = json.loads((tmp_path / "a" / "stats.json").read_text())
    assert stats["benchmark"] == "gqa-ood" and stats["rule"] == "paper"


def test_nothing_imbalanced_is_an_error_and_leaves_no_output(tmp_path):
    qs = {k: v for k, v in gqa_questions().items() if v.get("groups", {}).get("local") in ("g2", "g3")}
    with pytest.raises(InputError, match="no imbalanced"):
        write_gqa_ood(build_gqa_ood(qs), qs, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_cli_builds_and_reports(tmp_path):
    src = write_json(tmp_path / "q.json", gqa_questions())
    res = CliRunner().invoke(cli, ["ood", "gqa", "--questions", str(src), "--out", str(tmp_path / "o"),
                                   "--rule", "released"])
    assert res.exit_code == 0, res.output
    assert "imbalanced groups kept" in res.output
    assert json.loads((tmp_path / "o" / "stats.json").read_text())["rule"] == "released"


def test_cli_bad_input_exits_2_naming_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    res = CliRunner().invoke(cli, ["ood", "gqa", "--questions", str(bad), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "bad.json" in res.output


def test_cli_released_rule_says_it_ignores_the_entropy_threshold(tmp_path):
    src = write_json(tmp_path / "q.json", gqa_questions())
    res = CliRunner().invoke(cli, ["ood", "gqa", "--questions", str(src), "--out", str(tmp_path / "o"),
                                   "--rule", "released", "--entropy-threshold", "0.5"])
    assert res.exit_code == 0
    assert "ignored" in res.output
    assert json.loads((tmp_path / "o" / "stats.json").read_text())["entropy_threshold"] != 0.5
