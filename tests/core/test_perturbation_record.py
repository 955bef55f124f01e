"""One perturbation record, written and read: what `generate` writes (GQA templates and program
edits, CLEVR edits, each with its two-image groups) is what the reader gives back, typed, and its
`to_dict` gives back the very entry written (so a reader that passes a perturbation on passes
the generator's bytes)."""

from __future__ import annotations

import orjson
import pytest

from contrastgen.datasets.clevr import load_questions, load_scenes
from contrastgen.errors import InputError
from contrastgen.jsonio import dumps
from contrastgen.records import INVARIANCE, Group, Perturbation, parse_contrast_sets
from contrastgen.resources import clevr_sample_dir, sample_dir


@pytest.fixture(scope="module")
def gqa_lines(engine):
    from contrastgen.run.generate import generate

    questions = orjson.loads((sample_dir() / "questions.json").read_bytes())
    graphs = orjson.loads((sample_dir() / "scene_graphs.json").read_bytes())
    return generate(questions, graphs, engine=engine, workers=1, mode="both", groups=True).lines


@pytest.fixture(scope="module")
def clevr_lines():
    from contrastgen.run.generate import generate

    sample = clevr_sample_dir()
    return generate(load_questions(sample / "questions"), load_scenes(sample / "scenes"), family="clevr", max_k=5,
                    seed=0, groups=True).lines


@pytest.mark.parametrize("family", ["gqa", "clevr"])
def test_the_reader_gives_back_what_the_generator_wrote(family, request):
    lines = request.getfixturevalue(f"{family}_lines")
    written = [orjson.loads(line) for line in lines]
    sets = parse_contrast_sets(written)
    read = [p for cs in sets for p in cs.perturbations]
    entries = [p for rec in written for p in rec["perturbations"]]
    assert len(read) == len(entries) > 20
    assert all(isinstance(p, Perturbation) for p in read)
    assert [dumps(p.to_dict()) for p in read] == [dumps(p) for p in entries]  # byte for byte, as written
    grouped = [p for p in read if p.group is not None]
    assert grouped and all(isinstance(p.group, Group) and len(p.group.cells) == 4 for p in grouped)
    assert all(p.group.cells[1].question_id == p.question_id for p in grouped)
    program_key = "semantic" if family == "gqa" else "program"
    assert all(program_key in p.group.cells[2].program and p.group.cells[2].evidence for p in grouped)
    assert {p.invariance for p in read} == {True, False}
    assert all(p.invariance == (e["kind"] == INVARIANCE) for p, e in zip(read, entries, strict=True))
    assert all(p.change_kind == e["change"]["kind"] for p, e in zip(read, entries, strict=True))


def test_a_group_not_shaped_as_written_fails_when_read(gqa_lines):
    rec = next(r for r in map(orjson.loads, gqa_lines) if any("group" in p for p in r["perturbations"]))
    pert = next(p for p in rec["perturbations"] if "group" in p)
    del pert["group"]["cells"][3]
    with pytest.raises(InputError, match="group is not shaped as") as err:
        parse_contrast_sets([rec], path="cs.jsonl")
    assert err.value.path == "cs.jsonl" and err.value.record == f"question {pert['question_id']}"


def test_gold_is_the_normalised_answer_and_answer_the_written_one():
    p = Perturbation("q_1", "Is it red?", "Yes.", 1, {"kind": "attribute"}, {"facts": []})
    assert (p.answer, p.gold) == ("Yes.", "yes")


def test_the_driver_without_a_limit_keeps_every_new_proposal_contrasts_first():
    from contrastgen.perturb import INVARIANCE as INV
    from contrastgen.perturb import Proposal, Ranking

    def proposal(text: str, kind: str = "contrast") -> Proposal:
        return Proposal(text, "a", {"kind": "object"}, {"facts": []}, kind)

    offered = [proposal("q1?", INV), *(proposal(f"c{i}?") for i in range(12)), proposal("c0?"), proposal("q2?", INV)]
    limited, unlimited = Ranking(set(), 3), Ranking(set(), None)
    limited.take(offered)
    unlimited.take(offered)
    assert [p.question for p in limited.kept] == ["c0?", "c1?", "c2?"] and limited.full
    assert not unlimited.full and unlimited.duplicates == 1
    assert [p.question for p in unlimited.kept] == [*(f"c{i}?" for i in range(12)), "q1?", "q2?"]
    assert [p.rank for p in unlimited.numbered("q", "p")] == list(range(1, 15))
