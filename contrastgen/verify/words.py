"""The verifier reads the words: a perturbed question, re-read into a query, must be the query
its evidence proves.

Why: evidence checked against the graph proves *some* question. Without this check, evidence
about "the person and the jeans" passes for "Is the person to the right of the boy wearing
jeans?". This reader knows nothing of the generator's templates or noun-phrase parser: its
frames are rules/readings.json, its nouns rules/lexicon/nouns.tsv read by `verify.nouns`. A
question it cannot read with certainty (no frame, two readings, a phrase it cannot place, a
definite reference that is not unique) is a failure, never a pass.

Rules a reading follows:
- a noun phrase is an optional determiner, attribute words, and a head noun (the longest
  1-3 word tail that is a noun of the table or a name in the graph); it denotes the graph's
  objects named by the head (forms, synonyms, kinds below it) that carry every attribute;
- a definite phrase ("the", "this", ...) and every phrase a relation, side or colour is asked
  of must denote exactly one object;
- a "no" about existence uses the loose denotation (whatever may be a kind of the noun), and
  fails where the noun table cannot decide absence.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import regex

from contrastgen.resources import rules_resource
from contrastgen.verify.graph import EvidenceProblem, GraphIndex
from contrastgen.verify.nouns import NounTable, load_nouns
from contrastgen.verify.query import execute_query
from contrastgen.verify.rules import VerifyRules, normalize_name


@dataclass(frozen=True)
class Frame:
    op: str
    lazy: regex.Pattern
    greedy: regex.Pattern  # the same frame splitting at the last place instead of the first


@dataclass(frozen=True, eq=False)  # hashed by identity: loaded once, a cache key
class ReadingRules:
    frames: tuple[Frame, ...]
    determiners: frozenset[str]
    definite: frozenset[str]
    not_attributes: frozenset[str]


@dataclass(frozen=True)
class Phrase:
    text: str
    determiner: str
    attributes: tuple[str, ...]
    head: str


@dataclass(frozen=True)
class Reading:
    op: str
    phrases: dict[str, Phrase]
    rel: str = ""


def _compile(pattern: str, data: dict[str, Any]) -> regex.Pattern:
    rels = "|".join(regex.escape(r).replace("\\ ", "\\s+") for r in data["relations"])
    full = pattern.replace("{TAIL}", data["tail"]).replace("{RELATIONS}", rels)
    return regex.compile(f"^{full}$", regex.IGNORECASE)


@functools.lru_cache(maxsize=1)
def load_reading_rules() -> ReadingRules:
    text = rules_resource("readings.json").read_text(encoding="utf-8")
    data = json.loads(text)
    frames = []
    for f in data["frames"]:
        p = f["pattern"]
        frames.append(Frame(f["op"], _compile(p, data), _compile(p.replace(".+?)", ".+)"), data)))
    return ReadingRules(tuple(frames), frozenset(data["determiners"]), frozenset(data["definite"]),
                        frozenset(data["not_attributes"]))


def _phrase(text: str, rules: ReadingRules, nouns: NounTable, graph: GraphIndex) -> Phrase | None:
    """The phrase with its head: a noun of the table if one ends it, else a name of the graph."""
    return _table_phrase(text, rules, nouns) or _split(text, rules, lambda head: bool(graph.ids_named([head])))


@functools.lru_cache(maxsize=65536)
def _table_phrase(text: str, rules: ReadingRules, nouns: NounTable) -> Phrase | None:
    """Cached: the same phrases recur across a run's perturbations."""
    return _split(text, rules, nouns.is_noun)


def _split(text: str, rules: ReadingRules, is_head: Callable[[str], bool]) -> Phrase | None:
    words = normalize_name(text).split()
    det = words[0] if words and words[0] in rules.determiners else ""
    body = words[1:] if det else words
    for n in (3, 2, 1):
        if len(body) < n:
            continue
        head = " ".join(body[-n:])
        if is_head(head):
            attributes = tuple(body[:-n])
            if any(a in rules.determiners or a in rules.not_attributes or "'" in a for a in attributes):
                return None  # a clause, a connective or a possessive ("the man's hat"), not an attribute
            return Phrase(text, det, attributes, head)
    return None


def read_question(text: str, graph: GraphIndex, nouns: NounTable | None = None,
                  rules: ReadingRules | None = None) -> list[Reading]:
    """Every distinct reading of the question (a caller wants exactly one)."""
    rules = rules or load_reading_rules()
    nouns = nouns or load_nouns()
    question = " ".join(text.strip().rstrip("?.! ").split())
    found: list[Reading] = []
    for frame in rules.frames:
        if frame.lazy.match(question) is None:  # the greedy form reads the same sentences
            continue
        for pattern in (frame.lazy, frame.greedy):
            m = pattern.match(question)
            groups = {k: v for k, v in m.groupdict().items() if v is not None}
            phrases = {k: _phrase(groups[k], rules, nouns, graph) for k in ("a", "b") if k in groups}
            if any(p is None for p in phrases.values()):
                continue
            reading = Reading(frame.op, phrases, " ".join(groups.get("rel", "").lower().split()))  # type: ignore[arg-type]
            if reading not in found:
                found.append(reading)
    return found


