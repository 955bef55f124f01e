"""The verifier's own reader of rules/ data files."""

from __future__ import annotations

import importlib.resources

import pytest

from contrastgen.errors import InputError
from contrastgen.verify.rules import (
    VerifyRules,
    expand_prone,
    load_rules,
    parse_relations,
    parse_template_suffixes,
    parse_word_list,
)


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
    assert rules.unannotated_prone_source.startswith("rules/lexicon/unannotated_prone.txt")
    assert rules.unannotated_prone, "the shipped list is empty"
    assert rules.is_unannotated_prone("sky") or rules.is_unannotated_prone("shirt"), \
        "the paper's own examples (sky, shirt) should be listed"


_NOUNS = """# name plural canonical category kinds synset
hand\thands\thand\tbody part\tbody part\thand.n.01
shirt\tshirts\tshirt\tclothing\tclothing,garment\tshirt.n.01
jumper\tjumpers\tsweater\tclothing\tgarment\t-
sweater\tsweaters\tsweater\tclothing\tgarment\tsweater.n.01
cup\tcups\tcup\tkitchenware\tcontainer\tcup.n.01
"""


def test_expand_prone_adds_forms_kinds_and_synonyms():
    prone = expand_prone(frozenset({"body part", "clothing", "sweater"}), _NOUNS)
    assert {"hand", "hands", "shirt", "shirts"} <= prone  # kinds of listed words, both numbers
    assert {"jumper", "jumpers", "sweaters"} <= prone  # a synonym (same canonical) and a plural
    assert "cup" not in prone and "cups" not in prone


def test_shipped_template_suffixes_are_unique_letters():
    rules = load_rules()
    if not rules.template_suffixes:
        pytest.skip("rules/templates.json absent")
    suffixes = list(rules.template_suffixes.values())
    assert len(set(suffixes)) == len(suffixes), "two templates share an id suffix: ids would collide"
    assert all(s.isalpha() and s.islower() for s in suffixes)


def test_parse_template_suffixes_rejects_a_template_without_suffix():
    with pytest.raises(InputError, match="rules/templates.json: cannot read"):
        parse_template_suffixes('{"templates": [{"id": "x"}]}')


def test_shipped_prone_list_is_expanded_by_the_noun_table():
    nouns = importlib.resources.files("contrastgen.rules").joinpath("lexicon", "nouns.tsv")
    prone = importlib.resources.files("contrastgen.rules").joinpath("lexicon", "unannotated_prone.txt")
    if not (nouns.is_file() and prone.is_file()):
        pytest.skip("rules/lexicon/nouns.tsv or unannotated_prone.txt absent (lexicon not built)")
    rules = load_rules()
    assert "nouns.tsv" in rules.unannotated_prone_source
    assert rules.is_unannotated_prone("hands"), "the prone list's own example: 'body part' covers 'hand'"
    assert not rules.is_unannotated_prone("cup")


def test_shipped_relations_table_is_consistent():
    """rules/relations.tsv: every opposite is listed both ways round, and no relation is both
    symmetric and the opposite of another (a swap over it would then be both true and false)."""
    rules = load_rules()
    assert rules.opposites, "the shipped table lists no opposites"
    for relation, opposite in rules.opposites.items():
        assert relation != opposite
        assert rules.opposites.get(opposite) == relation, (relation, opposite)
    assert not rules.symmetric & set(rules.opposites)
