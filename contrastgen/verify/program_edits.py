"""Checking a program-path perturbation: the words, the program and the evidence say one edit.

A program-path perturbation (`template: "program"`, evidence query `{"op": "program", "step": i}`)
claims that the original question, with the words saying one argument of step i replaced (an
object's name, a relation, an attribute value), asks what the original program asks with that
argument replaced, and that this program's answer on the graph is the claimed one. Each part is
checked here with the verifier's own code:
- the words: the original and the perturbed question differ in one run of words (and an "a"/"an"
  before it), which is a form of `change.from` in the original and of `change.to` in the new one
  (nouns.tsv's forms, also after a classifier from rules/lexicon/classifiers.txt: "piece of
  furniture"; a relation or an attribute value: the program's own words);
- the programs: the record's original `semantic` and the perturbation's have the same operations
  and dependencies, and differ only at step i, from `change.from` to `change.to` (ids may differ:
  they follow the new objects);
- the answer: the perturbation's program, executed by `verify.program`, gives the claimed answer,
  which differs from the original's (a contrast) or is the original's (an invariance);
- the reference: a new name denotes exactly the one object step i refers to (an `only` fact); a
  new relation or filter value still picks out one object; objects the program now says as "the"
  ones that the original's ids did not name are of no kind annotators leave out, and what a filter
  left out of them is shown to lack its value; a dropped attribute leaves no such kind said alone;
- a removed relation (the GQA ladder's rd- of a relation): step i was `relate: name,rel,s`, the
  steps that made its object (a `select` and its filters, read by nothing else) are gone and step i
  is `select: name`; `change.from` is the relation and the object as said ("[that is] rel the
  <filter values> <object>"); an `only` fact shows the name alone says the objects the relation did;
- the words around a contrast's new name: no possessive ("her kite"), and no attribute word that
  no filter of the program checks ("the black cup").
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import regex

from contrastgen.resources import rules_resource
from contrastgen.verify.graph import EvidenceProblem, GraphIndex
from contrastgen.verify.nouns import load_nouns
from contrastgen.verify.program import execute_program_steps, objects_named, unshown_absences
from contrastgen.verify.program_arguments import (
    REFERENCE_OPERATIONS,
    dependencies,
    listed_ids,
    options,
    reference_name,
    relation_of,
    role_of,
)
from contrastgen.verify.rules import VerifyRules, normalize_name

Problem = tuple[str, str]
_WORD = regex.compile(r"\w+(?:'\w+)?|[^\w\s]")
_ARTICLES = {"a", "an"}
_ALNUM = regex.compile(r"[a-z0-9]+")  # a question's words, apostrophes and hyphens apart ("man's": "man")


def _said(step: dict[str, Any]) -> str:
    """What a step says, its ids aside: a reference's name; any other step's whole argument (a
    filter's "not(red)" is a value, not a name with ids)."""
    argument = str(step.get("argument", ""))
    return reference_name(argument) if step.get("operation") in REFERENCE_OPERATIONS else normalize_name(argument)


def _edited_step(change: dict[str, Any]) -> int | None:
    slot = str(change.get("slot", ""))
    return int(slot[4:]) if slot.startswith("step") and slot[4:].isdigit() else None


@functools.cache
def _classifiers() -> frozenset[str]:
    """rules/lexicon/classifiers.txt ("piece of", "item of"), read with the verifier's own code."""
    text = rules_resource("lexicon", "classifiers.txt").read_text(encoding="utf-8")
    return frozenset(normalize_name(line) for line in text.splitlines() if line.strip() and not line.startswith("#"))


def _noun_readings(words: tuple[str, ...]) -> set[str]:
    """A run of words as a name: itself, and without a classifier before a mass noun ("piece of
    furniture" says `furniture`)."""
    out = {" ".join(words)}
    if len(words) > 2 and " ".join(words[:2]) in _classifiers():
        out.add(" ".join(words[2:]))
    return out


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> tuple[str, ...]:
    """A question's words, lower-cased. Cached: a record's question is read for each of its
    perturbations, and each perturbation's by three checks."""
    return tuple(w.lower() for w in _WORD.findall(text))


@functools.lru_cache(maxsize=64)
def _split_at_change(original: str, perturbed: str) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """Both questions' words, lower-cased, and where they first differ. Cached: three checks of
    a perturbation ask it in turn."""
    a, b = _words(original), _words(perturbed)
    start, shorter = 0, min(len(a), len(b))
    while start < shorter and a[start] == b[start]:
        start += 1
    return a, b, start


def _common_suffix(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How many words the two end with in common."""
    n = 0
    while n < min(len(a), len(b)) and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n


@functools.lru_cache(maxsize=8192)
def _names_as_words(name: str, literal: bool, nouns: Any) -> tuple[frozenset[str], frozenset[int]]:
    """The ways a change's name may be said, in the words as split here ("t-shirts" is read as
    "t - shirts"): its own words (`literal`: a relation or an attribute value, said in the
    program's words) or each of its noun forms; and how many words a run saying one of them may
    have (a noun also after a two-word classifier; either after an article). Cached: a run's
    changes name a few thousand names."""
    names = frozenset({" ".join(_WORD.findall(name))} if literal else
                      {" ".join(_WORD.findall(n)) for n in nouns.names(name)})
    counts = {len(n.split()) for n in names}
    counts |= set() if literal else {c + 2 for c in counts if c}
    return names, frozenset(counts | {c + 1 for c in counts})  # and an article before them


def word_problems(original: str, perturbed: str, change: dict[str, Any]) -> list[Problem]:
    """One run of words differs, and it is the changed name in both questions.

    Every way of setting the shared words at both ends aside is tried, not only the longest
    prefix: where a word repeats, the run removed may sit before the first place the two differ
    ("Is the skier wearing a scarf wearing a sneaker?" -> "Is the skier wearing a sneaker?" drops
    "wearing a scarf", though the two first differ at "scarf"). The run may also take in words the
    two share where the names do ("hot dog" -> "dog" differs only in "hot", but the names are the
    whole words). A name may be said with a classifier ("piece of furniture") and in any of its
    forms (plural, synonym). Only runs as long as some way of saying the names (one word more
    where an article is set aside) are read.
    """
    a, b, start = _split_at_change(original, perturbed)
    suffix = _common_suffix(a, b)
    before, after = normalize_name(str(change.get("from", ""))), normalize_name(str(change.get("to", "")))
    literal = change.get("kind") in ("relation", "attribute")
    nouns = None if literal else load_nouns()
    (old_names, old_lengths), (new_names, new_lengths) = (_names_as_words(n, literal, nouns) for n in (before, after))
    readings = _literal_reading if literal else _noun_readings
    la, lb = len(a), len(b)
    shorter = min(la, lb)
    for left in range(start + 1):  # shared words kept before the run: any number up to the common prefix
        most = min(suffix, shorter - left)  # shared words kept after it
        for n in old_lengths:  # only runs as long as a way of saying the names
            right = la - left - n
            if right < 0 or right > most or lb - left - right not in new_lengths:
                continue
            old, new = a[left:la - right], b[left:lb - right]
            if old[:1] and new[:1] and old[0] in _ARTICLES and new[0] in _ARTICLES:
                old, new = old[1:], new[1:]
            if readings(old) & old_names and readings(new) & new_names:
                return []
    shared_end = min(suffix, len(a) - start, len(b) - start)
    end_a, end_b = len(a) - shared_end, len(b) - shared_end
    return [("text_mismatch", f"the questions differ in {' '.join(a[start:end_a])!r} -> "
             f"{' '.join(b[start:end_b])!r}, not in the change {before!r} -> {after!r}")]


def possession_problems(original: str, perturbed: str, change: dict[str, Any], kind: Any,
                        rules: VerifyRules) -> list[Problem]:
    """A new object's name said after words that say whose the old one was ("her racket" -> "her
    kite", "the man's hat" -> "the man's cup") claims what no graph shows; the same object under
    another name (an invariance) keeps what the original said of it."""
    if kind == "invariance" or change.get("kind") != "object":
        return []
    a, b, start = _split_at_change(original, perturbed)
    nouns = load_nouns()
    for w in reversed(a[max(0, start - 5):start]):
        if w in rules.possessives or (w.endswith("'s") and nouns.is_noun(w[:-2])):
            return [("text_mismatch", f"the words say whose the {change.get('from')!r} is ({w!r}), "
                     f"which nothing shows of the {change.get('to')!r}")]
        if w in rules.determiners or not w.isalpha():
            return []
    return []


def adjective_problems(original: str, perturbed: str, change: dict[str, Any], kind: Any,
                       semantic: Any, rules: VerifyRules) -> list[Problem]:
    """The words before a new object's name say of it what they said of the old one ("the black
    purse" -> "the black cup"): each attribute word there must be a value of a filter the program
    applies to that step's objects, so that the program checks it ("any silver glasses"). The
    same object under another name, an invariance, keeps what the original said of it."""
    step = _edited_step(change)
    if kind == "invariance" or change.get("kind") != "object" or step is None or not isinstance(semantic, list):
        return []
    a, b, start = _split_at_change(original, perturbed)
    said = []
    for w in reversed(b[max(0, start - 5):start]):
        if w not in rules.attribute_words:
            break
        said.append(w)
    chain, checked = {step}, set()
    for j, s in enumerate(semantic):
        deps = dependencies(s)
        if j > step and str(s.get("operation", "")).startswith("filter") and deps[:1] and deps[0] in chain:
            chain.add(j)
            checked |= set(normalize_name(str(s.get("argument", ""))).split())
    return [("text_mismatch", f"the words say {w!r} of the {change.get('to')!r}, which no filter of the "
             "program checks") for w in said if w not in checked]


def kind_name_problems(change: dict[str, Any], evidence: dict[str, Any], graph: GraphIndex,
                       rules: VerifyRules) -> list[Problem]:
    """A new name must be one a reader would take for the object: never a general noun the object
    is a kind of only in WordNet's hierarchy ("the container" for a spoon)."""
    if change.get("kind") != "object":
        return []
    new = normalize_name(str(change.get("to", "")))
    nouns = load_nouns()
    ids = [str(i) for f in evidence.get("facts") or [] if isinstance(f, dict) and f.get("fact") == "only"
           for i in f.get("ids", [])]
    problems = []
    for o in ids:
        if o in graph.objects:
            name = graph.name_of(o)
            if (nouns.canonical(name) or normalize_name(name), new) in rules.kinds_not_said:
                problems.append(("text_mismatch", f"object {o} ({name!r}) is not called {new!r} "
                                 "(rules/lexicon/kinds_not_said.tsv)"))
    return problems


def _literal_reading(words: tuple[str, ...]) -> set[str]:
    return {" ".join(words)}


def _dropped(original: list[Any], step: int) -> list[Any]:
    """The original without step `step`: what reads it reads its input instead (a filter's)."""
    source = (dependencies(original[step]) or [None])[0]
    out = []
    for j, s in enumerate(original):
        if j == step:
            continue
        deps = [source if d == step else d - 1 if d > step else d for d in dependencies(s)]
        out.append({**s, "dependencies": deps})
    return out


@functools.cache
def _clause_openers() -> tuple[str, ...]:
    """rules/relation_clause_openers.txt ("that is"), read with the verifier's own code."""
    text = rules_resource("relation_clause_openers.txt").read_text(encoding="utf-8")
    return tuple(normalize_name(line.split("#", 1)[0]) for line in text.splitlines()
                 if line.split("#", 1)[0].strip())


def relation_object_steps(program: list[Any], step: int) -> list[int] | None:
    """The steps that make a `relate`'s object: a `select` and the filters on it, each read only
    by the next (the last by the relate), in program order; None when it is anything else."""
    chain, j = [], step
    while True:
        deps = dependencies(program[j]) if 0 <= j < len(program) else []
        if len(deps) != 1 or not 0 <= deps[0] < j:
            return None
        source = deps[0]
        if [k for k, s in enumerate(program) if source in dependencies(s)] != [j]:
            return None
        chain.append(source)
        op = str(program[source].get("operation", "")) if isinstance(program[source], dict) else ""
        if op == "select":
            return sorted(chain)
        if not op.startswith("filter"):
            return None
        j = source


def _relation_words_problems(original: list[Any], chain: list[int], relation: str, said: str) -> list[Problem]:
    """`change.from` says the relation and its object: an optional opener ("that is"), the
    relation, an article, the object's filter values (any order) and its noun (any form)."""
    words = said.split()
    for opener in sorted(_clause_openers(), key=len, reverse=True):
        if words[:len(opener.split())] == opener.split():
            words = words[len(opener.split()):]
            break
    rel = relation.split()
    if words[:len(rel)] != rel or len(words) < len(rel) + 2 or words[len(rel)] not in ("the", "a", "an", "this", "that"):
        return [("text_mismatch", f"the removed words {said!r} do not say the relation {relation!r} and an object")]
    rest = words[len(rel) + 1:]
    obj = reference_name(str(original[chain[0]].get("argument", "")))
    values = sorted(w for c in chain[1:] for w in normalize_name(str(original[c].get("argument", ""))).split())
    for form in sorted(load_nouns().names(obj) | {obj}, key=len, reverse=True):
        n = len(form.split())
        if rest[-n:] == form.split() and sorted(rest[:-n]) == values:
            return []
    return [("text_mismatch", f"the removed words {said!r} are not the object {obj!r} with its attributes {values}")]


def relation_removal_problems(original: list[Any], edited: list[Any], change: dict[str, Any],
                              step: int) -> list[Problem]:
    """A relation removed with its object: step i was `relate: name,rel,s` over a `select` and its
    filters that nothing else reads; they are gone and step i is `select: name`, the rest as it was."""
    gone = original[step] if 0 <= step < len(original) and isinstance(original[step], dict) else {}
    argument = str(gone.get("argument", ""))
    if gone.get("operation") != "relate" or role_of(argument) != "s":
        return [("program", f"step {step} is not a relation of a subject to remove")]
    chain = relation_object_steps(original, step)
    if chain is None:
        return [("program", f"step {step}'s object is not a select and its filters that only it reads")]
    want, renumber = [], {}
    for j, s in enumerate(original):
        if j in chain:
            continue
        renumber[j] = len(want)
        if j == step:
            want.append(("select", reference_name(argument), []))
        else:
            want.append((s.get("operation"), _said(s), [renumber.get(d, -1) for d in dependencies(s)]))
    got = [(e.get("operation"), _said(e), dependencies(e)) if isinstance(e, dict) else None for e in edited]
    if got != want:
        return [("program", f"the edited program is not the original with step {step}'s relation and its "
                 "object removed")]
    return _relation_words_problems(original, chain, relation_of(argument), normalize_name(str(change.get("from"))))


def _removed_relation(original: Any, change: dict[str, Any]) -> tuple[int, str] | None:
    """For a removed relation: the edited program's `select` that took the relate's place, and its
    name; None for any other change."""
    step = _edited_step(change)
    if change.get("kind") != "relation" or change.get("to") != "" or step is None or not isinstance(original, list):
        return None
    chain = relation_object_steps(original, step) if 0 <= step < len(original) else None
    if chain is None:
        return None
    return step - len(chain), reference_name(str(original[step].get("argument", "")))


def removal_problems(original: list[Any], edited: list[Any], change: dict[str, Any], step: int) -> list[Problem]:
    """An attribute dropped (Super-CLEVR's rd-): step i was a filter of that value, and the edited
    program is the original without it, names and all."""
    gone = original[step] if 0 <= step < len(original) and isinstance(original[step], dict) else {}
    if not str(gone.get("operation", "")).startswith("filter") or \
            normalize_name(str(gone.get("argument", ""))) != normalize_name(str(change.get("from"))):
        return [("program", f"step {step} is not a filter of {change.get('from')!r} to drop")]
    want = _dropped(original, step)
    if len(want) != len(edited):
        return [("program", "the edited program is not the original less one step")]
    for i, (o, e) in enumerate(zip(want, edited, strict=True)):
        if not isinstance(e, dict) or o.get("operation") != e.get("operation") \
                or o.get("dependencies") != e.get("dependencies") or _said(o) != _said(e):
            return [("program", f"edited step {i} is not the original's with step {step} dropped")]
    return []


def addition_problems(original: list[Any], edited: list[Any], change: dict[str, Any], step: int) -> list[Problem]:
    """Attributes added (Super-CLEVR's rd+): right after step i, filters whose values are the
    change's words, then the original's steps, reading the last filter where they read step i."""
    n = len(edited) - len(original)
    inserted = edited[step + 1:step + 1 + n] if n > 0 else []
    if not inserted or any(not isinstance(f, dict) or not str(f.get("operation", "")).startswith("filter ")
                           or f.get("dependencies") != [step + k] for k, f in enumerate(inserted)):
        return [("program", f"no filters right after step {step} to add {change.get('to')!r}")]
    said = " ".join(normalize_name(str(f.get("argument", ""))) for f in inserted)
    if said != normalize_name(str(change.get("to"))):
        return [("program", f"the added filters say {said!r}, not the change {change.get('to')!r}")]
    want = []
    for j, o in enumerate(original):
        deps = [d + n if d > step else (step + n if d == step else d) for d in dependencies(o)]
        want.append({**o, "dependencies": dependencies(o) if j == step else deps})
        if j == step:
            want.extend(inserted)
    for i, (w, e) in enumerate(zip(want, edited, strict=True)):
        if w.get("operation") != e.get("operation") or w.get("dependencies") != e.get("dependencies") \
                or _said(w) != _said(e):
            return [("program", f"edited step {i} is not the original's with the filters added")]
    return []


def program_diff_problems(original: Any, edited: Any, change: dict[str, Any]) -> list[Problem]:
    """Same steps, one name changed, at the step the change names (or, for a dropped
    attribute, the step gone)."""
    step = _edited_step(change)
    if not isinstance(original, list) or not isinstance(edited, list) or step is None:
        return [("program", "a program edit needs the record's 'semantic', the perturbation's, "
                 "and change.slot 'step<i>'")]
    kind = change.get("kind")
    if kind == "attribute" and change.get("to") == "":
        return removal_problems(original, edited, change, step)
    if kind == "relation" and change.get("to") == "":
        return relation_removal_problems(original, edited, change, step)
    if kind == "attribute" and change.get("from") == "":
        return addition_problems(original, edited, change, step)
    if len(original) != len(edited) or not 0 <= step < len(edited):
        return [("program", "the edited program has other steps than the original")]
    for i, (o, e) in enumerate(zip(original, edited, strict=True)):
        problems = _step_diff_problems(i, o, e, change, step)
        if problems:
            return problems
    return []


def _step_diff_problems(i: int, o: Any, e: Any, change: dict[str, Any], step: int) -> list[Problem]:
    """Step i of the original and the edited program: the same operation and dependencies, and
    the same name, but at the edited step, where the change is said."""
    if not isinstance(o, dict) or not isinstance(e, dict):
        return [("program", f"program step {i} is not an object")]
    if o.get("operation") != e.get("operation") or o.get("dependencies") != e.get("dependencies"):
        return [("program", f"step {i} changed its operation or dependencies")]
    if i == step:
        return _edited_argument_problems(i, o, e, change)
    if _said(o) != _said(e):
        return [("program", f"step {i} also changed its name: {_said(o)!r} -> {_said(e)!r}")]
    return []


def _edited_argument_problems(i: int, o: dict[str, Any], e: dict[str, Any], change: dict[str, Any]) -> list[Problem]:
    """The edited step says change.from where the original said it, change.to now: a value
    among the options, a relation (its object kept), or a name."""
    want = (normalize_name(str(change.get("from"))), normalize_name(str(change.get("to"))))
    before, after = str(o.get("argument", "")), str(e.get("argument", ""))
    if change.get("kind") == "attribute":
        said, now = options(before), options(after)
        if [want[1] if x == want[0] else x for x in said] != now or want[0] not in said:
            return [("program", f"step {i} says {said} -> {now}, not the change {want}")]
        return []
    if change.get("kind") == "relation":
        if reference_name(before) != reference_name(after):
            return [("program", f"step {i} changed the object it names as well as its relation")]
        got = (relation_of(before), relation_of(after))
    else:
        got = (_said(o), _said(e))
    if got != want:
        return [("program", f"step {i} names {got[0]!r} -> {got[1]!r}, not the change {want}")]
    return []


def program_edit_problems(record: dict[str, Any], p: dict[str, Any], graph: GraphIndex,
                          rules: VerifyRules) -> list[Problem]:
    change = p.get("change") if isinstance(p.get("change"), dict) else {}
    evidence = p.get("evidence") if isinstance(p.get("evidence"), dict) else {}
    claimed = evidence.get("answer")
    problems = word_problems(str(record.get("question", "")), str(p.get("question", "")), change)
    original, perturbed = str(record.get("question", "")), str(p.get("question", ""))
    problems += possession_problems(original, perturbed, change, p.get("kind"), rules)
    problems += kind_name_problems(change, evidence, graph, rules)
    problems += adjective_problems(original, perturbed, change, p.get("kind"), p.get("semantic"), rules)
    problems += program_diff_problems(record.get("semantic"), p.get("semantic"), change)
    try:
        answer, values = execute_program_steps(p.get("semantic"), graph, rules)
    except EvidenceProblem as exc:
        return problems + [("program", f"the program does not execute: {exc}")]
    if not isinstance(claimed, str) or normalize_name(answer) != normalize_name(claimed):
        problems.append(("answer", f"the program gives {answer!r}, the evidence claims {claimed!r}"))
    if normalize_name(str(p.get("answer"))) != normalize_name(answer):
        problems.append(("answer", f"the perturbation's answer {p.get('answer')!r} is not the program's {answer!r}"))
    kept = normalize_name(answer) == normalize_name(str(record.get("answer", "")))
    if p.get("kind") == "invariance" and not kept:
        problems.append(("answer", "an invariance perturbation's answer changed"))
    elif p.get("kind") != "invariance" and kept:
        problems.append(("answer", "the answer did not change"))
    problems += new_reference_problems(record.get("semantic"), p.get("semantic"), values, change, graph, rules)
    problems += hair_color_problems(record.get("semantic"), p.get("semantic"), values, change, graph, rules)
    problems += answer_said_problems(str(p.get("question", "")), answer, p.get("semantic"))
    return problems + reference_problems(p.get("semantic"), values, change, evidence, record.get("semantic"))


def hair_color_problems(original: Any, semantic: Any, values: list[Any], change: dict[str, Any],
                        graph: GraphIndex, rules: VerifyRules) -> list[Problem]:
    """A hair colour is said only of hair and people (rules/hair_colors.tsv): a new value ("Is
    the truck large and blond?") must be asked of objects that take it, each object the edited
    step reads being of a listed kind; so must each value rd+ adds to a selected object ("the
    blond railing")."""
    step = _edited_step(change)
    if change.get("kind") != "attribute" or step is None or not isinstance(semantic, list) \
            or not isinstance(original, list) or not 0 <= step < len(semantic):
        return []
    if change.get("from") == "":  # rd+: the filters inserted after the select say the values
        said = [(j, semantic[j]) for j in range(step + 1, step + 1 + len(semantic) - len(original))]
    else:
        said = [(step, semantic[step])]
    problems = []
    for j, s in said:
        if not isinstance(s, dict):
            continue
        new = normalize_name(str(change.get("to", ""))) if j == step else normalize_name(str(s.get("argument", "")))
        takers = rules.hair_colors.get(new)
        deps = dependencies(s)
        read = values[deps[0]] if takers is not None and deps and deps[0] < len(values) else None
        wrong = sorted(o for o in read if graph.name_of(o) not in takers) if isinstance(read, set) else []
        if wrong:
            problems.append(("attribute", f"step {j} says {new!r} of {[graph.name_of(o) for o in wrong]}: a hair "
                             "colour is said only of hair and people (rules/hair_colors.tsv)"))
    return problems


def answer_said_problems(question: str, answer: str, semantic: Any) -> list[Problem]:
    """An object answer the question itself names ("What is behind the bag the man is behind?
    man"): any form of the answer's noun (nouns.tsv: its plural, its synonyms) said as whole words
    hands the answer over."""
    last = semantic[-1] if isinstance(semantic, list) and semantic and isinstance(semantic[-1], dict) else {}
    if last.get("operation") != "query" or normalize_name(str(last.get("argument", ""))) != "name":
        return []
    said = normalize_name(answer)
    if not said:
        return []
    words = f" {' '.join(_ALNUM.findall(question.lower()))} "
    for form in sorted(_same_noun(said) | {said}):
        if f" {' '.join(_ALNUM.findall(form))} " in words:
            return [("answer", f"the answer {answer!r} is said in the question ({form!r})")]
    return []


def _same_noun(word: str) -> frozenset[str]:
    """Every surface name of the noun `word` is (singular and plural of each synonym)."""
    nouns = load_nouns()
    canonical = nouns.canonical(word)
    if canonical is None:
        return frozenset()
    return _forms_by_canonical(nouns).get(canonical, frozenset())


@functools.cache
def _forms_by_canonical(nouns: Any) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for table in (nouns.by_name, nouns.by_plural):
        for w, c in table.items():
            out.setdefault(c, set()).add(w)
    return {c: frozenset(ws) for c, ws in out.items()}


def new_reference_problems(original: Any, semantic: Any, values: list[Any], change: dict[str, Any],
                           graph: GraphIndex, rules: VerifyRules) -> list[Problem]:
    """Objects the edited program says as "the" ones ("the shirt", "what he is wearing") that the
    original's same step did not name must be shown to be all there is: none of a kind
    annotators leave out ("What is the boy wearing? socks" rests on nothing else he wears being
    in the picture), and where a filter picked them, each object it left out shown not to have
    its value ("Which furniture is gray? bench": the bed listed with no colour may be gray). The
    original's objects are those its GQA ids name (a filter's: the ids of the reference it
    narrows, which GQA writes after the filtering). Objects only `exist` reads are said to be
    there, which the graph shows. An added or dropped attribute keeps the objects, as
    `reference_problems` checks."""
    if not isinstance(semantic, list) or not isinstance(original, list):
        return []
    if change.get("to") == "":
        return _widened_problems(original, semantic, values, change, graph, rules)
    if change.get("from") == "":
        return []
    named = _original_objects(original)
    problems = []
    for i in sorted(said_as_the(semantic)):
        now = values[i] if i < len(values) else None
        if not isinstance(now, set) or not now or (i < len(named) and named[i] == now):
            continue
        prone = sorted(o for o in now if rules.is_unannotated_prone(graph.name_of(o)))
        if prone:
            problems.append(("reference", f"step {i} now refers to {prone}, of a kind scene graphs leave out: "
                             "that no other is there is not shown"))
        problems += left_out_problems(semantic, i, now, values, graph, rules)
    return problems


def _widened_problems(original: list[Any], semantic: list[Any], values: list[Any], change: dict[str, Any],
                      graph: GraphIndex, rules: VerifyRules) -> list[Problem]:
    """A dropped attribute leaves the name alone to say the objects ("the blue clothing item" ->
    "the clothing item"): that says nothing else so named is there, which a graph does not show
    of a kind annotators leave out."""
    step = _edited_step(change)
    removed = _removed_relation(original, change)
    if removed is not None:  # the relation's subject, said by its name alone
        source, name = removed
        if not 0 <= source < len(values):
            return []
    else:
        gone = original[step] if step is not None and step < len(original) and isinstance(original[step], dict) else {}
        source = (dependencies(gone) or [None])[0]
        if source is None or source >= min(len(semantic), len(values)):
            return []
        name = reference_name(str(semantic[source].get("argument", ""))) if isinstance(semantic[source], dict) else ""
    objects = values[source] if isinstance(values[source], set) else set()
    prone = sorted({name} if rules.is_unannotated_prone(name) else set()
                   | {graph.name_of(o) for o in objects if rules.is_unannotated_prone(graph.name_of(o))})
    if prone:
        return [("reference", f"without its attribute, the reference is said by {prone}, of a kind scene graphs "
                 "leave out: that no other is there is not shown")]
    return []


def left_out_problems(semantic: list[Any], i: int, kept: set[str], values: list[Any], graph: GraphIndex,
                       rules: VerifyRules) -> list[Problem]:
    """A filter's objects said as the ones there are: each object its input holds by the words
    (a `select`'s: every object its name denotes, whatever ids it lists) that it left out must be
    shown not to have the value (positions are read off the boxes, a `not(V)` is checked by the
    run)."""
    step = semantic[i]
    op = str(step.get("operation", "")) if isinstance(step, dict) else ""
    head, _, kind = op.partition(" ")
    value = normalize_name(str(step.get("argument", "")))
    deps = dependencies(step)
    if head != "filter" or kind in ("hposition", "vposition") or value.startswith("not(") or not deps \
            or deps[0] >= len(values) or not isinstance(values[deps[0]], set):
        return []
    given = set(values[deps[0]])
    source = semantic[deps[0]]
    if isinstance(source, dict) and source.get("operation") == "select":
        given |= objects_named(graph, rules, reference_name(str(source.get("argument", ""))))
    return [("reference", why) for why in unshown_absences(
        graph, rules, sorted(given - kept), kind, value, f"step {i} says its objects are the only {value!r} ones")]


def said_as_the(semantic: list[Any]) -> set[int]:
    """Steps whose objects a later step asks something of (not only whether any is there),
    directly or through `filter` and `relate` steps that hand them on."""
    asked: set[int] = set()
    for j in range(len(semantic) - 1, -1, -1):
        step = semantic[j] if isinstance(semantic[j], dict) else {}
        kind = str(step.get("operation", "")).split(" ")[0]
        if kind in ("exist", "and", "or") or (kind in ("filter", "relate") and j not in asked):
            continue
        asked.update(dependencies(step))
    return asked


def _original_objects(original: list[Any]) -> list[set[str] | None]:
    """Per step of the original program, the objects its GQA ids name (None where it names none)."""
    out: list[set[str] | None] = []
    for step in original:
        op = str(step.get("operation", "")) if isinstance(step, dict) else ""
        deps = dependencies(step)
        if op in ("select", "relate"):
            ids = set(listed_ids(str(step.get("argument", ""))))
            out.append(ids or None)
        elif op.startswith("filter") and deps and deps[0] < len(out):
            out.append(out[deps[0]])
        else:
            out.append(None)
    return out


def reference_problems(semantic: Any, values: list[Any], change: dict[str, Any],
                       evidence: dict[str, Any], original: Any = None) -> list[Problem]:
    """The edited step still refers to one object where the words say "the": a new relation or
    a new filter value picks out one object (a filter read by `exist` may keep several), and a
    new name denotes the one object the step refers to, as an `only` fact shows."""
    step = _edited_step(change)
    removed = _removed_relation(original, change)
    if removed is not None:  # a relation removed: the name alone says the objects, as an `only` fact shows
        kept = values[removed[0]] if 0 <= removed[0] < len(values) else None
        if not _only_fact_says(kept, evidence):
            return [("reference", "no 'only' fact shows the name without its relation says the same objects")]
        return []
    if step is None or not isinstance(semantic, list) or step >= min(len(values), len(semantic)):
        return [("reference", "change.slot names no step of the program")]
    return _REFERENCE_CHECKS[_edit_kind(change)](semantic, values, step, evidence, original)


def _edit_kind(change: dict[str, Any]) -> str:
    """A program edit's kind: a relation, an attribute added, dropped or replaced, or a name."""
    if change.get("kind") == "relation":
        return "relation"
    if change.get("kind") == "attribute":
        return "added" if change.get("from") == "" else "dropped" if change.get("to") == "" else "attribute"
    return "name"


def _only_fact_says(kept: Any, evidence: dict[str, Any]) -> bool:
    """Is there an `only` fact whose ids are exactly the objects `kept`?"""
    return isinstance(kept, set) and bool(kept) and any(
        sorted(str(i) for i in f.get("ids", [])) == sorted(kept) for f in _only_facts(evidence))


def _only_facts(evidence: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in evidence.get("facts") or [] if isinstance(f, dict) and f.get("fact") == "only"]


def _new_relation_reference(semantic: list[Any], values: list[Any], step: int, evidence: dict[str, Any],
                            original: Any) -> list[Problem]:
    """A new relation still picks out one object."""
    selected = values[step]
    if isinstance(selected, set) and len(selected) != 1:
        return [("reference", f"step {step}'s new relation denotes {len(selected)} objects, not one")]
    return []


def _added_attribute_reference(semantic: list[Any], values: list[Any], step: int, evidence: dict[str, Any],
                               original: Any) -> list[Problem]:
    """Attributes added: the last filter added still picks out the step's one object."""
    ids = set(listed_ids(str(semantic[step].get("argument", "")))) if isinstance(semantic[step], dict) else set()
    last = values[step + len(semantic) - len(original or [])] if isinstance(original, list) else None
    if len(ids) != 1 or last != ids:
        return [("reference", f"the added attributes do not pick out step {step}'s one object")]
    return []


def _dropped_attribute_reference(semantic: list[Any], values: list[Any], step: int, evidence: dict[str, Any],
                                 original: Any) -> list[Problem]:
    """An attribute dropped: the words alone say the objects, as an `only` fact shows (`step` is
    the original's numbering; the filter's input keeps its place before it)."""
    gone = original[step] if isinstance(original, list) and step < len(original) else {}
    source = (dependencies(gone) or [None])[0]
    if not isinstance(source, int):
        return [("reference", f"the original's step {step} reads no step")]
    kept = values[source] if source < len(values) else None
    if not _only_fact_says(kept, evidence):
        return [("reference", "no 'only' fact shows the reference without its attribute says the same objects")]
    return []


def _new_value_reference(semantic: list[Any], values: list[Any], step: int, evidence: dict[str, Any],
                         original: Any) -> list[Problem]:
    """A new filter value picks out one object (several, where only `exist` reads them)."""
    selected = values[step]
    op = str(semantic[step].get("operation", "")) if isinstance(semantic[step], dict) else ""
    read_by_exist = any(isinstance(s, dict) and s.get("operation") == "exist"
                        and step in dependencies(s) for s in semantic)
    if op.startswith("filter") and (not selected or (len(selected) != 1 and not read_by_exist)):
        return [("reference", f"step {step}'s new value picks out {len(selected)} objects, not one")]
    return []


def _new_name_reference(semantic: list[Any], values: list[Any], step: int, evidence: dict[str, Any],
                        original: Any) -> list[Problem]:
    """A new name denotes the one object the step refers to, as an `only` fact shows."""
    selected = values[step]
    if not isinstance(selected, set):  # verify rel, choose rel: the objects their argument names
        selected = set(listed_ids(str(semantic[step].get("argument", ""))))
    if not (len(selected) == 1 and any([str(i) for i in f.get("ids", [])] == sorted(selected)
                                       for f in _only_facts(evidence))):
        return [("reference", f"no 'only' fact shows that step {step}'s new name denotes one object")]
    return []


_REFERENCE_CHECKS: dict[str, Callable[[list[Any], list[Any], int, dict[str, Any], Any], list[Problem]]] = {
    "relation": _new_relation_reference,
    "added": _added_attribute_reference,
    "dropped": _dropped_attribute_reference,
    "attribute": _new_value_reference,
    "name": _new_name_reference,
}
