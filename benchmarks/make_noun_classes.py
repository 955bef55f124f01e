"""Build the two noun-class tables the engine reads at run time (WordNet is needed here only):

- rules/lexicon/person_facets.tsv: every people noun of the lexicon (its chosen WordNet sense lies
  under person.n.01) with the gender and the age its sense says, if any (under male.n.02 / man.n.01,
  female.n.02 / woman.n.01; juvenile.n.01 / child.n.01, adult.n.01), corrected by the hand-curated
  person_facet_edits.tsv. People cross-classify: a catcher, an umpire or a skier may be a man or a
  woman, a man may be a player. Two people nouns may denote the same person unless their genders
  or their ages differ (a man is no woman, a girl no adult); so an absence claimed of one rests on
  there being no object of any compatible other.
- rules/attribute_kinds.tsv: which attribute values GQA says of which kinds of noun, learned from
  the typed steps of GQA's own programs in ../shared/data/gqa (`filter TYPE: V`, `verify TYPE: V`
  answered yes, `choose TYPE: A|B` and `query: TYPE` by their answers), each value's object
  classified by the lexicon's category (nouns.tsv: clothing, person, body part, ...). An attribute
  edit offers a value of a type for an object only where that category is seen with the type, and
  a value seen with few categories only for those ("brunette" for hair and people, not shoes).

    NLTK_DATA=../shared/nltk_data .venv/bin/python benchmarks/make_noun_classes.py [--gqa ../shared/data/gqa]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import orjson

from contrastgen.jsonio import write_text
from contrastgen.language.lexicon import Lexicon
from contrastgen.resources import rules_file

GEOMETRIC = {"hposition", "vposition", "place", "weather", "room", "location", "name"}
PRONOUNS = {"he", "she", "it", "they", "him", "her", "them", "this", "that"}
# Categories of living things: a value GQA says only of these (a hair colour, a pose, an age, an
# activity) is a property of living things, never offered for an inanimate object.
ANIMATE = ("animal", "body part", "person")
MALE, FEMALE = ("male.n.02", "man.n.01"), ("female.n.02", "woman.n.01")
YOUNG, ADULT = ("juvenile.n.01", "child.n.01", "child.n.02"), ("adult.n.01",)


def person_facets(lex_rows: list[list[str]], edits: dict[str, tuple[str, str]]) -> list[tuple[str, str, str]]:
    import os

    import nltk
    from nltk.corpus import wordnet as wn

    if os.environ.get("NLTK_DATA") and os.environ["NLTK_DATA"] not in nltk.data.path:
        nltk.data.path.insert(0, os.environ["NLTK_DATA"])  # set after nltk was first imported

    def closure(name: str) -> set[str]:
        s = wn.synset(name)
        return {x.name() for x in s.closure(lambda x: x.hypernyms() + x.instance_hypernyms())} | {s.name()}

    out = {}
    for cols in lex_rows:
        canonical, synset = cols[2], cols[5]
        if synset == "-" or canonical in out:
            continue
        up = closure(synset)
        if "person.n.01" not in up:
            continue
        gender = "male" if up & set(MALE) else "female" if up & set(FEMALE) else "-"
        age = "young" if up & set(YOUNG) else "adult" if up & set(ADULT) else "-"
        out[canonical] = edits.get(canonical, (gender, age))
    return sorted((n, g, a) for n, (g, a) in out.items())


def _refs(q: dict) -> list[tuple[str, str, str]]:
    """(noun, type, value) for every typed statement of a question's program and answer."""
    steps = q.get("semantic") or []
    answer = str(q.get("answer", "")).strip().lower()
    noun_of: list[str | None] = []
    out = []
    for n, step in enumerate(steps):
        op, arg = step["operation"], str(step["argument"]).strip()
        deps = step.get("dependencies") or []
        source = noun_of[deps[0]] if deps and deps[0] < len(noun_of) else None
        noun = source
        head, _, kind = op.partition(" ")
        if head in ("select", "relate"):
            body = arg.rsplit("(", 1)[0].strip()
            noun = body.split(",")[0].strip().lower() if head == "relate" else body.lower()
        last = n == len(steps) - 1
        if source and kind and kind not in GEOMETRIC and kind != "rel":
            said_of = (head == "filter" and not arg.lower().startswith("not(")) or \
                (head == "verify" and last and answer == "yes")
            if said_of:
                out.append((source, kind, arg.lower()))
            elif head == "choose" and last:
                out.append((source, kind, answer))
        if head == "query" and last and source and arg not in GEOMETRIC:
            out.append((source, arg, answer))
        noun_of.append(noun)
    return out


