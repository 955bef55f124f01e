"""The independent verifier: re-check every perturbation from its evidence and the scene graph.

Why it exists: a contrast set is only useful if its answers are right, and "the generator says
so" is not a proof. This module reads nothing but the evidence contract (docs/output-formats.md), the scene
graphs and plain data files in rules/ (relations.tsv, lexicon/colors.txt,
lexicon/unannotated_prone.txt expanded by lexicon/nouns.tsv, the id suffixes of
templates.json); it deliberately imports none of the generator's stages (language, scene,
templates, engine, run, writers), so a shared bug cannot make both sides agree.

For each perturbation it checks that
  1. every fact in `evidence.facts` holds in the graph (`verify.facts`),
  2. `evidence.query` re-executed on the graph (`verify.query`) gives `evidence.answer`, which
     equals the perturbation's `answer` and differs from the original record's answer,
  3. the presuppositions hold: definite references (side/colour questions) are unambiguous;
     no "no" or absence rests on an object annotators routinely leave out, or on a missing
     attribute; `symmetric` and a stated `opposite` agree with rules/relations.tsv; the
     evidence is about the atom the question changed,
  4. the record is well-formed: one record per (question, template), ranks 1..n without gaps,
     unique ids `<qid>_<template suffix><rank>`, evidence version 1, a change of one atom whose
     `from` differs from its `to`.
"""

from __future__ import annotations

import contextlib
import functools
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import regex

from contrastgen.answers import normalize_answer as _normalize_answer
from contrastgen.datasets.gqa import validate_scene_graph
from contrastgen.records import Failure, VerifyReport
from contrastgen.verify.clevr import clevr_problems
from contrastgen.verify.facts import check_fact
from contrastgen.verify.graph import EvidenceProblem, GraphIndex, object_id
from contrastgen.verify.groups import GROUP, group_problems
from contrastgen.verify.program import execute_program
from contrastgen.verify.program_edits import program_edit_problems
from contrastgen.verify.query import execute_query
from contrastgen.verify.rules import VerifyRules, load_rules, normalize_name
from contrastgen.verify.words import check_words

EVIDENCE_VERSION = 1
CHANGE_KINDS = frozenset({"object", "attribute", "relation"})
PERTURBATION_KINDS = ("contrast", "invariance")  # a changed answer, or one proven to stay
_DEFINITE_OPS = frozenset({"side", "color"})
_EXISTS_OPS = frozenset({"exists_any", "exists_related"})
_INDEX_CACHE_SIZE = 4096
_Built = TypeVar("_Built")  # what an IndexCache keeps of each graph
_GRAPH_ERRORS = (KeyError, TypeError, AttributeError, ValueError)  # what a malformed graph raises

# What kind of check a problem comes from, so a report over a million perturbations can say
# "12 fact, 3 unannotated" before listing them. Stable names: scripts may filter on them.
STRUCTURE = "structure"  # a record, perturbation or evidence is not shaped as docs/output-formats.md says
FACT = "fact"  # a fact in evidence.facts does not hold in the graph
QUERY = "query"  # the query has no answer on the graph (unknown op or object, unprovable 'no')
ANSWER = "answer"  # the re-computed, claimed, perturbation and original answers disagree
REFERENCE = "reference"  # a definite reference ("the X") is not shown to be unambiguous
UNANNOTATED = "unannotated"  # a 'no' rests on objects or attributes annotators often leave out
RELATION_TABLE = "relation_table"  # `symmetric` or `opposite` disagree with rules/relations.tsv
CHANGE = "change"  # the change is malformed, perturbs nothing, or is not what the evidence proves
IDS = "ids"  # ranks, question ids, one record per (question, template)
IMAGE = "image"  # the record's image is not among the scene graphs
TEXT = "text_mismatch"  # the question's words, re-read, are not the evidence's query (or unreadable)
PROGRAM = "program"  # the perturbation's program does not execute to its answer
CHECKS = (STRUCTURE, FACT, QUERY, ANSWER, REFERENCE, UNANNOTATED, RELATION_TABLE, CHANGE, TEXT, PROGRAM,
          IDS, IMAGE, GROUP)

Problem = tuple[str, str]  # (check, human-readable sentence)

# Answers come from a small vocabulary; caching keeps the regex work out of the per-perturbation path.
normalize_answer = functools.lru_cache(maxsize=65536)(_normalize_answer)


