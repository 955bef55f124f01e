"""Colours and relations come from the curated tables beside the nouns."""

from __future__ import annotations


def test_colors(lex):
    assert {"white", "black", "red", "blue", "light blue"} <= lex.colors
    assert lex.is_color(" Red ")
    assert not lex.is_color("wooden")


def test_relations(lex):
    assert lex.opposite_relation("to the left of") == "to the right of"
    assert lex.opposite_relation("Above") == "below"
    assert lex.opposite_relation("near") is None
    assert lex.is_symmetric_relation("near")
    assert not lex.is_symmetric_relation("above")
    assert {"to the left of", "to the right of", "near", "behind", "in front of"} <= lex.relations
