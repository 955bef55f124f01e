"""What the program path takes from elsewhere instead of working it out again must decide as
working it out does: the same perturbations and the same reasons a question ends unperturbed.

- In `--mode both`, the program the template path parsed and the run it checked the gold answer
  with (`engine.question`, `template_path.original_run`) are the program editor's.
- A run of steps that begin as another run's starts from that run's values: the proofs' re-run
  by the words (`EditProofs.words_agree`), rd+'s longer program (`SayEveryAttribute._proven`).
- The names a reference may be offered are kept per image and key (`NameEdit._offered`).
"""

from __future__ import annotations

import sys

import pytest
import synth
from builders import plain_graph as _graph
from builders import plain_object as _obj
from builders import program_step as _step

from contrastgen.datasets.gqa_program import REFERENCE_OPS, step_of
from contrastgen.engine import Engine
from contrastgen.programs.edits import editor as editor_module
from contrastgen.programs.edits.image import ImageTools
from contrastgen.programs.edits.objects import NameEdit
from contrastgen.programs.edits.question import EditedQuestion
from contrastgen.programs.executor import GqaExecutor
from contrastgen.run.generate import generate
from contrastgen.scene.index import SceneIndex


@pytest.fixture(scope="module")
def engine():
    return Engine.load()


@pytest.fixture(scope="module")
def dataset():
    return synth.make_dataset(150, 2000, seed=23)


def _reasons(gen) -> dict[str, dict[str, int]]:
    return {template: dict(entry.get("reasons", {})) for template, entry in gen.stats["templates"].items()}


def test_the_template_paths_program_and_run_are_what_the_editor_would_find(engine, dataset, monkeypatch):
    questions, graphs = dataset
    perturb = editor_module.ProgramEditor.perturb
    handed = []

    def counting(self, *args, steps=None, original=None, **kw):
        handed.append((steps is not None, original is not None))
        return perturb(self, *args, steps=steps, original=original, **kw)

    monkeypatch.setattr(editor_module.ProgramEditor, "perturb", counting)
    shared = generate(questions, graphs, engine=engine, workers=1, mode="both")
    assert all(parsed for parsed, _ in handed)
    assert any(run for _, run in handed), "no run was handed over: the test shows nothing"

    def alone(self, *args, steps=None, original=None, **kw):
        return perturb(self, *args, **kw)  # parsed and run by the editor itself

    monkeypatch.setattr(editor_module.ProgramEditor, "perturb", alone)
    fresh = generate(questions, graphs, engine=engine, workers=1, mode="both")
    assert shared.records == fresh.records
    assert _reasons(shared) == _reasons(fresh)


def test_a_handed_over_run_is_the_one_the_editor_reads(engine):
    """A run of another program handed over is read as the original's: the editor trusts the
    caller, so the engine must hand over the question's own run (the test above); here, that
    the editor reads what it is given rather than running again."""
    graph = _graph(**{"1": _obj("car", 50, ["red"]), "2": _obj("bus", 400, ["blue"])})
    question = {"imageId": "1", "question": "What color is the car?", "answer": "red",
                "semantic": [_step("select", "car (1)"), _step("query color", "color", 0)]}
    scene = SceneIndex.build("1", graph, engine.lex)
    other = [step_of(s) for s in ({**question["semantic"][0], "argument": "bus (2)"}, question["semantic"][1])]
    run = GqaExecutor(scene, engine.lex, graph).run_steps(other)
    editor = editor_module.ProgramEditor(scene, graph, engine.lex)
    with pytest.raises(editor_module.Refusal) as refused:
        editor.perturb("q1", question, max_k=5, seed=0, existing=set(), original=run)
    assert refused.value.reason == "answer_mismatch"  # "blue", the bus's colour, is not the gold
    assert editor.perturb("q1", question, max_k=5, seed=0, existing=set())  # by itself: proven edits