def verify_perturbation(perturbation: dict, original_answer: str, scene_graph: dict, *,
                        rules: VerifyRules | None = None) -> list[str]:
    """Every problem with one perturbation, as human-readable sentences; [] if it holds.

    A malformed scene graph raises InputError (bad input, not a failed check).
    """
    graph = index_graph("?", scene_graph)
    with _graph_errors_as_input_errors("?", scene_graph):
        found = _perturbation_problems(perturbation, original_answer, graph, rules or load_rules())
    return [message for _, message in found]


def verify_contrast_sets(records: Iterable[dict], scene_graphs: dict[str, dict], *,
                         rules: VerifyRules | None = None) -> VerifyReport:
    """Check every record and perturbation of a `contrast_sets.jsonl` stream against the graphs."""
    rules = rules or load_rules()
    indexes = IndexCache(scene_graphs)
    report = VerifyReport(checked=0, check_order=CHECKS)
    seen = SeenInStream()
    for n, record in enumerate(records, 1):
        checked = check_record(n, record, indexes, rules, seen)
        report.checked += checked.perturbations
        report.groups += checked.groups
        report.failures.extend(checked.failures)
    return report


@dataclass
class RecordChecked:
    """What checking one record found: its perturbations and groups counted, its failures."""

    perturbations: int = 0
    groups: int = 0
    failures: list[Failure] = field(default_factory=list)


class Seen(Protocol):
    """Whether a record's (question, template) or a perturbation's id was given earlier in the
    file: ids are unique across the whole file, whichever part of it a caller checks."""

    def record_repeated(self, n: int, key: tuple[str, str]) -> bool: ...

    def perturbation_repeated(self, n: int, i: int, pid: str) -> bool: ...


class SeenInStream:
    """`Seen` for a caller that checks every record, in file order: the keys and ids so far."""

    def __init__(self) -> None:
        self.records: set[tuple[str, str]] = set()
        self.perturbations: set[str] = set()

    def record_repeated(self, n: int, key: tuple[str, str]) -> bool:
        repeated = key in self.records
        self.records.add(key)
        return repeated

    def perturbation_repeated(self, n: int, i: int, pid: str) -> bool:
        repeated = pid in self.perturbations
        self.perturbations.add(pid)
        return repeated


def record_id(record: dict[str, Any], n: int) -> str:
    """The record's question id as its failures name it; `record n` where it has none."""
    qid = record.get("question_id")
    return str(qid) if isinstance(qid, (str, int)) and not isinstance(qid, bool) else f"record {n}"


def record_key(record: dict[str, Any], n: int) -> tuple[str, str]:
    """One record per (question, template): the key a repeat is found by."""
    return record_id(record, n), str(record.get("template"))


def image_of(record: dict[str, Any]) -> str | None:
    """The image id a record's graph is looked up by (None: it names none)."""
    image_id = record.get("image_id")
    return str(image_id) if isinstance(image_id, (str, int)) else None


def identity_checked(record: dict[str, Any], has_graph: bool) -> list[tuple[int, str]]:
    """(index from 1, id) of the perturbations whose ids are checked for repeats: those of a
    record whose graph is there and whose answer is a string, each an object with a string id."""
    if not has_graph or not isinstance(record.get("answer"), str):
        return []
    return [(i, p["question_id"]) for i, p in enumerate(record["perturbations"], 1)
            if isinstance(p, dict) and isinstance(p.get("question_id"), str)]


def check_record(n: int, record: Any, indexes: IndexCache, rules: VerifyRules, seen: Seen) -> RecordChecked:
    """Every failure of the `n`th record of a file (from 1) and its perturbations, in the order
    the report lists them."""
    out = RecordChecked()
    if not isinstance(record, dict):
        out.failures.append(Failure(f"record {n}", None, "record is not a JSON object", STRUCTURE))
        return out
    qid = record_id(record, n)
    perturbations = record.get("perturbations")
    if not isinstance(perturbations, list) or not perturbations:
        out.failures.append(Failure(qid, None, "record has no list of perturbations", STRUCTURE))
        return out
    out.perturbations = len(perturbations)
    problems = _record_problems(record, qid, seen.record_repeated(n, record_key(record, n)), rules)
    image_id = record.get("image_id")
    graph = indexes.get(str(image_id)) if isinstance(image_id, (str, int)) else None
    if graph is None:
        problems.append((IMAGE, f"image {image_id!r} is not among the scene graphs"))
    out.failures.extend(Failure(qid, None, message, check) for check, message in problems)
    if graph is None or not isinstance(record.get("answer"), str):
        return out
    for i, p in enumerate(perturbations, 1):
        pid = p.get("question_id") if isinstance(p, dict) else None
        pid = pid if isinstance(pid, str) else f"perturbation {i}"
        try:  # inline rather than a context manager: this is the per-perturbation hot path
            found = _perturbation_problems(p, record["answer"], graph, rules, record)
        except _GRAPH_ERRORS:
            validate_scene_graph(str(image_id), indexes.graph(str(image_id)))
            raise
        # CLEVR perturbations are program edits and are numbered as the program path's are
        template = "program" if record.get("dataset") == "clevr" else record.get("template")
        found += _identity_problems(p, qid, pid, template, lambda pid, i=i: seen.perturbation_repeated(n, i, pid),
                                    rules)
        if isinstance(p, dict) and "group" in p:  # `generate --groups`: its four cells, re-proven
            out.groups += 1
            found += group_problems(record, p, indexes.get, rules)
        out.failures.extend(Failure(qid, pid, message, check) for check, message in found)
    return out


