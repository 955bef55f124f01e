"""VQA-VS's IID training, validation and test sets (the paper's 70 / 5 / 25 split, seeded), the
OOD sets drawn from the IID test set, and the IID-minus-OOD gap in `evaluate --ood`."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.datasets.samples import Sample
from contrastgen.errors import InputError
from contrastgen.ood import evaluate_ood
from contrastgen.ood.pipeline import run_vqavs
from contrastgen.ood.vqavs import VqaVsConfig
from contrastgen.ood.vqavs_iid import IidSplit, split_iid

from .helpers import vqa_files

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
VQAVS = SHARED / "data" / "vqa-vs"


def _samples(n: int) -> list[Sample]:
    return [Sample(f"q{i:05d}", str(i // 3), f"what is {i}?", "x", ["x"]) for i in range(n)]


def test_the_split_is_the_papers_shares_disjoint_seeded_and_independent_of_input_order():
    samples = _samples(1000)
    parts = split_iid(samples, IidSplit(seed=0))
    assert {p: len(s) for p, s in parts.items()} == {"train": 700, "val": 50, "test": 250}
    ids = {p: {s.question_id for s in part} for p, part in parts.items()}
    assert set().union(*ids.values()) == {s.question_id for s in samples}
    assert not ids["train"] & ids["val"] and not ids["train"] & ids["test"] and not ids["val"] & ids["test"]
    shuffled = list(samples)
    random.Random(5).shuffle(shuffled)
    again = split_iid(shuffled, IidSplit(seed=0))
    assert {p: {s.question_id for s in part} for p, part in again.items()} == ids
    other = split_iid(samples, IidSplit(seed=1))
    assert {s.question_id for s in other["test"]} != ids["test"]


def test_bad_shares_and_a_repeated_question_are_refused():
    with pytest.raises(InputError, match="summing to 1"):
        IidSplit(shares=(0.7, 0.2, 0.2))
    with pytest.raises(InputError, match="test share must be positive"):
        IidSplit(shares=(0.9, 0.1, 0.0))
    with pytest.raises(InputError, match="question q00001"):
        split_iid(_samples(3) + _samples(2)[1:], IidSplit())


def _rows(n: int) -> list[tuple[str, str, str, list[str]]]:
    """Colour questions mostly answered white (so QT groups are imbalanced), some yes/no."""
    rng = random.Random(0)
    out = []
    for i in range(n):
        if i % 4:
            answer = "white" if rng.random() < 0.8 else rng.choice(["black", "red", "blue"])
            out.append((f"What color is the wall {i}?", str(i), answer, [answer] * 10))
        else:
            answer = rng.choice(["yes", "no"])
            out.append((f"Is the dog asleep {i}?", str(i), answer, [answer] * 10))
    return out


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_cli_iid_split_writes_the_three_sets_and_evaluate_reports_val_and_the_gap(tmp_path):
    q, a = vqa_files(tmp_path, _rows(400))
    args = ["ood", "vqavs", "--questions", str(q), "--annotations", str(a), "--shortcuts", "QT", "--iid-split"]
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "one")])
    assert result.exit_code == 0, result.output
    assert "280 training, 20 validation, 100 test" in result.output
    out = tmp_path / "one"
    sets = {p: [x["question_id"] for x in json.loads((out / "iid" / f"{p}-Ques.json").read_text())]
            for p in ("train", "val", "test")}
    assert {p: len(v) for p, v in sets.items()} == {"train": 280, "val": 20, "test": 100}
    splits = json.loads((out / "splits.json").read_text())
    assert sorted(splits["iid"]) == sorted(str(x) for x in sets["test"])
    assert set(splits["ood"]["QT"]) <= set(splits["iid"])  # OOD sets come from the IID test set
    stats = json.loads((out / "stats.json").read_text())
    assert stats["iid_split"] == {"seed": 0, "shares": {"train": 0.7, "val": 0.05, "test": 0.25},
                                  "sizes": {"train": 280, "val": 20, "test": 100}}
    assert stats["mi_source"] == "separate"  # estimated on the IID training set
    assert CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "two")]).exit_code == 0
    assert _digest(tmp_path / "two") == _digest(out)
    assert CliRunner().invoke(cli, [*args, "--seed", "1", "--out", str(tmp_path / "three")]).exit_code == 0
    assert (tmp_path / "three" / "splits.json").read_bytes() != (out / "splits.json").read_bytes()

    # a model that answers "white" to everything: right on the IID sets' white answers, wrong on QT's tail
    anns = {str(x["question_id"]): x["multiple_choice_answer"] for x in json.loads(a.read_text())}
    (tmp_path / "white.json").write_text(json.dumps({str(x): "white" for p in ("val", "test") for x in sets[p]}))
    report = evaluate_ood(out, {"white": json.loads((tmp_path / "white.json").read_text())})
    assert report["sets"][:2] == ["IID", "IID val"]
    m = report["models"]["white"]

    def share_white(ids):
        return sum(anns[str(x)] == "white" for x in ids) / len(ids)
    assert m["accuracy"]["IID"] == pytest.approx(share_white(sets["test"]))
    assert m["accuracy"]["IID val"] == pytest.approx(share_white(sets["val"]))
    assert m["gap"] == pytest.approx(m["accuracy"]["IID"] - m["accuracy"]["QT"])


def test_iid_options_without_the_split_are_refused(tmp_path):
    q, a = vqa_files(tmp_path, _rows(20))
    result = CliRunner().invoke(cli, ["ood", "vqavs", "--questions", str(q), "--annotations", str(a),
                                      "--seed", "3", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "apply with --iid-split only" in result.output


@pytest.mark.shared
def test_real_vqavs_iid_sets(tmp_path):
    """The shared VQA-VS validation questions as the pool: the split's sizes, OOD sets inside the
    IID test set, and the crowd's answer scored on IID test, IID validation and OOD."""
    if not (VQAVS / "Val-Ques.json").exists():
        pytest.skip("../shared/data/vqa-vs absent")
    out = tmp_path / "out"
    stats = run_vqavs(VQAVS / "Val-Ques.json", out, annotations=VQAVS / "Val-Ans.json",
                      config=VqaVsConfig(shortcuts=("QT", "KW")), iid=IidSplit(seed=0))
    assert stats["iid_split"]["sizes"] == {"train": 22906, "val": 1636, "test": 8181}
    assert stats["samples"] == 8181
    splits = json.loads((out / "splits.json").read_text())
    for name in ("QT", "KW"):
        assert len(splits["ood"][name]) > 0 and set(splits["ood"][name]) <= set(splits["iid"])
    answers = {str(x["question_id"]): x["multiple_choice_answer"]
               for p in ("train", "val", "test") for x in json.loads((out / "iid" / f"{p}-Ans.json").read_text())}
    assert len(answers) == 32723
    report = evaluate_ood(out, {"mc": answers})
    acc = report["models"]["mc"]["accuracy"]
    assert report["sizes"]["IID val"] == 1636 and acc["IID val"] > 0.9 and acc["IID"] > 0.9