def denotation(phrase: Phrase, graph: GraphIndex, nouns: NounTable, *, loose: bool = False) -> set[str]:
    ids = graph.ids_named(nouns.names(phrase.head, loose=loose))
    return {i for i in ids if all(a in graph.attributes_of(i) for a in phrase.attributes)}


def _one(phrase: Phrase, graph: GraphIndex, nouns: NounTable) -> str:
    ids = denotation(phrase, graph, nouns)
    if len(ids) != 1:
        raise EvidenceProblem(f"{phrase.text!r} denotes {len(ids)} objects of the graph "
                              f"({', '.join(sorted(ids)) or 'none'}); the question needs exactly one")
    oid = next(iter(ids))
    opposites = attribute_opposites()
    clash = sorted(b for a in phrase.attributes for b in opposites.get(a, ()) if b in graph.attributes_of(oid))
    if clash:
        raise EvidenceProblem(f"{phrase.text!r}: object {oid} is also annotated {clash}, the opposite "
                              "(rules/attribute_opposites.tsv); the graph contradicts itself there")
    return oid


@functools.lru_cache(maxsize=1)
def attribute_opposites() -> dict[str, frozenset[str]]:
    """rules/attribute_opposites.tsv read both ways, with the verifier's own few lines."""
    text = rules_resource("attribute_opposites.tsv").read_text(encoding="utf-8")
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        cols = [c.strip().lower() for c in line.split("#", 1)[0].split("\t")]
        if len(cols) == 2 and all(cols):
            out.setdefault(cols[0], set()).add(cols[1])
            out.setdefault(cols[1], set()).add(cols[0])
    return {k: frozenset(v) for k, v in out.items()}


def _same(what: str, read: Any, claimed: Any) -> None:
    if str(read) != str(claimed):
        raise EvidenceProblem(f"the words give {what} {read!r}, the evidence {claimed!r}")


def check_words(question: str, query: dict[str, Any], claimed: str, graph: GraphIndex,
                vrules: VerifyRules, nouns: NounTable | None = None) -> None:
    """Raise EvidenceProblem unless the question's one reading is the evidence's query."""
    nouns = nouns or load_nouns()
    readings = read_question(question, graph, nouns)
    if not readings:
        raise EvidenceProblem(f"cannot read {question!r} with certainty (no frame of rules/readings.json "
                              "reads every phrase)")
    if len(readings) > 1:
        raise EvidenceProblem(f"{question!r} reads {len(readings)} ways ({', '.join(r.op for r in readings)})")
    r = readings[0]
    _same("the operation", r.op, query.get("op"))
    a, b = r.phrases.get("a"), r.phrases.get("b")
    if r.op in ("side", "color"):
        _same("the object", _one(a, graph, nouns), query.get("object"))
    elif r.op == "relation":
        _same("the subject", _one(a, graph, nouns), query.get("subject"))
        _same("the object", _one(b, graph, nouns), query.get("object"))
        _same("the relation", r.rel, normalize_name(query.get("rel", "")))
    elif r.op == "exists_related":
        _same("the object", _one(b, graph, nouns), query.get("object"))
        _same("the relation", r.rel, normalize_name(query.get("rel", "")))
        _check_existence(claimed, [a], graph, nouns, vrules, lambda names: execute_query(
            {**query, "names": names[0]}, graph, vrules))
    elif r.op == "exists_any":
        options = [p for p in (a, b) if p is not None]
        attributes = list(a.attributes) if len(options) == 1 else []
        _check_existence(claimed, options, graph, nouns, vrules, lambda names: execute_query(
            {**query, "names": names, "attributes": attributes}, graph, vrules))


def _check_existence(claimed: str, phrases: list[Phrase], graph: GraphIndex, nouns: NounTable,
                     vrules: VerifyRules, run: Callable[[list[list[str]]], str]) -> None:
    """Re-answer with the reader's own names; a "no" must survive every name that may denote."""
    says_no = normalize_name(claimed) == "no"
    for p in phrases:
        if p.attributes and len(phrases) > 1:
            raise EvidenceProblem(f"{p.text!r}: attributes in 'X or Y' are not read (does 'white' "
                                  "qualify both options, as GQA's programs have it, or one?)")
        if says_no and not nouns.absence_decidable(p.head):
            raise EvidenceProblem(f"the noun table cannot decide the absence of {p.head!r}")
    names = [sorted(nouns.names(p.head, loose=says_no)) for p in phrases]
    answer = run(names)
    _same("the answer", answer, normalize_name(claimed))
