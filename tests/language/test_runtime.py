"""The run-time lexicon needs no WordNet, nltk, inflect or spaCy, and rejects broken data files."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.errors import InputError
from contrastgen.language.lexicon import NOUNS_FILE, Lexicon

from .conftest import RULES


def _in_a_fresh_interpreter(*lines: str) -> str:
    """What `lines` print, run where nothing is imported yet."""
    out = subprocess.run([sys.executable, "-c", "import sys\n" + "\n".join(lines)],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_lexicon_does_not_import_nltk_inflect_or_spacy():
    assert _in_a_fresh_interpreter(
        "from contrastgen.language.lexicon import Lexicon",
        "lex = Lexicon.load()",
        "assert lex.singular('florbixes') == 'florbix' and lex.canonical('sofas') == 'couch'",
        "print(sorted(m for m in ('nltk', 'inflect', 'spacy') if m in sys.modules))",
    ) == "[]"


def test_articles_of_attribute_phrases_come_from_the_shipped_table_without_inflect():
    # program edits name objects with their attributes; importing inflect costs a process 2 s
    assert _in_a_fresh_interpreter(
        "from contrastgen.language.articles import article",
        "from contrastgen.language.nounphrase import attribute_words",
        "said = [article(p) for p in ('iron shoe', 'tall tan helmet', 'light blue jacket', 'orange cat', 'hour hand')]",
        "print(said, all(article(a + ' car') in ('a', 'an') for a in attribute_words()), 'inflect' in sys.modules)",
    ) == "['an', 'a', 'a', 'an', 'an'] True False"


def test_load_is_cached_and_accepts_a_rules_dir(rules_copy):
    assert Lexicon.load() is Lexicon.load()
    other = Lexicon.load(rules_copy)
    assert other is not Lexicon.load()
    assert other.canonical("sofa") == "couch"


def test_every_data_file_has_a_header():
    for path in sorted((RULES / "lexicon").iterdir()):
        if path.suffix in (".tsv", ".txt"):
            first = path.read_text(encoding="utf-8").splitlines()[0]
            assert first.startswith("#"), f"{path.name} has no header"


def test_malformed_nouns_file_names_the_file_and_line(rules_copy):
    path = rules_copy / NOUNS_FILE
    lines = path.read_text(encoding="utf-8").splitlines()
    header = sum(1 for line in lines if line.startswith("#"))
    lines.insert(header, "dog\tdogs\tdog")  # three fields instead of six
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        Lexicon(rules_copy)
    assert err.value.path == str(path)
    assert err.value.record == f"line {header + 1}"


def test_missing_data_file_is_an_input_error(rules_copy):
    (rules_copy / "plural_only.txt").unlink()
    with pytest.raises(InputError, match="plural_only.txt"):
        Lexicon(rules_copy)


def test_alias_to_an_unknown_noun_is_rejected(rules_copy):
    with (rules_copy / "aliases.tsv").open("a", encoding="utf-8") as fh:
        fh.write("blorp\tno such noun\n")
    with pytest.raises(InputError, match="aliases.tsv"):
        Lexicon(rules_copy)


def test_curated_list_changes_take_effect(rules_copy):
    with (rules_copy / "uncountable.txt").open("a", encoding="utf-8") as fh:
        fh.write("florbix\n")
    lex = Lexicon(rules_copy)
    assert lex.is_uncountable("florbix") and lex.plural("florbix") == "florbix"


def test_show_prints_what_the_lexicon_knows():
    result = CliRunner().invoke(cli, ["lexicon", "show", "motorbikes"])
    assert result.exit_code == 0, result.output
    assert "motorcycle" in result.output
    assert "vehicle" in result.output


def test_show_unknown_word_degrades_safely():
    result = CliRunner().invoke(cli, ["lexicon", "show", "florbix"])
    assert result.exit_code == 0, result.output
    assert "False" in result.output and "florbixes" in result.output


def test_load_caches_by_resolved_directory(rules_copy):
    from contrastgen.language.lexicon import DEFAULT_RULES_DIR

    assert Lexicon.load(DEFAULT_RULES_DIR) is Lexicon.load()
    assert Lexicon.load(str(rules_copy)) is Lexicon.load(rules_copy / ".." / "lexicon")


def test_empty_word_is_harmless(lex):
    assert lex.singular("") == "" and lex.plural("") == ""
    assert not lex.is_known("") and lex.forms("") == {""}