def perturbation_problems(p: Any, record: dict[str, Any], graph: GraphIndex,
                          rules: VerifyRules) -> list[Problem]:
    """Every (check, sentence) problem of one perturbation of `record` (its question, answer and
    program): what `verify_contrast_sets` checks of each perturbation, ids aside, for callers that
    pair questions themselves (the GQA redundancy ladder's rungs)."""
    return _perturbation_problems(p, str(record.get("answer", "")), graph, rules, record)


class IndexCache(Generic[_Built]):
    """What a check builds of each image's graph (by default its `GraphIndex`), built on first
    use and kept for the most recent images only, so a 75k-image run stays small. A malformed
    graph is said by the GQA validator, not as the crash building it gave."""

    def __init__(self, scene_graphs: Mapping[str, dict[str, Any]],
                 build: Callable[[dict[str, Any]], _Built] = GraphIndex):
        self._graphs = scene_graphs
        self._build = build
        self._cache: OrderedDict[str, _Built] = OrderedDict()

    def graph(self, image_id: str) -> dict[str, Any]:
        """The graph itself, as given (for the validator to say what is wrong with it)."""
        return self._graphs[image_id]

    def get(self, image_id: str) -> _Built | None:
        hit = self._cache.get(image_id)
        if hit is not None:
            self._cache.move_to_end(image_id)
            return hit
        graph = self._graphs.get(image_id)
        if graph is None:
            return None
        with _graph_errors_as_input_errors(image_id, graph):
            built = self._build(graph)
        self._cache[image_id] = built
        if len(self._cache) > _INDEX_CACHE_SIZE:
            self._cache.popitem(last=False)
        return built


def index_graph(image_id: str, graph: dict[str, Any]) -> GraphIndex:
    """Index a graph; if it is malformed, let the GQA validator say how (InputError)."""
    with _graph_errors_as_input_errors(image_id, graph):
        return GraphIndex(graph)


@contextlib.contextmanager
def _graph_errors_as_input_errors(image_id: str, graph: Any) -> Iterator[None]:
    """Turn a crash on a malformed graph into the validator's InputError naming what is wrong.

    Graphs from `gqa.load_scene_graphs` are already validated and the index reads them lazily,
    so validating every graph up front would double a run's per-image cost for nothing; only
    when reading a graph fails do we run the validator, to report the cause instead of a
    KeyError.
    """
    try:
        yield
    except _GRAPH_ERRORS:
        validate_scene_graph(image_id, graph)
        raise


def _record_problems(record: dict[str, Any], qid: str, repeated: bool, rules: VerifyRules) -> list[Problem]:
    """One record per (question, template): two templates may perturb the same question."""
    problems = []
    template = record.get("template")
    if not isinstance(template, str):
        problems.append((STRUCTURE, "record has no string 'template'"))
    elif record.get("dataset") == "clevr":  # CLEVR records name their question family's file
        family = record.get("family") if isinstance(record.get("family"), dict) else {}
        if template != str(family.get("template_filename", "")).removesuffix(".json"):
            problems.append((STRUCTURE, f"template {template!r} is not the record's family file"))
    elif rules.template_suffixes and template not in rules.template_suffixes:
        problems.append((STRUCTURE, f"template {template!r} is not in rules/templates.json"))
    if repeated:
        problems.append((IDS, f"question {qid} has more than one record for template {template!r}"))
    if not isinstance(record.get("answer"), str):
        problems.append((STRUCTURE, "record has no original 'answer' to differ from"))
    if not isinstance(record.get("question"), str):
        problems.append((STRUCTURE, "record has no original 'question' as text"))
    ranks = [p.get("rank") if isinstance(p, dict) else None for p in record["perturbations"]]
    if not all(isinstance(r, int) and not isinstance(r, bool) for r in ranks):
        problems.append((IDS, f"ranks must be integers, got {ranks}"))
    elif sorted(ranks) != list(range(1, len(ranks) + 1)):
        problems.append((IDS, f"ranks must be 1..{len(ranks)} without gaps or repeats, got {sorted(ranks)}"))
    return problems