def test_the_question_type_prior_script_fits_on_iid_train_and_answers_val_and_test(tmp_path):
    bench = Path(__file__).resolve().parents[2] / "benchmarks" / "vqavs_prior.py"
    if not bench.is_file():
        pytest.skip("benchmarks/vqavs_prior.py absent (installed package)")
    import importlib.util

    spec = importlib.util.spec_from_file_location("vqavs_prior", bench)
    prior = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prior)
    q, a = vqa_files(tmp_path, _rows(200))
    anns = json.loads(a.read_text())
    for x in anns:  # VQA's question_type, which the helper leaves out
        x["question_type"] = "is the" if x["answer_type"] == "yes/no" else "what color is the"
    a.write_text(json.dumps(anns))
    out = tmp_path / "o"
    assert CliRunner().invoke(cli, ["ood", "vqavs", "--questions", str(q), "--annotations", str(a), "--shortcuts",
                                    "QT", "--iid-split", "--out", str(out)]).exit_code == 0
    prior.main(str(out), str(tmp_path / "p.json"))
    preds = json.loads((tmp_path / "p.json").read_text())
    train = json.loads((out / "iid" / "train-Ans.json").read_text())
    yes_no = Counter(x["multiple_choice_answer"] for x in train if x["question_type"] == "is the")
    top = min(yes_no, key=lambda x: (-yes_no[x], x))
    held = [x for p in ("val", "test") for x in json.loads((out / "iid" / f"{p}-Ans.json").read_text())]
    assert len(preds) == len(held) == 200 - len(train)
    assert all(preds[str(x["question_id"])] == (top if x["question_type"] == "is the" else "white") for x in held)