def attribute_kinds(gqa_dir: Path, lex: Lexicon) -> dict[tuple[str, str], set[str]]:
    """(type, value) -> the categories of the nouns GQA says it of."""
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    for file in sorted(gqa_dir.glob("*.json")):
        for q in orjson.loads(file.read_bytes()).values():
            for noun, kind, value in _refs(q):
                if noun in PRONOUNS or noun in ("_", "") or not value:
                    continue
                category = lex.category(noun)
                if category is not None:
                    seen[kind, value].add(category)
    return seen


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gqa", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data" / "gqa")
    ap.add_argument("--out", type=Path, default=None,
                    help="write attribute_kinds.tsv and lexicon/person_facets.tsv under this folder [default: rules/]")
    args = ap.parse_args(argv)
    out = args.out or rules_file()
    (out / "lexicon").mkdir(parents=True, exist_ok=True)
    lex_rows = [line.rstrip("\n").split("\t") for line in rules_file("lexicon", "nouns.tsv").read_text().splitlines()
                if line and not line.startswith("#")]
    edits = {cols[0]: (cols[1], cols[2]) for line in rules_file("lexicon", "person_facet_edits.tsv").read_text().splitlines()
             if line and not line.startswith("#") for cols in [line.split("\t")]}
    facets = person_facets(lex_rows, edits)
    write_text(out / "lexicon" / "person_facets.tsv", "\n".join([
        "# People nouns and the gender and age their WordNet sense says (- : none). Two people nouns may",
        "# denote the same person unless their genders or their ages differ: a catcher may be a man, a",
        "# man a player, a girl is no woman. No absence is claimed of a people noun while an object of a",
        "# compatible people noun is in the graph (\"Are there catchers? no\" with a man present).",
        "# Source: GENERATED by benchmarks/make_noun_classes.py from rules/lexicon/nouns.tsv (the chosen",
        "# sense, under person.n.01), WordNet 3.0 hypernyms and person_facet_edits.tsv. Do not edit by hand.",
        "# Regenerate: NLTK_DATA=../shared/nltk_data .venv/bin/python benchmarks/make_noun_classes.py",
        "# Columns: noun (canonical) <TAB> gender (male, female, -) <TAB> age (young, adult, -).",
        *("\t".join(row) for row in facets)]) + "\n")
    kinds = attribute_kinds(args.gqa, Lexicon.load())
    rows = [f"{value}\t{kind}\t{','.join(sorted(cats))}" for (kind, value), cats in sorted(kinds.items())]
    write_text(out / "attribute_kinds.tsv", "\n".join([
        "# Which kinds of noun GQA says each attribute value of: value <TAB> GQA type <TAB> the lexicon",
        "# categories (rules/lexicon/nouns.tsv) of the nouns it is said of. An attribute edit offers a",
        "# value for an object only where the object's category is seen with the value's type (a category",
        "# seen with no type here is not restricted), and a value seen only of living things (the @animate",
        "# categories) only for them (\"brunette\": hair and people, not shoes).",
        "# Source: GENERATED by benchmarks/make_noun_classes.py from the typed program steps and answers of",
        "# ../shared/data/gqa (GQA v1.2, CC BY 4.0) and the lexicon's categories. Do not edit by hand.",
        "# Regenerate: NLTK_DATA=../shared/nltk_data .venv/bin/python benchmarks/make_noun_classes.py",
        "@animate\t" + ",".join(ANIMATE),
        *rows]) + "\n")
    print(f"{len(facets)} people nouns, {len(rows)} attribute values")


if __name__ == "__main__":
    main()