def _identity_problems(p: Any, qid: str, pid: str, template: Any, repeated: Callable[[str], bool],
                       rules: VerifyRules) -> list[Problem]:
    """Ids are `<qid>_<template suffix><rank>` (docs/output-formats.md) and unique across the whole file."""
    if not isinstance(p, dict) or not isinstance(p.get("question_id"), str):
        return [(IDS, "perturbation has no string 'question_id'")]
    problems = []
    if repeated(pid) or pid == qid:
        problems.append((IDS, f"perturbation question id {pid} is not unique"))
    rank = p.get("rank")
    suffix = rules.template_suffixes.get(template) if isinstance(template, str) else None
    if suffix is not None:
        expected = f"{qid}_{suffix}{rank}"
        if pid != expected:
            problems.append((IDS, f"perturbation question id {pid} should be {expected} "
                            f"(original id, _, template suffix {suffix!r}, rank)"))
    elif not rules.template_suffixes and not regex.fullmatch(rf"{regex.escape(qid)}_[a-z]+{rank}", pid):
        problems.append((IDS, f"perturbation question id {pid} should be {qid}_<suffix>{rank}"))
    return problems


def _perturbation_problems(p: Any, original_answer: str, graph: GraphIndex,
                           rules: VerifyRules, record: dict[str, Any] | None = None) -> list[Problem]:
    if not isinstance(p, dict):
        return [(STRUCTURE, "perturbation is not a JSON object")]
    problems = _change_problems(p.get("change"))
    kind = p.get("kind", "contrast")  # absent from files written before every perturbation said it
    if kind not in PERTURBATION_KINDS:
        problems.append((STRUCTURE, f"kind {kind!r} is not one of {list(PERTURBATION_KINDS)}"))
    answer = p.get("answer")
    if not isinstance(answer, str):
        problems.append((STRUCTURE, "perturbation has no string 'answer'"))
    evidence = p.get("evidence")
    if not isinstance(evidence, dict):
        return problems + [(STRUCTURE, "perturbation has no 'evidence' object")]
    if evidence.get("version") != EVIDENCE_VERSION:
        problems.append((STRUCTURE, f"evidence.version is {evidence.get('version')!r}; this verifier reads "
                        f"version {EVIDENCE_VERSION}"))
    query, facts, claimed = evidence.get("query"), evidence.get("facts"), evidence.get("answer")
    if not isinstance(facts, list) or not facts:
        problems.append((STRUCTURE, "evidence.facts must be a non-empty list (an answer needs a proof)"))
        facts = []
    for i, fact in enumerate(facts, 1):
        try:
            check_fact(fact, graph, rules)
        except EvidenceProblem as exc:
            problems.append((FACT, f"fact {i} does not hold: {exc}"))
    if not isinstance(claimed, str):
        problems.append((STRUCTURE, "evidence has no string 'answer'"))
    if not isinstance(query, dict):
        return problems + [(STRUCTURE, "evidence has no 'query' object")]
    if query.get("op") == "program":  # a program edit: its words, programs and answer, not a query
        return problems + program_edit_problems(record or {}, p, graph, rules)
    if query.get("op") == "clevr_program":  # a CLEVR-family edit: its own program, trace and words
        return problems + clevr_problems(record or {}, p, graph)
    if kind != "contrast":  # a template's edit is proven to change the answer, nothing else
        problems.append((STRUCTURE, f"a template's perturbation is a contrast, not {kind!r}"))
    try:
        computed = execute_query(query, graph, rules)
    except EvidenceProblem as exc:
        problems.append((QUERY, f"query {query.get('op')!r} has no answer: {exc}"))
        computed = None
    problems += _answer_problems(computed, claimed, answer, original_answer)
    problems += _presupposition_problems(query, facts, (claimed, answer), graph, rules)
    problems += _change_evidence_problems(p.get("change"), query, facts)
    problems += _word_problems(p.get("question"), query, claimed, graph, rules)
    if "semantic" in p:
        problems += _program_problems(p["semantic"], query, claimed, graph, rules)
    return problems