def test_runs_started_from_another_runs_values_are_the_runs_from_the_first_step(engine, dataset, monkeypatch):
    questions, graphs = dataset
    run_steps = GqaExecutor.run_steps
    started = set()

    def counting(self, steps, *, prefix=None, start=0):
        if prefix is not None and start:
            started.add(sys._getframe(1).f_code.co_name)
        return run_steps(self, steps, prefix=prefix, start=start)

    monkeypatch.setattr(GqaExecutor, "run_steps", counting)
    shared = generate(questions, graphs, engine=engine, workers=1, mode="programs")
    assert {"words_agree", "_proven", "execute"} <= started, started

    def from_the_first(self, steps, *, prefix=None, start=0):
        return run_steps(self, steps)

    monkeypatch.setattr(GqaExecutor, "run_steps", from_the_first)
    fresh = generate(questions, graphs, engine=engine, workers=1, mode="programs")
    assert shared.records == fresh.records
    assert _reasons(shared) == _reasons(fresh)


def test_offered_names_kept_per_image_decide_as_finding_them_each_time(engine, dataset, monkeypatch):
    questions, graphs = dataset
    kept = generate(questions, graphs, engine=engine, workers=1, mode="programs")

    def offered_afresh(self, q, category, *, plural, asks_kind):
        lex = q.image.lex
        own, kinds, groups = self._renamable(q)
        names = {n for n in (own | groups if plural else own) if category is None or lex.category(n) == category}
        return frozenset(names | (kinds if asks_kind else set()))

    monkeypatch.setattr(NameEdit, "_offered", offered_afresh)
    fresh = generate(questions, graphs, engine=engine, workers=1, mode="programs")
    assert kept.records == fresh.records
    assert _reasons(kept) == _reasons(fresh)


def test_offered_names_are_kept_apart_by_every_part_of_their_key(engine, dataset):
    questions, graphs = dataset
    edit = NameEdit()
    checked = 0
    for question in [q for q in questions.values() if q.get("semantic")][:200]:
        graph = graphs[question["imageId"]]
        tools = ImageTools(SceneIndex.build(question["imageId"], graph, engine.lex), graph, engine.lex)
        steps = [step_of(s) for s in question["semantic"]]
        q = EditedQuestion(tools, question, steps, question["semantic"], "", None)  # type: ignore[arg-type]
        own, kinds, groups = edit._renamable(q)
        names = [s.argument.split(" (")[0] for s in steps if s.operation in REFERENCE_OPS]
        categories = [None, *(engine.lex.category(n) for n in names)]
        for category in categories:
            for plural in (False, True):
                for asks_kind in (False, True):
                    want = {n for n in (own | groups if plural else own)
                            if category is None or engine.lex.category(n) == category}
                    assert edit._offered(q, category, plural=plural, asks_kind=asks_kind) == \
                        frozenset(want | (kinds if asks_kind else set()))
                    checked += 1
    assert checked


# "What color is the person the umbrella is above?" with two people under it: GQA's ids name one
UMBRELLA = _graph(**{"1": _obj("umbrella", 200, ["black"], [("above", "2"), ("above", "3")]),
                     "2": _obj("man", 150, ["blue"]), "3": _obj("woman", 260, ["red"])})
UNDER = [_step("select", "umbrella (1)"), _step("relate", "person,above,o (2)", 0), _step("query color", "color", 1)]


def test_the_re_run_by_the_words_starts_at_the_first_step_it_names_by_words(engine):
    tools = ImageTools(SceneIndex.build("1", UMBRELLA, engine.lex), UMBRELLA, engine.lex)
    steps = [step_of(s) for s in UNDER]
    run = tools.executor().run_steps(steps)
    assert run.answer == "blue" and run.refs[1] == ("2",)
    assert not tools.proofs.words_agree(steps, run)  # by the words, "the person" is either of two
    alone = [steps[0], step_of({**UNDER[1], "argument": "man,above,o (2)"}), steps[2]]
    assert tools.proofs.words_agree(alone, tools.executor().run_steps(alone))  # "the man": one
