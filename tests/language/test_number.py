"""Singular, plural and grammatical number, which the phraser needs for articles and agreement."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("plural", "singular"),
    [
        ("men", "man"),
        ("women", "woman"),
        ("people", "person"),
        ("children", "child"),
        ("buses", "bus"),
        ("boxes", "box"),
        ("knives", "knife"),
        ("leaves", "leaf"),
        ("teeth", "tooth"),
        ("feet", "foot"),
        ("mice", "mouse"),
        ("geese", "goose"),
        ("horses", "horse"),
        ("shoes", "shoe"),
        ("benches", "bench"),
        ("traffic lights", "traffic light"),
        ("teddy bears", "teddy bear"),
        ("tennis shoes", "tennis shoe"),
    ],
)
def test_irregular_and_regular_plurals_round_trip(lex, plural, singular):
    assert lex.singular(plural) == singular
    assert lex.plural(singular) == plural
    assert lex.is_plural(plural)
    assert not lex.is_plural(singular)


@pytest.mark.parametrize("word", ["jeans", "pants", "glasses", "scissors", "shorts", "sunglasses", "goggles", "clothes"])
def test_plural_only_nouns_are_their_own_singular_and_plural(lex, word):
    assert lex.singular(word) == word
    assert lex.plural(word) == word
    assert lex.is_plural(word)
    assert lex.is_plural_only(word)


def test_vocabulary_lemmas_of_plural_only_nouns_map_to_the_real_word(lex):
    # the VG vocabulary lemmatised "pants" to "pant" and "jeans" to "jean"
    assert lex.singular("pant") == "pants"
    assert lex.canonical("jean") == "jeans"
    assert "pant" in lex.forms("pants")


@pytest.mark.parametrize("word", ["water", "grass", "snow", "sand", "hair", "sky"])
def test_uncountable_nouns_do_not_inflect(lex, word):
    assert lex.is_uncountable(word)
    assert lex.plural(word) == word
    assert lex.singular(word) == word
    assert not lex.is_plural(word)


@pytest.mark.parametrize("word", ["dog", "chair", "man", "bus", "jeans"])
def test_countable_nouns_are_not_uncountable(lex, word):
    assert not lex.is_uncountable(word)


def test_invariant_nouns(lex):
    assert lex.plural("sheep") == "sheep"
    assert lex.singular("sheep") == "sheep"
    assert not lex.is_plural("sheep")


def test_inputs_are_normalised(lex):
    assert lex.singular("  Men ") == "man"
    assert lex.plural("Traffic  Light") == "traffic lights"


def test_unknown_words_follow_the_suffix_rules(lex):
    assert not lex.is_known("florbix")
    assert lex.plural("florbix") == "florbixes"
    assert lex.singular("florbixes") == "florbix"
    assert lex.plural("zorgy") == "zorgies"
    assert lex.singular("zorgies") == "zorgy"
    assert lex.singular("glorps") == "glorp"
    assert lex.is_plural("glorps") and not lex.is_plural("glorp")
    # a word that already looks plural is not pluralised again
    assert lex.plural("glorps") == "glorps"
    # words ending in -ss / -us are singular
    assert lex.singular("blorgus") == "blorgus"
    assert lex.singular("krass") == "krass"


def test_unknown_compounds_inflect_their_head(lex):
    assert lex.plural("zorg man") == "zorg men"
    assert lex.singular("zorg women") == "zorg woman"


def test_irregular_plurals_outside_the_vocabulary_come_from_wordnet(lex):
    # neither word is in the VG vocabulary; the table is generated from WordNet's noun.exc
    assert not lex.is_known("cacti") or lex.singular("cacti") == "cactus"
    assert lex.singular("oxen") == "ox"
    assert lex.singular("wolves") == "wolf"


def test_unknown_compounds_take_number_and_countability_from_their_head(lex):
    assert lex.is_plural("faded blue jeans") and lex.is_plural_only("faded blue jeans")
    assert lex.singular("faded blue jeans") == "faded blue jeans"
    assert lex.is_uncountable("muddy water") and not lex.is_plural("muddy water")
    assert not lex.is_plural("zorg bus") and lex.is_plural("zorg buses")
