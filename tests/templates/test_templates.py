"""The examples in rules/templates.json are executable: each must (not) match its template."""

from __future__ import annotations

import pytest

from contrastgen.templates.patterns import load_templates, match_all

CASES = [(t.id, q, True) for t in load_templates() for q in t.examples["match"]] + \
        [(t.id, q, False) for t in load_templates() for q in t.examples["no_match"]]


def test_every_template_has_five_examples_each_way():
    for t in load_templates():
        assert len(t.examples["match"]) >= 5, t.id
        assert len(t.examples["no_match"]) >= 5, t.id


@pytest.mark.parametrize("template,question,expected", CASES)
def test_template_examples(template, question, expected, engine):
    """Examples are judged by the engine's matcher: the pattern and the slot grammar together."""
    assert (template in [m.template.id for m in engine.match(question)]) is expected


# Real GQA phrasings the relation patterns swallow but must not read: the predicate or a clause ends
# up inside a slot (without the slot grammar, each would give a wrong perturbation).
SWALLOWED = [
    "Is the man near the catcher wearing jeans?",
    "Is the van parked behind the car?",
    "Is the person that is to the left of the bike wearing glasses?",
    "Is the little building in between the tall trees near the crane?",
    "Is the man's hat to the left of the lamp?",
    "Is the woman to the right of the boy holding an umbrella?",
    "Is the cup that is on the table to the left of the plate?",
    "Is the bench covered by snow behind the tree?",
    "Is the dog lying on the bed near the window?",
]


@pytest.mark.parametrize("question", SWALLOWED)
def test_relation_patterns_do_not_read_other_predicates(question, engine):
    assert match_all(question), "the bare pattern matches: the slot grammar is what refuses"
    assert not [m for m in engine.match(question) if m.template.id.startswith("is_the_x_rel")]


@pytest.mark.parametrize("question,slots", [
    ("The bat the batter is holding has what color?", {"x": "The bat the batter is holding", "cop": "has"}),
    ("What color is the cat in front of the wall?", {"x": "the cat in front of the wall", "cop": "is"}),
    ("Do you see either bakers or photographers there?", {"x": "bakers", "y": "photographers"}),
    ("Are there any cats near the boat in this picture?", {"x": "any cats", "y": "the boat", "cop": "Are"}),
    ("Is the boy to the right of the man?", {"x": "the boy", "rel": "to the right of", "y": "the man", "cop": "Is"}),
    ("On which side of the photo are the bananas?", {"x": "the bananas", "cop": "are"}),
])
def test_slots_are_phrases_as_written(question, slots):
    m = match_all(question)[0]
    assert m.slots == slots


def test_head_nouns(engine):
    from contrastgen.templates.patterns import match
    slots = engine.slots_of(match("The bat the batter is holding has what color?"))
    assert slots["x_head"] == "bat"
    slots = engine.slots_of(match("What color is the white traffic light?"))
    assert slots["x_head"] == "traffic light"
    slots = engine.slots_of(match("Is there any fence near the players?"))
    assert (slots["x_head"], slots["y_head"]) == ("fence", "players")


def _same_reading(patterns_a, patterns_b, questions):
    """(question, pattern index) pairs where the two compilations read a question differently."""
    from contrastgen.templates.patterns import strip_question
    differ = []
    for q in questions:
        text = strip_question(q)
        for i, (a, b) in enumerate(zip(patterns_a, patterns_b, strict=True)):
            ma, mb = a.match(text), b.match(text)
            if (ma and (ma.span(), ma.groupdict())) != (mb and (mb.span(), mb.groupdict())):
                differ.append((q, i))
    return differ


def _shipped_patterns():
    import orjson
    import regex

    from contrastgen.resources import rules_dir
    from contrastgen.templates.patterns import _expand
    path = rules_dir() / "templates.json"
    data = orjson.loads(path.read_bytes())
    sources = [_expand(p, data.get("fragments", {}), path) for t in data["templates"] for p in t["patterns"]]
    return ([p for t in load_templates() for p in t.patterns],
            [regex.compile(s, regex.IGNORECASE) for s in sources])


def test_standard_engine_reads_as_regex_does_on_examples_and_gqa_style_phrasing():
    """The shipped patterns run on the standard library's engine (faster); every example and every
    hand-written GQA-style question must be read exactly as the `regex` module reads it."""
    import json
    import re
    from pathlib import Path
    compiled, by_regex = _shipped_patterns()
    assert all(isinstance(p, re.Pattern) for p in compiled)  # none fell back
    questions = [q for t in load_templates() for qs in t.examples.values() for q in qs]
    style = json.loads((Path(__file__).parents[1] / "data" / "gqa_style_questions.json").read_text())
    questions += [q["question"] for q in style["questions"].values()]
    assert len(questions) > 200
    assert _same_reading(compiled, by_regex, questions) == []


def test_standard_engine_reads_as_regex_does_on_real_gqa(real_gqa_questions):
    compiled, by_regex = _shipped_patterns()
    questions = [q["question"] for q in real_gqa_questions.values()]
    assert _same_reading(compiled, by_regex, questions) == []


def test_a_pattern_the_standard_engine_rejects_is_compiled_by_regex():
    import re

    import regex

    from contrastgen.templates.patterns import compile_pattern
    p = compile_pattern(r"is the (?P<x>\p{L}+) red")
    assert isinstance(p, regex.Pattern) and not isinstance(p, re.Pattern)
    assert p.match("Is the Café red").group("x") == "Café"
    assert isinstance(compile_pattern(r"is the (?P<x>\w+) red"), re.Pattern)


def test_a_pattern_the_standard_engine_would_read_otherwise_is_compiled_by_regex():
    """`re` only warns on a POSIX class and reads it as a set of characters; `regex` reads a class."""
    import regex

    from contrastgen.templates.patterns import compile_pattern
    p = compile_pattern(r"is the (?P<x>[[:alpha:]]+) red")
    assert isinstance(p, regex.Pattern)
    assert p.match("Is the cat red").group("x") == "cat"
