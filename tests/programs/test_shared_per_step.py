"""What the name edit finds once per step or per image instead of per candidate must decide as
the per-candidate path did: the same perturbations and the same reasons a question ends
unperturbed (`objects._Slot`, `NameEdit.reader_checks`, `base.dependents`)."""

from __future__ import annotations

import random

import pytest
import synth

from contrastgen.datasets.gqa_program import Step
from contrastgen.engine import Engine
from contrastgen.programs.edits import base
from contrastgen.programs.edits.objects import NameEdit
from contrastgen.run.generate import generate


@pytest.fixture(scope="module")
def engine():
    return Engine.load()


class _Forgetting(dict):
    """A memo that never answers: every reader is asked of every object again."""

    def get(self, key, default=None):
        return default


def _reasons(gen) -> dict[str, int]:
    return dict(gen.stats["templates"]["program"].get("reasons", {}))


def test_a_readers_answer_kept_per_image_decides_as_asking_it_each_time(engine, monkeypatch):
    questions, graphs = synth.make_dataset(150, 2000, seed=5)
    asked = []
    checks = NameEdit.reader_checks

    def counting(q, index):
        exist_after, readers = checks(q, index)
        asked.extend(lacks for _, lacks in readers if lacks)  # a memo already holding an answer
        return exist_after, readers

    monkeypatch.setattr(NameEdit, "reader_checks", staticmethod(counting))
    shared = generate(questions, graphs, engine=engine, workers=1, mode="programs")
    assert asked, "no reader's answer was found in the image's memo: the test shows nothing"

    def forgetting(q, index):
        exist_after, readers = checks(q, index)
        return exist_after, [(s, None if lacks is None else _Forgetting()) for s, lacks in readers]

    monkeypatch.setattr(NameEdit, "reader_checks", staticmethod(forgetting))
    fresh = generate(questions, graphs, engine=engine, workers=1, mode="programs")
    assert shared.records == fresh.records
    assert _reasons(shared) == _reasons(fresh)


def _dependents_by_closure(steps: list[Step], index: int) -> set[int]:
    """The definition: every step reading `index`, and every step reading one of those."""
    found: set[int] = set()
    todo = [index]
    while todo:
        j = todo.pop()
        for i, s in enumerate(steps):
            if j in s.dependencies and i not in found:
                found.add(i)
                todo.append(i)
    return found


def test_the_steps_downstream_are_the_closure_of_their_readers():
    rng = random.Random(3)
    for _ in range(500):
        n = rng.randint(1, 9)
        steps = [Step("select", "x", ())]
        for i in range(1, n):
            steps.append(Step("relate", "x,on,s", tuple(sorted(rng.sample(range(i), rng.randint(1, min(2, i)))))))
        for index in range(n):
            assert base.dependents(steps, index) == _dependents_by_closure(steps, index)
