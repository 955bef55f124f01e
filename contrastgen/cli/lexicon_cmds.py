"""`contrastgen lexicon build` and `contrastgen lexicon show WORD`.

`build` regenerates the WordNet-derived files of `rules/lexicon/` (a development step: commit the
result); `show` prints what the run-time lexicon knows about a word, so a user wondering why a
question was or was not perturbed can look the noun up in one command.
"""

from __future__ import annotations

import os
from pathlib import Path

import click
from rich.table import Table

from contrastgen.cli.console import make_console


def register(group: click.Group) -> None:
    group.add_command(lexicon)


@click.group()
def lexicon() -> None:
    """Build and inspect the noun lexicon (rules/lexicon/)."""


@lexicon.command()
@click.option("--vocab", "vocab_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              envvar="CONTRASTGEN_VG_VOCAB", show_envvar=True,
              help="Visual Genome's vocabulary: the directory with objects_vocab.txt and attributes_vocab.txt.")
@click.option("--wordnet", "nltk_data", type=click.Path(file_okay=False, path_type=Path), required=True,
              envvar="NLTK_DATA", show_envvar=True,
              help="An NLTK data directory holding corpora/wordnet (WordNet 3.0).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where to write the generated files [default: rules/lexicon].")
@click.option("--curated", "curated_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory with the hand-curated lists [default: rules/lexicon].")
def build(vocab_dir: Path, nltk_data: Path, out_dir: Path | None, curated_dir: Path | None) -> None:
    """Regenerate the WordNet-derived files of rules/lexicon (`make lexicon` passes the inputs).

    Writes nouns.tsv, aliases.tsv, irregular_plurals.tsv, may_denote.tsv, the phraser's
    articles.tsv and the slot reader's attributes.txt; the hand-curated lists beside them are
    inputs. Commit the result. Needs `pip install 'contrastgen[lexicon]'` (nltk, spaCy).
    """
    from contrastgen.errors import require_extra

    require_extra("lexicon", ("nltk", "spacy", "spacy_lookups_data"), "`contrastgen lexicon build`")
    from contrastgen.language.lexicon import DEFAULT_RULES_DIR
    from contrastgen.language.lexicon_build import (
        build_lexicon,
        surface_forms,
        write_lexicon,
    )

    curated = curated_dir or DEFAULT_RULES_DIR
    out = out_dir or DEFAULT_RULES_DIR
    files = build_lexicon(vocab_dir, curated, nltk_data=str(nltk_data).split(os.pathsep))
    write_lexicon(files, out)
    forms = surface_forms(files)
    from contrastgen.language.attributes_build import ATTRIBUTES_FILE, build_attributes
    from contrastgen.resources import rules_dir

    build_attributes(vocab_dir, rules_dir() / "phrases.json", out / ATTRIBUTES_FILE)
    # the a/an table covers the same surface forms and the words that may stand before them
    # (contrastgen.language.articles), so "an iron shoe" needs no inflect at run time
    from contrastgen.language.articles import ARTICLES_FILE, build_articles
    from contrastgen.language.nounphrase import attribute_words

    build_articles([*forms, *attribute_words()], out / ARTICLES_FILE)
    nouns = sum(1 for line in files["nouns.tsv"].splitlines() if line and not line.startswith("#"))
    click.echo(f"wrote {', '.join(sorted([*files, ARTICLES_FILE, ATTRIBUTES_FILE]))} to {out} ({nouns} nouns, {len(forms)} surface forms)")


@lexicon.command()
@click.argument("word")
def show(word: str) -> None:
    """Print everything the lexicon knows about WORD."""
    from contrastgen.language.lexicon import Lexicon

    lex = Lexicon.load()

    def names(values: frozenset[str] | tuple[str, ...]) -> str:
        return ", ".join(sorted(values)) or "-"

    table = Table(title=f"lexicon: {word}", show_header=False)
    table.add_column("property", style="bold")
    table.add_column("value", overflow="fold")
    rows = [
        ("known", str(lex.is_known(word))),
        ("singular", lex.singular(word)),
        ("plural", lex.plural(word)),
        ("is plural", str(lex.is_plural(word))),
        ("canonical", lex.canonical(word)),
        ("synonyms", names(lex.synonyms(word))),
        ("forms", names(lex.forms(word))),
        ("kind of", names(lex.kinds(word))),
        ("hyponyms", names(lex.hyponyms(word))),
        ("may denote (for absence)", names(lex.may_denote(word))),
        ("absence decidable", str(lex.absence_decidable(word))),
        ("category", lex.category(word) or "-"),
        ("WordNet sense", lex.synset(word) or "-"),
        ("uncountable", str(lex.is_uncountable(word))),
        ("plural only", str(lex.is_plural_only(word))),
        ("unannotated-prone", str(lex.is_unannotated_prone(word))),
        ("colour", str(lex.is_color(word))),
    ]
    if lex.opposite_relation(word) or lex.is_symmetric_relation(word):
        rows.append(("opposite relation", lex.opposite_relation(word) or "-"))
        rows.append(("symmetric relation", str(lex.is_symmetric_relation(word))))
    for key, value in rows:
        table.add_row(key, value)
    make_console().print(table)
