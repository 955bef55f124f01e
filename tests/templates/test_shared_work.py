"""What the template path decides once and shares: per question (the original's program, read
and executed once for all the templates it matches), per image (candidate names, the names of a
kind) and per word (whether its absence can be proven at all). Each must give what deciding it
afresh gives."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from builders import plain_graph as _graph
from builders import plain_object as _obj
from builders import program_step as _step

import contrastgen.datasets.gqa_program as gqa_program
import contrastgen.engine.question as question_module
import contrastgen.engine.template_path as template_path
import contrastgen.programs.executor as executor_module
from contrastgen.resources import sample_dir
from contrastgen.scene.ground import denoted_ids
from contrastgen.scene.index import SceneIndex
from contrastgen.templates import base
from contrastgen.templates.patterns import match_all

_RELATION = {"imageId": "1", "question": "Is the car to the left of the tree?", "answer": "yes",
             "semantic": [_step("select", "car (1)"), _step("verify rel", "tree,to the left of,o (2)", 0)]}
_RELATION_GRAPH = _graph(**{"1": _obj("car", 50, ["red"], [("to the left of", "2")]),
                            "2": _obj("tree", 400, rels=[("to the right of", "1")]),
                            "3": _obj("bus", 60, rels=[("to the right of", "2")]),
                            "4": _obj("dog", 30, rels=[("to the right of", "2")])})


def _records(results):
    return [json.dumps(r.record(), sort_keys=True) for r in results]


def test_a_question_two_templates_match_reads_and_runs_its_program_once(engine, monkeypatch):
    calls = {"read": 0, "run": 0, "parse": 0}
    read, run, parse = question_module.read_program, template_path.original_run, gqa_program.parse_program

    def counted_read(semantic, **kw):
        calls["read"] += 1
        return read(semantic, **kw)

    def counted_run(lex, question, scene, *rest):
        calls["run"] += 1
        return run(lex, question, scene, *rest)

    def counted_parse(semantic):
        calls["parse"] += 1
        return parse(semantic)

    monkeypatch.setattr(question_module, "read_program", counted_read)
    monkeypatch.setattr(template_path, "original_run", counted_run)
    monkeypatch.setattr(gqa_program, "parse_program", counted_parse)
    monkeypatch.setattr(executor_module, "read_steps", counted_parse)  # the executor's own name for it
    both = engine.perturb_question("q1", _RELATION, _RELATION_GRAPH, max_k=5)
    assert [r.template for r in both] == ["is_the_x_rel_the_y__relation", "is_the_x_rel_the_y__object"]
    # parsed once, for the reading and the original's run alike
    assert calls == {"read": 1, "run": 1, "parse": 1}
    # each template alone reads and runs the program itself, and gives the same record
    alone = [r for t in ("is_the_x_rel_the_y__relation", "is_the_x_rel_the_y__object")
             for r in engine.perturb_question("q1", _RELATION, _RELATION_GRAPH, max_k=5, templates=[t])]
    assert calls == {"read": 3, "run": 3, "parse": 3}
    assert _records(both) == _records(alone)
    assert any(r.perturbations for r in both)


def test_the_original_run_from_shared_steps_is_the_run_from_its_program(engine):
    """`program_refusal` given the steps the reading parsed says what parsing afresh says, for a
    program that executes to its answer, one that does not, and one whose ids the words deny."""
    scene = SceneIndex.build("1", _RELATION_GRAPH, engine.lex)
    wrong = {**_RELATION, "answer": "no"}
    mismatched = {**_RELATION, "semantic": [_step("select", "dog (1)"), *_RELATION["semantic"][1:]]}
    said = [template_path.program_refusal(engine.lex, q, scene, gqa_program.parse_program(q["semantic"]))
            for q in (_RELATION, wrong, mismatched)]
    assert said == [template_path.program_refusal(engine.lex, q, scene) for q in (_RELATION, wrong, mismatched)]
    assert said == [None, "answer_mismatch", "program_mismatch"]


def test_a_program_that_fails_refuses_every_template_it_was_read_for(engine):
    wrong = {**_RELATION, "answer": "no"}  # the program says yes
    results = engine.perturb_question("q1", wrong, _RELATION_GRAPH, max_k=5)
    assert len(results) == 2 and all(r.reason == "answer_mismatch" for r in results)


def _sample_scenes(lex):
    graphs = json.loads((sample_dir() / "scene_graphs.json").read_text())
    return [SceneIndex.build(image_id, g, lex) for image_id, g in graphs.items()]


def _absent_as_defined(word, scene, lex):
    """`absent_provably` as the rule says it: the word's gates, then no object of the graph named
    by any of its kind's names (the graph's own included) or of a kind it may denote."""
    if not lex.is_known(word) or not lex.absence_decidable(word) or base._prone(word, lex):
        return False
    names = set(base._expanded(word, lex)) | {scene.objects[i].name for i in denoted_ids(word, scene, lex)}
    return not scene.has_any_name(frozenset(names) | base._maybe_names(word, lex))


def test_absence_and_kind_names_decided_once_are_what_deciding_afresh_gives(engine):
    lex = engine.lex
    scenes = _sample_scenes(lex)
    words = sorted({o.name for s in scenes for o in s.objects.values()}
                   | {"man", "person", "player", "dish", "bowl", "glasses", "car", "vehicle", "animal", "giraffe"})
    absent = 0
    for scene in scenes:
        for word in words:
            expected = _absent_as_defined(word, scene, lex)
            assert base.absent_provably(word, scene, lex) == expected, (scene.image_id, word)
            absent += expected
            fresh = frozenset(set(base._expanded(word, lex))
                              | {scene.objects[i].name for i in denoted_ids(word, scene, lex)})
            assert base.kind_names(word, scene, lex) == fresh
            assert base.kind_names(word, scene, lex) == fresh  # the remembered answer too
    assert absent > 0  # the comparison saw absences, not only presences


@pytest.mark.parametrize("others", [("car",), ("car", "tree"), ("vehicle", ""), ("dog", "animal")])
def test_distinct_kind_remembered_is_distinct_kind_decided(engine, others):
    lex = engine.lex
    for candidate in ("bus", "car", "poodle", "dog", "tree", "it", "red", "truck"):
        expected = lex.is_known(candidate) and all(not base.same_kind(candidate, o, lex) for o in others if o)
        assert base.distinct_kind(candidate, *others, lex=lex) == expected


def _texts(engine) -> list[str]:
    """Every example of the shipped templates (matching and not), and questions no pattern reads."""
    found = [t for tpl in engine.templates for ts in tpl.examples.values() for t in ts]
    return found + ["Is the man near the catcher wearing jeans?", "What color is it?", "Where is this?",
                    "Is the cup to the left of the plate?", "Are there cars near the tree?"]


def test_matches_remembered_per_text_are_the_matches_made_afresh(engine, monkeypatch):
    """`Engine.matcher` (what a run's shards match with) gives, for each text, what `match`
    gives, whether it was asked before or not, and stays bounded."""
    texts = _texts(engine)
    assert len(texts) > 20 and any(engine.match(t) for t in texts) and not all(engine.match(t) for t in texts)
    for chosen in (engine.templates, engine.select_templates(["is_the_x_rel_the_y__object", "what_color_is_the_x"])):
        monkeypatch.setattr(question_module._RememberedMatches, "LIMIT", 7)
        match = engine.matcher(chosen)
        assert engine.matcher(chosen) is match  # one memory per choice of templates
        for _ in range(2):  # asked afresh, then (for the last few) remembered
            for text in texts:
                assert match(text) == engine.match(text, chosen)
        assert len(match.__self__) <= 7


def test_a_matcher_takes_only_the_engines_own_templates(engine):
    foreign = tuple(replace(t, patterns=t.patterns[:1]) for t in engine.templates)
    with pytest.raises(ValueError, match="engine's own"):
        engine.matcher(foreign)


def test_two_templates_of_one_pattern_each_read_it_as_when_tried_alone(engine):
    """The relation templates share one compiled pattern, tried once a question: each match is
    the one trying its own patterns gives."""
    relation, obj = engine.select_templates(["is_the_x_rel_the_y__relation", "is_the_x_rel_the_y__object"])
    assert relation.patterns[0] is obj.patterns[0]
    for text in _texts(engine):
        found = {m.template.id: m for m in match_all(text, engine.templates)}
        for t in engine.templates:
            alone = match_all(text, (t,))
            assert (found.get(t.id),) == (tuple(alone) or (None,))


def test_a_templates_generator_made_on_first_draw_draws_what_the_seeded_one_draws(engine, monkeypatch):
    """`Context.rng` is made when a handler first draws, once: its draws are those of
    `seeded_rng` for the question and template, and a handler that draws nothing (the
    relation's own) makes none."""
    from contrastgen.engine.question import TEMPLATE_SEED
    from contrastgen.perturb import seeded_rng

    made = []
    monkeypatch.setattr(question_module, "seeded_rng", lambda *a: made.append(a) or seeded_rng(*a))
    scene = SceneIndex.build("1", _RELATION_GRAPH, engine.lex)
    matches = {m.template.id: m for m in engine.match(_RELATION["question"])}
    ctx = engine.context("q7", _RELATION, matches["is_the_x_rel_the_y__object"], scene, seed=3)
    assert made == []
    rng = ctx.rng
    assert ctx.rng is rng and made == [(TEMPLATE_SEED, 3, "q7", "is_the_x_rel_the_y__object")]
    expected = seeded_rng(TEMPLATE_SEED, 3, "q7", "is_the_x_rel_the_y__object")
    assert [ctx.rng.random() for _ in range(5)] == [expected.random() for _ in range(5)]  # one stream, not restarted
    made.clear()
    results = engine.perturb_question("q7", _RELATION, _RELATION_GRAPH, templates=["is_the_x_rel_the_y__relation"])
    assert results[0].perturbations and made == []
