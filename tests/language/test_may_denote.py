"""The loose "may denote" relation that claims of absence rest on (rules/lexicon/may_denote.tsv).

"Are there any dishes? -> no" is wrong while a bowl stands there: every object the word may denote
must be absent, not only the kinds of its one chosen sense, and a word too vague to enumerate must
not be claimed absent at all.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from contrastgen.errors import InputError
from contrastgen.language.lexicon import CANNOT_SAY, MAY_DENOTE_FILE, Lexicon, iter_data_lines
from contrastgen.language.lexicon_build import (
    GENERATED_FILES,
    VAGUE_ABOVE,
    LooseEdits,
    _read_loose_edits,
    _vague_nouns,
)

from .conftest import RULES


@pytest.mark.parametrize("kind", ["bowl", "plate", "saucer", "cup", "pizza", "soup"])
def test_dishware_and_prepared_food_may_be_dishes(lex, kind):
    # bowl: WordNet's bowl.n.03 is under dish.n.01 though the lexicon chose bowl.n.01 (container);
    # plate, saucer, cup: the curated crockery/flatware links; pizza, soup: dish.n.02, prepared food
    assert kind in lex.may_denote("dish")
    assert not lex.is_a(kind, "dish")  # none of them is a strict kind: the loose set is what adds them


def test_the_reported_case_has_its_bowl(lex):
    # "Are there any dishes near the cup? -> no" must not be claimed while a bowl is near the cup
    assert lex.hyponyms("dish") == frozenset()
    assert {"bowl", "plate", "cup"} <= lex.may_denote("dishes")
    assert lex.absence_decidable("dishes")


def test_what_a_cup_may_be(lex):
    may_be = {a for a in ("container", "tableware", "dish", "drink", "food", "animal", "vehicle", "person")
              if "cup" in lex.may_denote(a)}
    # container, tableware: its chosen sense; dish: dishware; drink, food: WordNet's cup.n.06, a punch
    assert may_be == {"container", "tableware", "dish", "drink", "food"}


@pytest.mark.parametrize(
    ("word", "not_denoted_by"),
    [
        ("dish", "dog"), ("dish", "car"), ("dish", "chair"), ("dish", "fork"),
        ("animal", "car"), ("animal", "man"), ("animal", "person"), ("animal", "woman"),  # people words: person senses only
        ("person", "mug"), ("person", "screw"),  # object words: never a person sense
        ("dish", "bag"),  # bag and dish share only "cup of tea", an activity (noun.act): abstract senses do not count
        ("base", "trash bag"),  # "bag" may be a baseball base; a trash bag (kinds.tsv: a bag) may not
        ("vehicle", "chair"),
    ],
)
def test_what_may_not_be(lex, word, not_denoted_by):
    assert not_denoted_by not in lex.may_denote(word)


def test_any_sense_counts_on_both_sides(lex):
    assert "mouse" in lex.may_denote("animal")  # the computer mouse's name is also the rodent's
    assert "turkey" in lex.may_denote("animal")  # chosen: the food
    assert "hot dog" in lex.may_denote("dish")
    assert "bag" in lex.may_denote("base")  # WordNet's base.n.03 is also a "bag"
    assert "teapot" in lex.may_denote("pot")  # "pot" is unlinked in senses.tsv, so it has no strict kinds


def test_may_denote_holds_itself_and_its_strict_hyponyms(lex):
    for word in ("animal", "vehicle", "container", "food", "dish", "florbix"):
        assert lex.may_denote(word) >= lex.hyponyms(word) | {lex.canonical(word)}
    assert lex.may_denote("florbix") == frozenset({"florbix"})
    assert len(lex.may_denote("animal")) > len(lex.hyponyms("animal")) + 1


@pytest.mark.parametrize(("a", "b"), [("dishes", "dish"), ("Dish ", "dish"), ("sofas", "couch"),
                                      ("motorbikes", "motorcycle"), ("men", "man"), ("animals", "animal")])
def test_plurals_and_synonyms_resolve(lex, a, b):
    assert lex.may_denote(a) == lex.may_denote(b)
    assert lex.absence_decidable(a) == lex.absence_decidable(b)


@pytest.mark.parametrize("word", ["thing", "things", "object", "objects", "unit", "part", "stuff", "item", "items"])
def test_vague_words_are_not_absence_decidable(lex, word):
    assert lex.is_known(word)
    assert not lex.absence_decidable(word)


@pytest.mark.parametrize("word", ["florbix", "blue florbixes", ""])
def test_unknown_words_are_not_absence_decidable(lex, word):
    assert not lex.absence_decidable(word)


@pytest.mark.parametrize("word", ["dish", "animal", "vehicle", "food", "container", "person", "dog", "cup", "pot"])
def test_ordinary_words_are_absence_decidable(lex, word):
    assert lex.absence_decidable(word)


def test_committed_file_follows_its_rules():
    """Rows are canonical nouns, `?` rows are exactly the vague ones, listed rows stay under the cut."""
    path = RULES / "lexicon" / MAY_DENOTE_FILE
    assert MAY_DENOTE_FILE in GENERATED_FILES  # so test_build's staleness check covers it
    lex = Lexicon.load()
    rows = dict((f[0], f[1]) for _, f in iter_data_lines(path))
    vague = {w for w, names in rows.items() if names == CANNOT_SAY}
    assert {"object", "thing", "unit", "item"} <= vague
    assert vague == {w for w in rows if not lex.absence_decidable(w)}
    for word, names in rows.items():
        assert lex.canonical(word) == word
        if names != CANNOT_SAY:
            listed = names.split(",")
            assert 0 < len(listed) <= VAGUE_ABOVE
            assert not set(listed) & (lex.hyponyms(word) | {word}), word  # only what the strict set lacks


def test_unknown_name_in_the_file_names_file_and_line(rules_copy):
    path = rules_copy / MAY_DENOTE_FILE
    with path.open("a", encoding="utf-8") as fh:
        fh.write("dish\tbowl,florbix\n")
    lineno = len(path.read_text(encoding="utf-8").splitlines())
    with pytest.raises(InputError, match="florbix") as err:
        Lexicon(rules_copy)
    assert err.value.path == str(path)
    assert err.value.record == f"line {lineno}"


def test_missing_file_is_an_input_error(rules_copy):
    (rules_copy / MAY_DENOTE_FILE).unlink()
    with pytest.raises(InputError, match=MAY_DENOTE_FILE):
        Lexicon(rules_copy)


def test_a_question_mark_row_makes_a_word_undecidable(rules_copy):
    with (rules_copy / MAY_DENOTE_FILE).open("a", encoding="utf-8") as fh:
        fh.write(f"dog\t{CANNOT_SAY}  # as if it were vague\n")
    lex = Lexicon(rules_copy)
    assert not lex.absence_decidable("dogs")
    assert lex.absence_decidable("cat")


# -- the build's rules, without WordNet ------------------------------------------------------------


def _curated(tmp_path, vague=frozenset()):
    """Stands in for Curated: only what _vague_nouns reads."""
    return SimpleNamespace(directory=tmp_path, loose=LooseEdits({}, frozenset(vague)))


def test_vague_rule_counts_names_beyond_the_strict_hyponyms(tmp_path):
    extra = {"object": {f"n{i}" for i in range(VAGUE_ABOVE + 1)}, "food": {f"n{i}" for i in range(VAGUE_ABOVE)}}
    nouns = {w: SimpleNamespace(canonical=w) for w in ("item", "object", "food")}
    assert _vague_nouns(extra, nouns, _curated(tmp_path)) == {"object": VAGUE_ABOVE + 1}
    assert _vague_nouns(extra, nouns, _curated(tmp_path, {"item"})) == {"object": VAGUE_ABOVE + 1, "item": 0}


def test_vague_noun_outside_the_vocabulary_is_rejected(tmp_path):
    with pytest.raises(InputError, match="florbix"):
        _vague_nouns({}, {}, _curated(tmp_path, {"florbix"}))


def test_malformed_edit_names_the_line(tmp_path):
    (tmp_path / "may_denote_edits.tsv").write_text("# header\nvague\titem\nvague\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        _read_loose_edits(None, tmp_path)
    assert err.value.record == "line 3"
    (tmp_path / "may_denote_edits.tsv").write_text("vague\tItem \n", encoding="utf-8")
    assert _read_loose_edits(None, tmp_path).vague == frozenset({"item"})
