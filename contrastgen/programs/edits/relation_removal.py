"""rd- for relations on GQA programs: a relation that narrows nothing removed with the object it
relates to ("What color is the cat in front of the wall?" -> "What color is the cat?" where the
cat is the only cat), as the Super-CLEVR paper's GQA ladder removes redundant operations.

The edit takes a `relate: <name>,<relation>,s` step whose input is one object's reference (a
`select` and the `filter`s on it, read by nothing else) and replaces the four of them by `select:
<name>`. It is kept only when:
- the name alone denotes on the graph exactly the objects the relation picked (`denoted_ids`),
  none of a kind annotators leave out, so "the cat" says what "the cat in front of the wall" said;
- the edited program runs to the same answer and every claim it rests on is shown (`proofs`);
- the words say the relation as one run right after the subject's noun: an optional "that is"
  (rules/relation_clause_openers.txt), the relation as the program says it, an article, the
  object's filter values and its noun, found once; that run is removed. Anything else ("the girl
  on the left", "Who is wearing the shirt?") is not certain words for the relation and is left.

Not in `EDITS`: the GQA ladder offers it (`programs.redundancy_ladder`), so `generate`'s contrast sets
are what they were.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator

import regex

from contrastgen.datasets.gqa_program import Step, reference_name, relation_of
from contrastgen.language.lexicon import read_word_list
from contrastgen.perturb import Proposal, Ranking
from contrastgen.programs.edits.question import EditedQuestion
from contrastgen.programs.executor import PRONOUNS, SCENE
from contrastgen.programs.proofs import negated
from contrastgen.programs.wording import Span
from contrastgen.resources import rules_file
from contrastgen.scene.ground import denoted_ids

_ARTICLES = ("the", "a", "an", "this", "that")


@functools.cache
def clause_openers() -> tuple[str, ...]:
    """rules/relation_clause_openers.txt, longest first."""
    return tuple(sorted(read_word_list(rules_file("relation_clause_openers.txt")), key=len, reverse=True))


def object_chain(steps: list[Step], index: int) -> list[int] | None:
    """The steps that make the relate's object: a `select` and the filters on it, in program
    order, each read only by the next (the last by the relate); None when it is anything else."""
    chain = []
    j = index
    while True:
        deps = steps[j].dependencies
        if len(deps) != 1:
            return None
        source = deps[0]
        readers = [k for k, s in enumerate(steps) if source in s.dependencies]
        if readers != [j]:
            return None
        chain.append(source)
        if steps[source].operation == "select":
            return sorted(chain)
        if steps[source].head != "filter":
            return None
        j = source


def relation_span(text: str, name: str, plural: str, relation: str, values: list[str], obj: str,
                  obj_plural: str) -> Span | None:
    """Where the words say "<name> [that is] <relation> <article> <values> <obj>": the span from
    after the subject's noun to the end of the object's, found once; None otherwise."""
    nouns = "|".join(regex.escape(n) for n in sorted({name, plural}, key=len, reverse=True))
    objects = "|".join(regex.escape(n) for n in sorted({obj, obj_plural}, key=len, reverse=True))
    openers = "|".join(regex.escape(o) for o in clause_openers())
    pattern = regex.compile(
        rf"(?<![\w-])(?:{nouns}) (?P<run>(?:(?:{openers}) )?{regex.escape(relation)} (?:{'|'.join(_ARTICLES)}) "
        rf"(?P<mid>(?:[\w-]+ )*?)(?:{objects}))(?![\w-])", regex.IGNORECASE)
    found = list(pattern.finditer(text))
    if len(found) != 1:
        return None
    said = sorted(found[0].group("mid").lower().split())
    if said != sorted(w for v in values for w in v.lower().split()):
        return None  # the object's words are other than its filters say
    return Span(*found[0].span("run"))


class DropRedundantRelation:
    """rd- of a relation: the relation and its object removed where the subject's name alone
    says the same objects. Offered last, as the other redundancy edits."""

    name = "rd- relation"
    last = True

    def applies(self, step: Step) -> bool:
        return step.operation == "relate"

    def propose(self, q: EditedQuestion, index: int, rng: random.Random, ranking: Ranking) -> Iterator[Proposal]:
        step, lex, scene = q.steps[index], q.image.lex, q.image.scene
        name, relation, role = relation_of(step)
        if role != "s" or not relation or name in PRONOUNS or name in ("", "_", SCENE):
            return
        chain = object_chain(q.steps, index)
        subject = q.original.values[index]
        if chain is None or isinstance(subject, str) or not subject:
            return
        filters = [q.steps[c] for c in chain[1:]]
        if any(f.kind in ("", "hposition", "vposition") or negated(f.argument.strip().lower()) for f in filters):
            return  # a position or a negation is not said as an adjective before the object's noun
        if set(denoted_ids(name, scene, lex)) != set(subject):
            return  # the name alone says other objects too: the relation is needed
        if lex.is_unannotated_prone(name) or any(lex.is_unannotated_prone(scene.objects[o].name) for o in subject):
            return  # "the shirt" would say no other shirt is there, which a graph does not show
        obj = reference_name(q.steps[chain[0]])
        span = relation_span(q.text, name, lex.plural(name), relation, [f.argument.strip() for f in filters],
                             obj, lex.plural(obj))
        if span is None:
            return
        q.aligned = True
        gone = set(chain)
        renumber = {}
        edited = []
        for j, s in enumerate(q.semantic):
            if j in gone:
                continue
            renumber[j] = len(edited)
            if j == index:
                edited.append({"operation": "select", "argument": f"{name} ({','.join(sorted(subject))})",
                               "dependencies": []})
            else:
                edited.append({**s, "dependencies": [renumber[d] for d in s["dependencies"]]})
        proven = q.removal_proven(edited, span)
        if proven is None:
            return
        run, words = proven
        said = q.text[span.start:span.end].strip().lower()
        facts = [{"fact": "only", "names": q.kind_names(name), "ids": sorted(subject)}]
        yield q.perturbation(edited, run, -1, set(), words,
                             {"kind": "relation", "slot": f"step{index}", "from": said, "to": ""},
                             facts, "invariance")


