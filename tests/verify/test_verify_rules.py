"""The verifier's own reader of rules/ data files."""

from __future__ import annotations

import importlib.resources

import pytest

from contrastgen.errors import InputError
from contrastgen.verify_rules import VerifyRules, load_rules, parse_relations, parse_word_list


def test_parse_relations_reads_opposites_and_symmetric():
    text = "# header\n\nabove\tbelow\nnear\tsymmetric  # comment\nTo The Left Of\tto the right of\n"
    opposites, symmetric = parse_relations(text)
    assert opposites == {"above": "below", "to the left of": "to the right of"}
    assert symmetric == frozenset({"near"})


def test_parse_relations_rejects_a_line_without_two_columns():
    with pytest.raises(InputError, match=r"rules/relations.tsv: record above below"):
        parse_relations("above below\n")


def test_parse_word_list_drops_comments_and_blanks():
    assert parse_word_list("# colours\nRed\n\n dark brown # two words\n") == frozenset({"red", "dark brown"})


def test_naive_singulars_count_as_prone():
    rules = VerifyRules({}, frozenset(), frozenset(), frozenset({"hand", "glass", "sky"}))
    assert rules.is_unannotated_prone("Hands")
    assert rules.is_unannotated_prone("glasses")
    assert rules.is_unannotated_prone("skies")
    assert not rules.is_unannotated_prone("handle")


def test_shipped_relations_and_colours_load():
    rules = load_rules()
    assert rules.opposites["to the left of"] == "to the right of"
    assert all(rules.opposites.get(opp) == rel for rel, opp in rules.opposites.items()), "opposites not mutual"
    assert "near" in rules.symmetric
    assert {"red", "white", "black"} <= rules.colors


def test_shipped_unannotated_prone_list():
    node = importlib.resources.files("contrastgen.rules").joinpath("lexicon", "unannotated_prone.txt")
    if not node.is_file():
        pytest.skip("rules/lexicon/unannotated_prone.txt absent (built by the lexicon engineer); "
                    "the verifier then checks no prone absences and says so")
    rules = load_rules()
    assert rules.unannotated_prone_source == "rules/lexicon/unannotated_prone.txt"
    assert rules.unannotated_prone, "the shipped list is empty"
    assert rules.is_unannotated_prone("sky") or rules.is_unannotated_prone("shirt"), \
        "the paper's own examples (sky, shirt) should be listed"
