"""The linguistic fixer: each rule of the paper's Table 10 and the ones its code got wrong."""

from __future__ import annotations

import pytest

from contrastgen.language.nounphrase import parse
from contrastgen.language.phrase import agree, finish, indefinite, realise


@pytest.mark.parametrize("word,expected", [
    ("hour", "an hour"), ("uniform", "a uniform"), ("umbrella", "an umbrella"),
    ("MP3 player", "an MP3 player"), ("elephant", "an elephant"), ("fence", "a fence"),
    ("one-way sign", "a one-way sign"), ("honest man", "an honest man"), ("unicorn", "a unicorn"),
])
def test_a_or_an_by_pronunciation(word, expected):
    assert indefinite(word) == expected


def _np(engine, text):
    return parse(text, engine.lex)


def test_singular_countable_gets_a_or_an(engine):
    assert realise("elephant", _np(engine, "a fence"), engine.lex) == ("an elephant", False)
    assert realise("wall", _np(engine, "a fence"), engine.lex) == ("a wall", False)


def test_plural_original_keeps_plural(engine):
    assert realise("man", _np(engine, "cats"), engine.lex) == ("men", True)
    assert realise("tree", _np(engine, "any cats"), engine.lex) == ("any trees", True)


def test_uncountable_takes_no_indefinite_article(engine):
    text, plural = realise("water", _np(engine, "a fence"), engine.lex)
    assert (text, plural) == ("water", False)
    assert realise("water", _np(engine, "any fence"), engine.lex) == ("any water", False)


def test_plural_only_nouns_are_plural(engine):
    text, plural = realise("jeans", _np(engine, "a shirt"), engine.lex)
    assert (text, plural) == ("jeans", True)
    assert realise("scissors", _np(engine, "any knife"), engine.lex) == ("any scissors", True)


def test_definite_stays_definite_and_indefinite_stays_indefinite(engine):
    assert realise("wall", _np(engine, "the fence"), engine.lex)[0] == "the wall"
    assert realise("wall", _np(engine, "this fence"), engine.lex)[0] == "the wall"
    assert not realise("wall", _np(engine, "a fence"), engine.lex)[0].startswith("the")


@pytest.mark.parametrize("verb,plural,expected", [
    ("is", True, "are"), ("Is", True, "Are"), ("Are", False, "Is"), ("has", True, "have"),
    ("have", False, "has"), ("does", True, "do"), ("is", False, "is"),
])
def test_verb_agreement(verb, plural, expected):
    assert agree(verb, plural) == expected


def test_finish_capitalises_and_ends_with_question_mark():
    assert finish("the helmet has what color") == "The helmet has what color?"
    assert finish("is there  a wall near the puddle?") == "Is there a wall near the puddle?"


def test_there_is_there_are_agreement_in_generated_question(engine):
    from builders import GraphBuilder, question

    b = GraphBuilder()
    puddle = b.add("puddle", 300)
    fence = b.add("fence", 320)
    b.relate(fence, "near", puddle)
    other = GraphBuilder()
    other.add("puddle", 10)
    other.add("scissors", 10)
    graphs = {"1": b.graph, "2": other.graph}
    corpus = engine.build_corpus(graphs)
    res = engine.perturb("q", question("Is there a fence near the puddle?", "yes"), b.graph,
                         corpus=corpus, max_k=5)
    assert [p.question for p in res.perturbations] == ["Are there scissors near the puddle?"]


def test_either_or_is_kept(engine):
    from builders import GraphBuilder, question

    b = GraphBuilder()
    b.add("dog", 100)
    res = engine.perturb("q", question("Do you see either cats or horses?", "no"), b.graph, max_k=1)
    assert res.perturbations[0].question == "Do you see either dogs or horses?"
    assert res.perturbations[0].answer == "yes"