def _word_problems(question: Any, query: dict[str, Any], claimed: Any, graph: GraphIndex,
                   rules: VerifyRules) -> list[Problem]:
    """The words, re-read by the verifier's own reader, must ask the evidence's query."""
    if not isinstance(question, str) or not question.strip():
        return [(TEXT, "perturbation has no question text to read")]
    try:
        check_words(question, query, claimed if isinstance(claimed, str) else "", graph, rules)
    except EvidenceProblem as exc:
        return [(TEXT, f"the words do not ask what the evidence proves: {exc}")]
    return []


def _program_problems(semantic: Any, query: Any, claimed: Any, graph: GraphIndex,
                      rules: VerifyRules) -> list[Problem]:
    """The perturbation's edited program, executed independently, must give the claimed answer
    and ask what the evidence's query asks (the same operation, objects and relation)."""
    try:
        answer, asked = execute_program(semantic, graph, rules)
    except EvidenceProblem as exc:
        return [(PROGRAM, f"the program does not execute: {exc}")]
    if isinstance(claimed, str) and normalize_answer(answer) != normalize_answer(claimed):
        return [(PROGRAM, f"the program gives {answer!r}, the evidence claims {claimed!r}")]
    query = query if isinstance(query, dict) else {}
    differ = sorted(k for k, v in asked.items() if normalize_name(str(query.get(k, ""))) != normalize_name(v))
    if differ:
        return [(PROGRAM, f"the program asks {asked}, the evidence's query differs in {differ}")]
    return []


def _answer_problems(computed: str | None, claimed: Any, answer: Any, original: str) -> list[Problem]:
    problems = []
    norm = normalize_answer
    if computed is not None and isinstance(claimed, str) and norm(computed) != norm(claimed):
        problems.append((ANSWER, f"the query gives {computed!r} on the graph, but evidence.answer is {claimed!r}"))
    if isinstance(claimed, str) and isinstance(answer, str) and norm(claimed) != norm(answer):
        problems.append((ANSWER, f"evidence.answer {claimed!r} differs from the perturbation's answer {answer!r}"))
    if isinstance(answer, str) and norm(answer) == norm(original):
        problems.append((ANSWER, f"the answer {answer!r} equals the original answer {original!r}; "
                        "a contrast must change the answer"))
    return problems


def _change_problems(change: Any) -> list[Problem]:
    if not isinstance(change, dict):
        return [(CHANGE, "perturbation has no 'change' object")]
    problems = []
    kind = change.get("kind")
    if not isinstance(kind, str) or kind not in CHANGE_KINDS:
        problems.append((CHANGE, f"change.kind {kind!r} is not one of {sorted(CHANGE_KINDS)}"))
    before, after = change.get("from"), change.get("to")
    if not isinstance(before, str) or not isinstance(after, str):
        problems.append((CHANGE, "change needs string 'from' and 'to'"))
    elif normalize_name(before) == normalize_name(after):
        problems.append((CHANGE, f"change.from and change.to are both {before!r}; nothing was perturbed"))
    return problems


def _change_evidence_problems(change: Any, query: dict[str, Any], facts: list[Any]) -> list[Problem]:
    """The evidence must be about the atom the question changed, not some other question.

    An object's new name must be among the names the query (or an `only` fact, for a definite
    reference) looks for; a relation's new name must be the query's `rel`; an attribute's must
    be among the query's `attributes`. Where the evidence names nothing to compare with, the
    check does not apply (it cannot fail by absence of data it was never given).
    """
    if not isinstance(change, dict) or not isinstance(change.get("to"), str):
        return []
    kind, to = change.get("kind"), normalize_name(change["to"])
    if kind == "object":
        names = {normalize_name(n) for n in _query_names(query)}
        for f in facts:
            if isinstance(f, dict) and f.get("fact") == "only" and isinstance(f.get("names"), list):
                names.update(normalize_name(n) for n in f["names"] if isinstance(n, str))
        if names and to not in names:
            return [(CHANGE, f"change.to {to!r} is not among the names the evidence looks for {sorted(names)}")]
    elif kind == "relation" and isinstance(query.get("rel"), str):
        if normalize_name(query["rel"]) != to:
            return [(CHANGE, f"change.to {to!r} is not the query's relation {query['rel']!r}")]
    elif kind == "attribute" and isinstance(query.get("attributes"), list):
        attrs = {normalize_name(a) for a in query["attributes"] if isinstance(a, str)}
        if to not in attrs:
            return [(CHANGE, f"change.to {to!r} is not among the query's attributes {sorted(attrs)}")]
    return []


