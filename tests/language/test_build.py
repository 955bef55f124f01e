"""The committed files in rules/lexicon/ are exactly what the WordNet build produces."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.errors import InputError
from contrastgen.language.articles import ARTICLES_FILE
from contrastgen.language.attributes_build import ATTRIBUTES_FILE
from contrastgen.language.lexicon_build import (
    GENERATED_FILES,
    build_lexicon,
    find_wordnet,
)

from .conftest import RULES, SHARED

WORDNET = SHARED / "nltk_data" / "corpora" / "wordnet"
VOCAB = SHARED / "data" / "vocab" / "vg-1750-700-450"


@pytest.mark.shared
def test_committed_lexicon_is_what_the_build_produces(tmp_path):
    """`contrastgen lexicon build` (the command `make lexicon` runs) reproduces rules/lexicon byte for byte."""
    if not WORDNET.is_dir() or not VOCAB.is_dir():
        pytest.skip("../shared/nltk_data (WordNet) or the VG vocabulary is absent")
    result = CliRunner().invoke(
        cli,
        ["lexicon", "build", "--vocab", str(VOCAB), "--wordnet", str(WORDNET.parent.parent), "--out", str(tmp_path),
         "--curated", str(RULES / "lexicon")],
    )
    assert result.exit_code == 0, result.output
    for name in (*GENERATED_FILES, ARTICLES_FILE, ATTRIBUTES_FILE):
        built = (tmp_path / name).read_text(encoding="utf-8")
        committed = (RULES / "lexicon" / name).read_text(encoding="utf-8")
        assert built == committed, f"rules/lexicon/{name} is stale: run `make lexicon` and commit"
    # only generated files are written; the curated inputs are read in place
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted((*GENERATED_FILES, ARTICLES_FILE, ATTRIBUTES_FILE))


def test_missing_wordnet_says_to_set_nltk_data(tmp_path):
    with pytest.raises(InputError, match="NLTK_DATA"):
        find_wordnet([str(tmp_path)])


def test_wordnet_is_found_on_the_search_path(tmp_path):
    (tmp_path / "corpora" / "wordnet").mkdir(parents=True)
    (tmp_path / "corpora" / "wordnet" / "data.noun").write_text("", encoding="utf-8")
    assert find_wordnet([str(tmp_path / "elsewhere"), str(tmp_path)]) == tmp_path / "corpora" / "wordnet"


def test_build_cli_rejects_a_missing_vocabulary_before_loading_wordnet(tmp_path):
    result = CliRunner().invoke(  # tmp_path holds no WordNet: reaching for it would fail otherwise
        cli, ["lexicon", "build", "--vocab", str(tmp_path / "nowhere"), "--wordnet", str(tmp_path),
              "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 2
    assert "objects_vocab.txt" in result.output
    assert not (tmp_path / "out").exists()


def test_build_needs_its_inputs_named(tmp_path, monkeypatch):
    """No default points outside the repository: without --vocab and --wordnet (or their
    environment variables) the build refuses, naming the option."""
    monkeypatch.delenv("NLTK_DATA", raising=False)
    monkeypatch.delenv("CONTRASTGEN_VG_VOCAB", raising=False)
    result = CliRunner().invoke(cli, ["lexicon", "build", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "--vocab" in result.output
    result = CliRunner().invoke(cli, ["lexicon", "build", "--vocab", str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "--wordnet" in result.output and "NLTK_DATA" in result.output
    assert not (tmp_path / "out").exists()


def test_build_rejects_an_empty_vocabulary(tmp_path):
    (tmp_path / "objects_vocab.txt").write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        build_lexicon(tmp_path, RULES / "lexicon", wordnet_dir=tmp_path)


@pytest.mark.shared
def test_committed_noun_class_tables_are_what_their_build_writes(tmp_path, monkeypatch):
    """rules/attribute_kinds.tsv and rules/lexicon/person_facets.tsv come from
    benchmarks/make_noun_classes.py (GQA's programs, the lexicon, WordNet): rebuilt, the same bytes."""
    import sys

    gqa = SHARED / "data" / "gqa"
    if not WORDNET.is_dir() or not gqa.is_dir():
        pytest.skip("../shared/nltk_data (WordNet) or ../shared/data/gqa is absent")
    monkeypatch.setenv("NLTK_DATA", str(WORDNET.parent.parent))
    monkeypatch.syspath_prepend(str(RULES.parent / "benchmarks"))
    sys.modules.pop("make_noun_classes", None)
    import make_noun_classes

    make_noun_classes.main(["--gqa", str(gqa), "--out", str(tmp_path)])
    for name in ("attribute_kinds.tsv", "lexicon/person_facets.tsv"):
        assert (tmp_path / name).read_text() == (RULES / name).read_text(), f"rules/{name} is stale"
