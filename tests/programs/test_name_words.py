"""How the words of an object's span say the program's name: the forms GQA uses ("piece of
furniture", "trousers" for `pants`, "any traffic lights"), and what they refuse."""

from __future__ import annotations

import pytest
import synth

from contrastgen.datasets.gqa_program import REFERENCE_OPS, reference_name, split_reference, step_of
from contrastgen.language.lexicon import Lexicon
from contrastgen.programs.name_words import _read_name, read_name
from contrastgen.programs.wording import Span, aligned_span, said_once


@pytest.fixture(scope="module")
def lex():
    return Lexicon.load()


def _read(lex, text, phrase, name, filtered=()):
    span = said_once(text, phrase)
    assert span is not None
    said = read_name(text, span, name, lex, set(filtered))
    return None if said is None else (text[said.span.start:said.span.end], said.plural, said.definite)


def test_the_name_itself_and_its_other_forms(lex):
    assert _read(lex, "What color is the bike?", "bike", "bike") == ("bike", False, True)
    assert _read(lex, "What color is the bicycle?", "bicycle", "bike") == ("bicycle", False, True)
    assert _read(lex, "Are the trousers blue?", "trousers", "pants") == ("trousers", True, True)
    assert _read(lex, "Are there any traffic lights?", "traffic lights", "traffic light") == (
        "traffic lights", True, False)
    # spellings GQA's questions use that the Visual Genome vocabulary lacks (extra_nouns.tsv)
    assert _read(lex, "What color is the trashcan?", "trashcan", "trash can") == ("trashcan", False, True)
    assert _read(lex, "What color does the wet suit have?", "wet suit", "wetsuit") == ("wet suit", False, True)


def test_a_plural_with_no_determiner_is_indefinite(lex):
    assert _read(lex, "Are there red doors or windows?", "doors", "door", {"red"}) == ("doors", True, False)
    assert _read(lex, "Who is wearing trousers?", "trousers", "pants") == ("trousers", True, False)
    assert _read(lex, "Who is wearing the trousers?", "trousers", "pants") == ("trousers", True, True)
    assert _read(lex, "Are those doors red?", "doors", "door") == ("doors", True, True)


def test_a_classifier_is_part_of_the_words_a_new_name_replaces(lex):
    assert _read(lex, "What piece of furniture is it?", "piece of furniture", "furniture") == (
        "piece of furniture", False, True)
    assert _read(lex, "What are the pieces of furniture called?", "pieces of furniture", "furniture") == (
        "pieces of furniture", True, True)


def test_adjectives_stay_only_where_a_filter_says_them(lex):
    assert _read(lex, "Is the ripe orange big?", "ripe orange", "orange", {"ripe"}) == ("orange", False, True)
    assert _read(lex, "Is the ripe orange big?", "ripe orange", "orange") is None


def test_words_that_say_another_thing_or_number_are_refused(lex):
    assert _read(lex, "What color is the cat?", "cat", "dog") is None
    assert _read(lex, "What color is the glass?", "glass", "glasses") is None  # a glass is not spectacles
    assert _read(lex, "Do you see any glasses?", "glasses", "glass") is None  # nor are glasses glass
    assert _read(lex, "Are there any trashes?", "trashes", "trash") is None  # no plural in the table
    assert _read(lex, "What color is the flower?", "flower", "flowers") is None  # the program's plural, unsaid


def test_a_new_name_is_said_in_the_words_number(lex):
    span = said_once("Are there any traffic lights?", "traffic lights")
    said = read_name("Are there any traffic lights?", span, "traffic light", lex, set())
    assert said.as_said("bus", lex) == "buses"
    single = read_name("Is there a bike?", Span(11, 15), "bike", lex, set())
    assert single.as_said("bus", lex) == "bus"


def test_a_noun_with_no_determiner_is_read_as_said_bare(lex):
    def bare(text, phrase, name, filtered=frozenset()):
        return read_name(text, said_once(text, phrase), name, lex, set(filtered)).bare

    assert bare("Are there both cheese and meat in this picture?", "meat", "meat")
    assert bare("Is there sky that is red?", "sky", "sky")
    assert not bare("What color is the white car?", "car", "car", {"white"})  # "white": a filter's value
    assert not bare("Is the bag to the left of the person's remote?", "remote", "remote")
    assert not bare("What kind of animal is it?", "animal", "animal")
    assert not bare("What piece of furniture is it?", "piece of furniture", "furniture")
    # a determiner before the first of two nouns is shared by the second
    assert not bare("Is there any bicycle or umbrella in the image?", "umbrella", "umbrella")
    assert not bare("Is there either a white computer mouse or laptop?", "laptop", "laptop")
    assert bare("Do you see any ducks or snow there?", "snow", "snow")  # "any ducks or child" is not English


def test_an_adjective_before_the_span_that_no_filter_says_is_refused(lex):
    """GQA's annotation may cover the noun alone: "black" before it still says something of the
    object, which a new object must be checked for."""
    text = "Is the black purse to the left of a man?"
    assert read_name(text, said_once(text, "purse"), "purse", lex, set()) is None
    assert read_name(text, said_once(text, "purse"), "purse", lex, {"black"}) is not None


def test_a_reading_kept_by_the_words_up_to_the_span_is_the_reading_of_the_whole_question(lex):
    """`read_name` keeps a reading by the words up to the span's end: the reading of the whole
    question, read afresh, must be the same for every reference a set's questions say."""
    questions, _ = synth.make_dataset(120, 1500, seed=29)
    read = 0
    for q in questions.values():
        text = q["question"]
        for step in (step_of(s) for s in q.get("semantic") or ()):
            ids = split_reference(step.argument)[1] if step.operation in REFERENCE_OPS else None
            span = aligned_span(q, text, ids) if ids else None
            if span is None or span.end == len(text):
                continue
            name = reference_name(step)
            whole = _read_name.__wrapped__(text, span, name, lex, frozenset())
            assert read_name(text, span, name, lex, set()) == whole
            read += whole is not None
    assert read > 100