def _presupposition_problems(query: dict[str, Any], facts: list[Any], answers: tuple[Any, Any],
                             graph: GraphIndex, rules: VerifyRules) -> list[Problem]:
    """What must hold for the question to be fair, beyond the answer being computable."""
    problems = _symmetry_problems(query, facts, rules)
    op = query.get("op") if isinstance(query.get("op"), str) else None
    fact_dicts = [f for f in facts if isinstance(f, dict)]
    if op in _DEFINITE_OPS:
        problems += _definite_reference_problems(query, fact_dicts)
    for f in fact_dicts:
        if f.get("fact") == "absent" and isinstance(f.get("names"), list):
            prone = sorted(n for n in f["names"] if isinstance(n, str) and rules.is_unannotated_prone(n))
            if prone:
                problems.append((UNANNOTATED, f"an absent fact rests on unannotated-prone names {prone}: "
                                "their absence from a scene graph proves nothing"))
    says_no = any(isinstance(a, str) and normalize_answer(a) == "no" for a in answers)
    if op in _EXISTS_OPS and says_no:
        prone = sorted(n for n in _query_names(query) if rules.is_unannotated_prone(n))
        if prone:
            problems.append((UNANNOTATED, f"answer 'no' rests on unannotated-prone names {prone}: "
                            "they are often present but not annotated"))
    if op == "exists_any" and says_no and query.get("attributes"):
        present = sorted(graph.ids_named(_query_names(query)))
        if present:
            problems.append((UNANNOTATED, f"answer 'no' rests on objects {present} lacking attributes "
                            f"{query['attributes']}: a missing attribute annotation proves nothing"))
    if op == "relation" and "opposite" in query:
        rel = normalize_name(query.get("rel", ""))
        expected = rules.opposites.get(rel)
        given = normalize_name(query["opposite"])
        if expected != given:
            problems.append((RELATION_TABLE, f"query opposite {given!r} is not the opposite of {rel!r} in "
                            f"rules/relations.tsv ({expected!r})"))
    return problems


def _symmetry_problems(query: dict[str, Any], facts: list[Any], rules: VerifyRules) -> list[Problem]:
    """`symmetric` must follow rules/relations.tsv, or a reverse edge proves the wrong answer.

    A query that calls "on" symmetric would answer "Is there a table on the cup?" with yes from
    the edge cup -on-> table; one that calls "near" asymmetric would answer no while the graph
    has the edge the other way round. A not_related fact for a symmetric relation must likewise
    rule out both directions.
    """
    problems = []
    parts = [("query", query)] if query.get("op") == "exists_related" else []
    parts += [(f"not_related fact {i}", f) for i, f in enumerate(facts, 1)
              if isinstance(f, dict) and f.get("fact") == "not_related"]
    for what, part in parts:
        rel, flag = part.get("rel"), part.get("symmetric")
        if not isinstance(rel, str) or not isinstance(flag, bool):
            continue  # reported by the executor / fact check
        symmetric = normalize_name(rel) in rules.symmetric
        if flag != symmetric and (what == "query" or symmetric):
            problems.append((RELATION_TABLE, f"{what} says {rel!r} is {'' if flag else 'not '}symmetric; "
                            f"rules/relations.tsv says it is {'' if symmetric else 'not '}symmetric"))
    return problems


def _definite_reference_problems(query: dict[str, Any], facts: list[dict[str, Any]]) -> list[Problem]:
    """'the X' presupposes exactly one X: an `only` fact must name the queried object alone."""
    try:
        oid = object_id(query, "object", "query")
    except EvidenceProblem:
        return []  # already reported by the executor
    for f in facts:
        ids = f.get("ids")
        if f.get("fact") == "only" and isinstance(ids, list) and [str(i) for i in ids] == [oid]:
            return []
    return [(REFERENCE, f"no 'only' fact shows object {oid} is the one object its name refers to "
            "(the definite reference may be ambiguous)")]


def _query_names(query: dict[str, Any]) -> list[str]:
    names = query.get("names")
    if not isinstance(names, list):
        return []
    flat: list[Any] = []
    for n in names:
        flat.extend(n if isinstance(n, list) else [n])
    return [n for n in flat if isinstance(n, str)]
