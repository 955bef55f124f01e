"""An edited run whose answer its edit does not want is turned down before its proofs, which are
run only where the question ends with nothing kept, for the reasons a failing proof notes
(`EditedQuestion.execute`, `settle`). Deciding the answer first must change nothing: the same
perturbations, the same reasons a question ends unperturbed."""

from __future__ import annotations

import pytest
import synth
from builders import plain_graph as _graph
from builders import plain_object as _obj
from builders import program_step as _step

from contrastgen.datasets.gqa_program import step_of
from contrastgen.engine import Engine
from contrastgen.programs.edits.image import ImageTools
from contrastgen.programs.edits.question import EditedQuestion
from contrastgen.run.generate import generate
from contrastgen.scene.index import SceneIndex

# the skier is listed as white and wears pink shoes: a colour "no" of a person is not claimed
SKIER = _graph(**{"1": _obj("skier", 50, ["white"], [("wearing", "2")]), "2": _obj("shoes", 60, ["pink"]),
                  "3": _obj("woman", 400, ["blue"])})
SKIER_WHITE = {"imageId": "1", "question": "Is the skier white?", "answer": "yes",
               "semantic": [_step("select", "skier (1)"), _step("verify color", "white", 0)]}


@pytest.fixture(scope="module")
def engine():
    return Engine.load()


def _question(engine) -> EditedQuestion:
    tools = ImageTools(SceneIndex.build("1", SKIER, engine.lex), SKIER, engine.lex)
    steps = [step_of(s) for s in SKIER_WHITE["semantic"]]
    original = tools.executor().run_steps(steps)
    return EditedQuestion(tools, SKIER_WHITE, steps, SKIER_WHITE["semantic"], "yes", original)


def test_a_run_turned_down_is_proven_at_settle_noting_what_proving_it_at_once_notes(engine):
    at_once = _question(engine)
    assert at_once.execute(1, "pink") is None  # "Is the skier pink? no": a colour no of a person
    assert at_once.image.proofs.several_colored_refused

    later = _question(engine)
    assert later.execute(1, "pink", lambda run: False) is None
    assert not later.image.proofs.several_colored_refused  # not proven yet
    later.settle()
    assert later.image.proofs.several_colored_refused


def test_a_wanted_run_is_proven_at_once(engine):
    q = _question(engine)
    assert q.execute(1, "pink", lambda run: run.answer == "no") is None
    assert q.image.proofs.several_colored_refused
    q.settle()  # nothing was set aside


def _stats_reasons(gen) -> dict[str, dict[str, int]]:
    return {template: dict(entry.get("reasons", {})) for template, entry in gen.stats["templates"].items()}


def _proving_first(monkeypatch) -> None:
    """`execute` as it was before the answer was decided first: prove, then ask what is wanted."""
    execute = EditedQuestion.execute

    def proving_first(self, index, argument, wanted=None):
        done = execute(self, index, argument)
        return None if done is None or (wanted is not None and not wanted(done[1])) else done

    monkeypatch.setattr(EditedQuestion, "execute", proving_first)


def test_deciding_the_answer_first_changes_no_output_and_no_reason(engine, monkeypatch):
    questions, graphs = synth.make_dataset(150, 2000, seed=11)
    first = generate(questions, graphs, engine=engine, workers=1, mode="programs")
    _proving_first(monkeypatch)
    proven_first = generate(questions, graphs, engine=engine, workers=1, mode="programs")
    assert first.records == proven_first.records
    assert _stats_reasons(first) == _stats_reasons(proven_first)
    reasons = _stats_reasons(first)["program"]
    assert reasons.get("several_colors") and reasons.get("unannotated_prone")


# "Is the ground white or pink? pink" (a ground of two colours, so no other colour is shown
# excluded, and no option may be swapped): the car is pink too, so "Is the car white or pink?"
# keeps the answer and is no contrast; proven, its "not white" of a car would be refused for
# a composite thing's several colours, and with nothing else found, that is the question's reason
GROUND = _graph(**{"1": _obj("ground", 50, ["pink", "khaki"]), "2": _obj("car", 400, ["pink", "bright green"])})
GROUND_COLOR = {"imageId": "1", "question": "Is the ground white or pink?", "answer": "pink",
                "semantic": [_step("select", "ground (1)"), _step("choose color", "white|pink", 0)]}


@pytest.mark.parametrize("order", ["answer first", "proof first"])
def test_a_reason_only_a_turned_down_run_notes_is_still_the_questions(engine, monkeypatch, order):
    if order == "proof first":
        _proving_first(monkeypatch)
    gen = generate({"q1": GROUND_COLOR}, {"1": GROUND}, engine=engine, workers=1, mode="programs")
    assert gen.stats["templates"]["program"]["reasons"] == {"several_colors": 1}


def test_without_settling_that_reason_would_be_lost(engine, monkeypatch):
    monkeypatch.setattr(EditedQuestion, "settle", lambda self: None)
    gen = generate({"q1": GROUND_COLOR}, {"1": GROUND}, engine=engine, workers=1, mode="programs")
    assert gen.stats["templates"]["program"]["reasons"] == {"no_distractor": 1}
