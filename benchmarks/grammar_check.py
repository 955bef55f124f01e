"""Rule-based grammar checks of perturbed questions, per path (the paper's templates vs program
edits), beside the same checks on the original questions as a baseline.

Why rules and not a model: no trained grammar checker can be installed here (spaCy's pipelines and
LanguageTool are downloads). The checks cover the errors a one-atom edit can introduce, which are
the ones the templates' linguistic fixer exists for (the paper's Table 10):
- `article`: "a"/"an" that does not fit the next word's sound ("a umbrella");
- `determinerless`: "the" or "a" before a word that takes none ("the someone");
- `a_plural`: "a"/"an" before a plural or uncountable noun ("a jeans", "a water");
- `number`: "is/does the X" with X plural, or "are/do the X" with X singular (the first noun the
  lexicon knows within three words of the determiner; a plural-only or uncountable noun is skipped);
- `doubled`: a word said twice in a row ("the the");
- `bare_singular`: a singular count noun with no determiner after "there", "see", "both",
  "either", "and" or "or" ("Are there both cheese and vase?"), where only a mass noun or a plural
  reads.
The originals are GQA's own questions, so their rate is the checks' false-alarm floor; a
perturbation's problems that its original does not have are counted as introduced by the edit. A sample of
perturbations is printed for reading by eye (`--show N`).

    python benchmarks/grammar_check.py OUT/contrast_sets.jsonl [--show 40] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

import orjson
import regex
from script_inputs import require

from contrastgen.language.articles import article
from contrastgen.language.lexicon import Lexicon
from contrastgen.language.nounphrase import attribute_words, phrase_words
from contrastgen.resources import lexicon_dir

WORD = regex.compile(r"[\p{L}\p{N}'-]+")
SINGULAR_VERBS = {"is", "does", "was", "has"}
PLURAL_VERBS = {"are", "do", "were", "have"}
DETERMINERS = {"the", "this", "that", "these", "those"}
BARE_BEFORE = {"there", "see", "both", "either", "and", "or"}  # a noun phrase may start bare after them


def _words(path: Path) -> set[str]:
    return {line.strip().lower() for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")}


class Checker:
    def __init__(self) -> None:
        self.lex = Lexicon.load()
        self.determinerless = _words(lexicon_dir() / "determinerless.txt")

    def _noun_after(self, words: list[str], i: int) -> tuple[str, bool] | None:
        """The first known noun (one or two words) within three words after position i, and whether
        the lexicon reads it as plural; None where none is known or its number is not told."""
        lex = self.lex
        for j in range(i + 1, min(i + 4, len(words))):
            if j > i + 1 and " ".join(words[j - 1:j + 1]) in attribute_words():
                continue  # the second word of "light blue", not the lamp "light"
            if " ".join(words[j:j + 2]) in attribute_words():
                continue  # "light blue": a colour, not the noun "light"
            if words[j] in attribute_words() and j + 1 < len(words) and lex.is_known(words[j + 1]):
                continue  # "the orange clothing items": a colour before a noun, not the fruit
            for span in (2, 1):
                if j + span > len(words):
                    continue
                noun = " ".join(words[j:j + span])
                if lex.is_known(noun):
                    if lex.is_plural_only(noun) or lex.is_uncountable(noun):
                        return None
                    return noun, lex.is_plural(noun)
        return None

    def _bare_singular(self, words: list[str], i: int) -> bool:
        """Is the noun phrase after position i a singular count noun with no determiner (its
        adjectives skipped)? Not where the word is also an attribute ("blue or orange") or its own
        plural ("fish", "sheep")."""
        lex, pw = self.lex, phrase_words()
        for j in range(i + 1, min(i + 4, len(words))):
            for span in (2, 1):
                noun = " ".join(words[j:j + span])
                if j + span <= len(words) and lex.is_known(noun):
                    return not (noun in attribute_words() or noun in self.determinerless
                                or lex.is_plural(noun) or lex.plural(noun) == noun
                                or lex.is_plural_only(noun) or lex.is_uncountable(noun))
            if words[j] in pw.determiners or words[j] not in attribute_words():
                return False
        return False

    def problems(self, text: str) -> list[str]:
        words = [w.lower() for w in WORD.findall(text)]
        found = []
        for i, w in enumerate(words):
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if nxt and nxt == w:
                found.append("doubled")
            if w in ("a", "an") and nxt:
                if article(nxt) != w:
                    found.append("article")
                after = words[i + 2] if i + 2 < len(words) else ""
                head = not (after and self.lex.is_known(after))  # "a coffee cup": "coffee" modifies
                lex = self.lex
                if head and lex.is_known(nxt) and (lex.is_plural(nxt) or lex.is_plural_only(nxt)
                                                   or lex.is_uncountable(nxt)):
                    found.append("a_plural")
            if w in ("the", "a", "an") and nxt in self.determinerless:
                found.append("determinerless")
            if w in BARE_BEFORE and self._bare_singular(words, i):
                found.append("bare_singular")
            if w in SINGULAR_VERBS | PLURAL_VERBS and nxt in DETERMINERS:
                noun = self._noun_after(words, i + 1)
                if noun is not None and noun[1] != (w in PLURAL_VERBS):
                    found.append("number")
        return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("contrast_sets", type=Path)
    ap.add_argument("--show", type=int, default=0, help="print this many program-path perturbations to read")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    require("grammar_check.py", args.contrast_sets, "the contrast_sets.jsonl of a contrastgen generate output")
    checker = Checker()
    counts: dict[str, Counter[str]] = {}
    totals: Counter[str] = Counter()
    introduced: Counter[str] = Counter()  # perturbations with a problem their original lacks
    flagged: dict[str, list[str]] = {}
    originals: set[str] = set()
    program_texts: list[tuple[str, str]] = []
    for line in args.contrast_sets.read_bytes().splitlines():
        rec = orjson.loads(line)
        path = "program" if rec["template"] == "program" else "templates"
        if rec["question"] not in originals:
            originals.add(rec["question"])
            totals["original"] += 1
            for p in checker.problems(rec["question"]):
                counts.setdefault("original", Counter())[p] += 1
        for pert in rec["perturbations"]:
            key = f"{path} ({pert.get('kind', 'contrast')})"
            totals[key] += 1
            problems = checker.problems(pert["question"])
            for p in problems:
                counts.setdefault(key, Counter())[p] += 1
            if problems:
                flagged.setdefault(key, []).append(f"{pert['question']}  [{', '.join(problems)}]")
            new = Counter(problems) - Counter(checker.problems(rec["question"]))
            if new:
                introduced[key] += 1
                flagged.setdefault(f"{key}, introduced by the edit", []).append(
                    f"{rec['question']}  ->  {pert['question']}  [{', '.join(new)}]")
            if path == "program":
                program_texts.append((rec["question"], pert["question"]))
    kinds = ["article", "determinerless", "a_plural", "number", "doubled", "bare_singular"]
    print(f"| questions | n | {' | '.join(kinds)} | with any problem | introduced by the edit |")
    print("|---|---|" + "---|" * (len(kinds) + 2))
    for key in sorted(totals):
        c = counts.get(key, Counter())
        n = totals[key]
        flagged_n = len(flagged.get(key, [])) if key != "original" else sum(
            1 for q in originals if checker.problems(q))
        fresh = "-" if key == "original" else f"{introduced[key]:,} ({100 * introduced[key] / max(n, 1):.2f}%)"
        print(f"| {key} | {n:,} | " + " | ".join(str(c[k]) for k in kinds)
              + f" | {flagged_n:,} ({100 * flagged_n / max(n, 1):.2f}%) | {fresh} |")
    for key, items in sorted(flagged.items()):
        print(f"\nflagged, {key} (first 10):")
        for item in items[:10]:
            print("  ", item)
    if args.show:
        rng = random.Random(args.seed)
        print(f"\n{args.show} program-path perturbations to read (seed {args.seed}):")
        for before, after in rng.sample(program_texts, min(args.show, len(program_texts))):
            print(f"   {before}  ->  {after}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
