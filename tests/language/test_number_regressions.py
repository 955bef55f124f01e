"""Plural forms that inflect gets wrong and the build corrects (found by the verifier's run)."""

from contrastgen.language.lexicon import Lexicon


def test_man_compounds_take_men():
    lex = Lexicon.load()
    assert lex.plural("gentleman") == "gentlemen"
    assert lex.plural("fireman") == "firemen"
    assert lex.singular("firemen") == "fireman"
    assert lex.plural("human") == "humans" and lex.plural("ottoman") == "ottomans"
    assert lex.singular("specimen") == "specimen"
