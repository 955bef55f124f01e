"""Re-proving every caption and every negative of a `captions.jsonl`, independently of the generator.

For each record it checks, with its own code and the rules files only:
1. the caption's words read back (`caption_reading`) into exactly the evidence's structure, and
   so do each negative's;
2. the caption is true on the graph: objects the nouns name carry the attributes, the relation's
   edge is there and not contradicted; for "the X", X may denote exactly one object;
3. each negative is false on the graph: some phrase fits no object the noun may denote (each
   such object provably lacks the attribute: an opposite, its one colour, or CLEVR's one value of
   the type), or no pair of objects the phrases may denote stands in the relation (the opposite
   edge, or the converse of a relation that cannot hold both ways); nothing rests on a noun
   annotators leave out (unannotated-prone) or too vague to list;
4. each negative is its kind's change of the caption (a replaced noun, swapped phrases, ...),
   a swap is never over a symmetric relation, and no phrase it changes says a colour of a
   people noun (said of people, a colour reads as their skin);
5. every fact of every evidence holds in the graph;
6. ids are the caption's image and text hashed, unique, and the evidence version is known.

What a noun may denote is read from rules/lexicon (`verify.nouns`: forms, synonyms, kinds below
it, every sense's kinds, people who cross-classify, both ways: an object listed as a man may be
the boy, since "man" may denote a boy) plus the kinds it is a kind of and every name
of a noun it may denote (`caption_rules`), and any object whose name the table cannot place may
be anything. A CLEVR
scene (`"dataset": "clevr"`) is closed: its shapes are all it has.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from itertools import product
from typing import Any

from contrastgen.records import Failure, VerifyReport
from contrastgen.verify.caption_reading import CaptionWords, read_caption
from contrastgen.verify.caption_rules import CaptionRules, load_caption_rules
from contrastgen.verify.checker import IndexCache
from contrastgen.verify.facts import check_fact
from contrastgen.verify.graph import EvidenceProblem, GraphIndex
from contrastgen.verify.nouns import NounTable, load_nouns
from contrastgen.verify.rules import VerifyRules, load_rules, normalize_name

CAPTION_EVIDENCE_VERSION = 1
KINDS = ("replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att", "add_obj", "add_att",
         "aro_relation", "aro_attribute")
PROOFS = ("empty_phrase", "no_pair", "referents")
_HASH_CHARS = 10

STRUCTURE = "structure"
READING = "text_mismatch"  # the words do not read (once) as the evidence's structure
TRUE = "caption_not_true"
FALSE = "negative_not_false"
CHANGE = "change"
SYMMETRIC = "symmetric_swap"
FACT = "fact"
IDS = "ids"
IMAGE = "image"
PERSON_COLOUR = "person_colour"
CHECKS = (STRUCTURE, READING, TRUE, FALSE, CHANGE, PERSON_COLOUR, SYMMETRIC, FACT, IDS, IMAGE)


class CaptionGraph:
    """One graph as the caption checks read it."""

    def __init__(self, graph: dict[str, Any], vrules: VerifyRules, crules: CaptionRules, nouns: NounTable):
        self.g = GraphIndex(graph)
        self.vrules, self.crules, self.nouns = vrules, crules, nouns
        self.clevr = graph.get("dataset") == "clevr"
        names = {oid: normalize_name(o["name"]) for oid, o in self.g.objects.items()}
        self.names = names
        self._vague = set() if self.clevr else {oid for oid, n in names.items() if not nouns.absence_decidable(n)}
        edge_names = {normalize_name(r["name"]) for o in self.g.objects.values() for r in o.get("relations") or ()}
        relations = set(vrules.opposites) | set(vrules.symmetric) | set(crules.asymmetric) | edge_names
        if self.clevr:
            attributes = frozenset(crules.clevr_types)
            is_noun = crules.clevr_shapes.__contains__
        else:
            attributes = (vrules.attribute_words | frozenset(crules.color_terms) | crules.typed_attributes
                          | frozenset(vrules.attribute_opposites))
            graph_names = set(names.values())
            is_noun = lambda w: nouns.is_noun(w) or w in graph_names  # noqa: E731
        self.words = CaptionWords(is_noun, attributes, frozenset(relations))

    # -- what nouns denote ---------------------------------------------------------------------

    def named(self, noun: str) -> set[str]:
        """Objects the noun certainly names (a positive's witnesses)."""
        if self.clevr:
            value = self.crules.clevr_shapes.get(noun)
            return {oid for oid, n in self.names.items() if value and (n == value or self.crules.clevr_category.get(n) == value)}
        return self.g.ids_named(self.nouns.names(noun))

    def may_be(self, noun: str) -> set[str] | None:
        """Objects the noun may denote, or None where they cannot all be known."""
        if self.clevr:
            return self.named(noun) if noun in self.crules.clevr_shapes else None
        if not self.nouns.absence_decidable(noun) or self.vrules.is_unannotated_prone(noun):
            return None
        names = self.nouns.names(noun, loose=True) | self.crules.hypernyms.get(noun, frozenset())
        synonyms = self.crules.synonyms
        names |= {s for n in names for s in synonyms.get(n, ())}
        names |= _people_who_may_be(noun, self.nouns, self.crules)
        return self.g.ids_named(names) | self._vague

    def is_person(self, noun: str) -> bool:
        """A people noun or a group of people."""
        return not self.clevr and self.nouns.canonical(noun) in (self.crules.people | self.crules.person_kinds)

    def is_colour(self, attribute: str) -> bool:
        return attribute in self.crules.color_terms

    # -- attributes and relations --------------------------------------------------------------

    def has_attribute(self, oid: str, attribute: str) -> bool:
        """Listed, and not contradicted by an opposite the graph lists too."""
        attrs = self.g.attributes_of(oid)
        return attribute in attrs and not (attrs & self.vrules.attribute_opposites.get(attribute, frozenset()))

    def exclusion(self, oid: str, attribute: str) -> tuple[str, str] | None:
        """(why, the value) the object provably lacks the attribute, or None."""
        attrs = self.g.attributes_of(oid)
        if attribute in attrs:
            return None
        if self.clevr:
            kind = self.crules.clevr_types.get(attribute)
            have = [a for a in attrs if self.crules.clevr_types.get(a) == kind] if kind else []
            return ("closed", have[0]) if len(have) == 1 else None
        opposite = sorted(attrs & self.vrules.attribute_opposites.get(attribute, frozenset()))
        if opposite:
            return "opposite", opposite[0]
        if attribute in self.crules.basic_colors:
            colors = [a for a in attrs if a in self.crules.color_terms or a in self.vrules.colors]
            if len(colors) == 1 and colors[0] in self.crules.color_terms \
                    and attribute not in self.crules.color_terms[colors[0]]:
                return "color", colors[0]
        return None

    def antisymmetric(self, rel: str) -> bool:
        return rel in self.vrules.opposites or rel in self.crules.asymmetric

    def relation_false(self, s: str, rel: str, o: str) -> tuple[str, str, str] | None:
        """The edge showing `s rel o` does not hold, or None."""
        if s == o or self.g.has_edge(s, rel, o):
            return None
        opposite = self.vrules.opposites.get(rel)
        if opposite is not None and self.g.has_edge(s, opposite, o):
            return s, opposite, o
        if self.antisymmetric(rel) and self.g.has_edge(o, rel, s):
            return o, rel, s
        return None

    def relation_holds(self, s: str, rel: str, o: str) -> bool:
        """The edge is there and the graph does not also deny it."""
        if not self.g.has_edge(s, rel, o):
            return False
        opposite = self.vrules.opposites.get(rel)
        return not ((opposite is not None and self.g.has_edge(s, opposite, o))
                    or (self.antisymmetric(rel) and self.g.has_edge(o, rel, s)))

    # -- truth and falsity ---------------------------------------------------------------------

    def _referents(self, reading: dict[str, Any]) -> list[str]:
        out = []
        for p in reading["phrases"]:
            may = self.may_be(p["noun"])
            if may is None or len(may) != 1:
                raise EvidenceProblem(f"'the {p['noun']}' presupposes one object; the graph has "
                                      f"{'no list of them' if may is None else sorted(may)}")
            out.append(next(iter(may)))
        if len(set(out)) != len(out):
            raise EvidenceProblem("two phrases name the same object")
        return out

    def true(self, reading: dict[str, Any]) -> None:
        phrases = reading["phrases"]
        definite = phrases[0]["determiner"] == "the"
        if definite:
            options = [[r] for r in self._referents(reading)]
        else:
            options = [sorted(self.named(p["noun"])) for p in phrases]
        options = [[o for o in ids if not p["attribute"] or self.has_attribute(o, p["attribute"])]
                   for p, ids in zip(phrases, options, strict=True)]
        for combo in product(*options):
            if len(set(combo)) != len(combo):
                continue
            if reading["shape"] != "relation" or self.relation_holds(combo[0], reading["relation"], combo[1]):
                return
        raise EvidenceProblem("no objects of the graph make the caption true")

    def false(self, reading: dict[str, Any]) -> None:
        phrases = reading["phrases"]
        if phrases[0]["determiner"] == "the":
            refs = self._referents(reading)
            if reading["shape"] == "relation":
                if self.relation_false(refs[0], reading["relation"], refs[1]) is None:
                    raise EvidenceProblem(f"the graph does not show that {refs[0]} is not "
                                          f"{reading['relation']} {refs[1]}")
                return
            if not any(p["attribute"] and self.exclusion(o, p["attribute"]) for p, o in zip(phrases, refs, strict=True)):
                raise EvidenceProblem("the graph does not show that either object lacks its attribute")
            return
        fitting = []
        for p in phrases:
            may = self.may_be(p["noun"])
            if may is None:
                fitting.append(None)
                continue
            fits = {o for o in may if not (p["attribute"] and self.exclusion(o, p["attribute"]))}
            if not fits:
                return  # no object fits this phrase
            fitting.append(fits)
        if reading["shape"] == "relation" and None not in fitting:
            subjects, objects = fitting
            if not subjects & objects and all(self.relation_false(s, reading["relation"], o)
                                              for s, o in product(subjects, objects)):
                return
        raise EvidenceProblem("the graph does not show the negative false: some objects may fit "
                              "every phrase (or a noun's objects cannot all be known), and the "
                              "relation is not shown absent between them")

    # -- facts ---------------------------------------------------------------------------------

    def check_fact(self, fact: Any) -> None:
        if not isinstance(fact, dict):
            raise EvidenceProblem("fact is not an object")
        kind = fact.get("fact")
        if kind == "may_be":
            noun, ids = fact.get("noun"), fact.get("ids")
            if not isinstance(noun, str) or not isinstance(ids, list):
                raise EvidenceProblem("may_be fact needs a noun and a list of ids")
            actual = self.may_be(normalize_name(noun))
            if actual is None or actual != {str(i) for i in ids}:
                raise EvidenceProblem(f"may_be fact: {noun!r} may denote "
                                      f"{'objects no graph lists in full' if actual is None else sorted(actual)}, "
                                      f"not {sorted(map(str, ids))}")
        elif kind == "not_attribute":
            oid, attribute = str(fact.get("id")), normalize_name(fact.get("attribute", ""))
            self.g.obj(oid)
            found = self.exclusion(oid, attribute)
            if found is None or list(found) != [fact.get("because"), fact.get("value")]:
                raise EvidenceProblem(f"not_attribute fact: object {oid} is not shown to lack {attribute!r} "
                                      f"because {fact.get('because')} {fact.get('value')!r}")
        elif kind == "not_relation":
            s, o = str(fact.get("subject")), str(fact.get("object"))
            rel = normalize_name(fact.get("relation", ""))
            by = fact.get("because") if isinstance(fact.get("because"), dict) else {}
            found = self.relation_false(s, rel, o)
            claimed = (str(by.get("subject")), normalize_name(by.get("name", "")), str(by.get("object")))
            if found is None or found != claimed:
                raise EvidenceProblem(f"not_relation fact: {s} {rel} {o} is not shown false by the edge {claimed}")
        else:
            check_fact(fact, self.g, self.vrules)


_PEOPLE_WHO_MAY_BE: dict[tuple[str, int, int], frozenset[str]] = {}  # per process: the rules are loaded once


def _people_who_may_be(noun: str, nouns: NounTable, crules: CaptionRules) -> frozenset[str]:
    """Every name of a people noun an object may be listed under and still be, or hold, what the
    people noun `noun` names: one that may denote it ("man" may denote a boy), and any group or
    people noun of no known gender or age ("crowd", "worker"), which may be anyone; for such a
    noun itself, every people noun. Empty for any other noun."""
    key = (noun, id(nouns), id(crules))
    found = _PEOPLE_WHO_MAY_BE.get(key)
    if found is None:
        c = nouns.canonical(noun)
        kinds = crules.person_kinds | crules.people
        others: frozenset[str] = frozenset()
        if c is not None and c in kinds:
            if c not in crules.people:  # a group, or a person of no known gender or age: anyone
                others = kinds - {c}
            else:
                forms = crules.synonyms.get(noun, frozenset()) | {noun, c}
                others = frozenset(p for p in crules.people if p != c and forms & nouns.names(p, loose=True)) \
                    | (kinds - crules.people)
        found = frozenset(name for p in others for name in crules.synonyms.get(p, frozenset({p})))
        if len(_PEOPLE_WHO_MAY_BE) < 1 << 16:
            _PEOPLE_WHO_MAY_BE[key] = found
    return found


def person_colour(graph: CaptionGraph, pos: dict[str, Any], neg: dict[str, Any]) -> str | None:
    """A phrase of the negative that puts a colour on a people noun the caption did not say it
    of ("a brown chair" -> "a brown woman"), or None."""
    said = {(p["noun"], p["attribute"]) for p in pos["phrases"]}  # a swap moves a phrase, colour and all
    for q in neg["phrases"]:
        if (q["noun"], q["attribute"]) not in said and q["attribute"] and graph.is_colour(q["attribute"]) \
                and graph.is_person(q["noun"]):
            return f"the negative says the colour {q['attribute']!r} of the person noun {q['noun']!r}"
    return None


def _reading_of(text: Any, claimed: Any, graph: CaptionGraph) -> dict[str, Any]:
    if not isinstance(text, str):
        raise EvidenceProblem("no caption text")
    readings = read_caption(text, graph.words)
    if not readings:
        raise EvidenceProblem(f"cannot read {text!r} as a caption")
    if len(readings) > 1:
        raise EvidenceProblem(f"{text!r} reads {len(readings)} ways")
    if readings[0] != claimed:
        raise EvidenceProblem(f"the words of {text!r} read as {readings[0]}, the evidence says {claimed}")
    return readings[0]


def _same_except(a: dict[str, Any], b: dict[str, Any], key: str) -> bool:
    return {k: v for k, v in a.items() if k not in (key, "determiner")} == \
        {k: v for k, v in b.items() if k not in (key, "determiner")}


def change_problem(kind: str, pos: dict[str, Any], neg: dict[str, Any]) -> str | None:
    """Why the negative is not the kind's change of the positive, or None."""
    definite = pos["phrases"][0]["determiner"] == "the"
    if (kind in _ARO_KINDS) != definite:
        return "ARO's kinds, and only they, say 'the'"
    check = _CHANGES.get(kind)
    if check is None:
        return f"unknown kind {kind!r}"
    return check(kind, pos, neg)


_ARO_KINDS = ("aro_relation", "aro_attribute")


def _same_frame(pos: dict[str, Any], neg: dict[str, Any]) -> bool:
    """The same shape, relation and number of phrases: only what the kind changes may differ."""
    return pos["shape"] == neg["shape"] and pos.get("relation") == neg.get("relation") \
        and len(pos["phrases"]) == len(neg["phrases"])


def _replaced_in_phrase(kind: str, pos: dict[str, Any], neg: dict[str, Any]) -> str | None:
    """replace_obj, replace_att: one phrase's noun (attribute) is another, all else the same."""
    pp, np_ = pos["phrases"], neg["phrases"]
    key = "noun" if kind == "replace_obj" else "attribute"
    changed = [i for i, (a, b) in enumerate(zip(pp, np_, strict=False)) if a != b]
    if not _same_frame(pos, neg) or len(changed) != 1 or not _same_except(pp[changed[0]], np_[changed[0]], key) \
            or pp[changed[0]][key] == np_[changed[0]][key] or not np_[changed[0]][key]:
        return f"not one phrase's {key} replaced"
    return None


def _replaced_relation(kind: str, pos: dict[str, Any], neg: dict[str, Any]) -> str | None:
    if pos["shape"] != "relation" or neg["shape"] != "relation" or pos["phrases"] != neg["phrases"] \
            or pos["relation"] == neg["relation"]:
        return "not the relation replaced"
    return None


def _swapped_phrases(kind: str, pos: dict[str, Any], neg: dict[str, Any]) -> str | None:
    """swap_obj, aro_relation: the relation's two phrases exchanged."""
    pp, np_ = pos["phrases"], neg["phrases"]
    if pos["shape"] != "relation" or not _same_frame(pos, neg) or np_ != pp[::-1] or pp[0] == pp[1]:
        return "not the two phrases swapped"
    return None


def _swapped_attributes(kind: str, pos: dict[str, Any], neg: dict[str, Any]) -> str | None:
    """swap_att, aro_attribute: two phrases' attributes exchanged, their nouns kept."""
    pp, np_ = pos["phrases"], neg["phrases"]
    if not _same_frame(pos, neg) or len(pp) != 2 or pp[0]["attribute"] == pp[1]["attribute"] \
            or [p["noun"] for p in pp] != [p["noun"] for p in np_] \
            or [p["attribute"] for p in np_] != [p["attribute"] for p in pp][::-1]:
        return "not the two attributes swapped"
    return None


_CHANGES: dict[str, Callable[[str, dict[str, Any], dict[str, Any]], str | None]] = {
    "replace_obj": _replaced_in_phrase,
    "replace_att": _replaced_in_phrase,
    "replace_rel": _replaced_relation,
    "swap_obj": _swapped_phrases,
    "aro_relation": _swapped_phrases,
    "swap_att": _swapped_attributes,
    "aro_attribute": _swapped_attributes,
    "add_obj": lambda kind, pos, neg: _added_object(pos, neg),
    "add_att": lambda kind, pos, neg: _added_attribute(pos["phrases"], neg["phrases"], _same_frame(pos, neg)),
}


def _added_object(pos: dict[str, Any], neg: dict[str, Any]) -> str | None:
    """An add_obj negative is the base object's phrase "and" a bare noun. Its caption is the base
    itself (SugarCrepe's form) or the base "and" another bare noun (the matched form: the caption
    is re-proven true as every caption is, which proves its added object present)."""
    pp, np_ = pos["phrases"], neg["phrases"]
    if neg["shape"] != "pair" or len(np_) != 2 or np_[1]["attribute"]:
        return "the negative is not a bare noun added to a phrase"
    if pos["shape"] == "object" and np_[0] == pp[0]:
        return None
    if pos["shape"] == "pair" and pp[0] == np_[0] and not pp[1]["attribute"] and pp[1]["noun"] != np_[1]["noun"]:
        return None
    return "not the caption's object with a noun added (nor its base with another noun added)"


def _added_attribute(pp: list[dict[str, Any]], np_: list[dict[str, Any]], same_frame: bool) -> str | None:
    """An add_att negative is the base with an attribute on one bare phrase. Its caption is the
    base itself (SugarCrepe's form) or the base with another attribute on the same phrase (the
    matched form)."""
    changed = [i for i, (a, b) in enumerate(zip(pp, np_, strict=False)) if a != b]
    if not same_frame or len(changed) != 1 or not np_[changed[0]]["attribute"] \
            or not _same_except(pp[changed[0]], np_[changed[0]], "attribute"):
        return "not an attribute added to one bare phrase of the caption's base"
    return None


def caption_id(image_id: str, text: str) -> str:
    return f"{image_id}_{hashlib.sha1(text.encode('utf-8')).hexdigest()[:_HASH_CHARS]}"


def _version(evidence: Any) -> dict[str, Any]:
    if not isinstance(evidence, dict) or evidence.get("version") != CAPTION_EVIDENCE_VERSION:
        raise EvidenceProblem(f"evidence version must be {CAPTION_EVIDENCE_VERSION}")
    if not isinstance(evidence.get("facts"), list) or not isinstance(evidence.get("reading"), dict):
        raise EvidenceProblem("evidence needs a 'reading' and a list of 'facts'")
    return evidence


def verify_captions(records: Iterable[Any], scene_graphs: Mapping[str, dict[str, Any]]) -> VerifyReport:
    """Check every caption and negative of a captions.jsonl stream against the graphs."""
    vrules, crules, nouns = load_rules(), load_caption_rules(), load_nouns()
    report = VerifyReport(checked=0, check_order=CHECKS)
    seen: set[str] = set()
    graphs = IndexCache(scene_graphs, lambda graph: CaptionGraph(graph, vrules, crules, nouns))
    for n, record in enumerate(records, 1):
        rid = str(record.get("id")) if isinstance(record, dict) else f"record {n}"
        if not isinstance(record, dict) or not isinstance(record.get("negatives"), list):
            report.failures.append(Failure(f"record {n}", None, "record is not a caption with a list of negatives", STRUCTURE))
            continue
        report.checked += 1 + len(record["negatives"])
        image_id = str(record.get("image_id"))
        graph = graphs.get(image_id)
        if graph is None:
            report.failures.append(Failure(rid, None, f"image {image_id!r} is not among the scene graphs", IMAGE))
            continue
        report.failures.extend(_record_failures(record, rid, image_id, graph, seen))
    return report


def _once(rid: str, what: str, pid: str | None, seen: set[str], fail: Callable[[str | None, str, str], None]) -> None:
    """Ids name one caption or negative across the whole file."""
    if rid in seen:
        fail(pid, IDS, f"{what} id {rid!r} is given twice")
    seen.add(rid)


def _read(evidence: Any, text: Any, graph: CaptionGraph, pid: str | None,
          fail: Callable[[str | None, str, str], None]) -> tuple[dict[str, Any], Any] | None:
    """The evidence (its version checked) and the words read back into its structure; None, with
    the failure recorded, where either cannot be read."""
    try:
        checked = _version(evidence)
        return checked, _reading_of(text, checked["reading"], graph)
    except EvidenceProblem as exc:
        fail(pid, READING if "read" in str(exc) else STRUCTURE, str(exc))
        return None


def _record_failures(record: dict[str, Any], rid: str, image_id: str, graph: CaptionGraph,
                     seen: set[str]) -> list[Failure]:
    out: list[Failure] = []

    def fail(pid: str | None, check: str, message: str) -> None:
        out.append(Failure(rid, pid, message, check))

    text = record.get("caption")
    if not isinstance(text, str) or rid != caption_id(image_id, text):
        fail(None, IDS, f"id {rid!r} is not the image and the caption's hash ({caption_id(image_id, str(text))})")
    _once(rid, "caption", None, seen, fail)
    read = _read(record.get("evidence"), text, graph, None, fail)
    if read is None:
        return out
    evidence, pos = read
    _run(lambda: graph.true(pos), fail, None, TRUE)
    for fact in evidence["facts"]:
        _run(lambda f=fact: graph.check_fact(f), fail, None, FACT)
    for i, neg in enumerate(record["negatives"], 1):
        if not isinstance(neg, dict):
            fail(f"negative {i}", STRUCTURE, "negative is not an object")
            continue
        kind = neg.get("kind")
        pid = str(neg.get("id", f"negative {i}"))
        if kind not in KINDS or pid != f"{rid}_{kind}":
            fail(pid, IDS, f"negative id {pid!r} is not the caption's id and its kind ({kind!r})")
        _once(pid, "negative", pid, seen, fail)
        read = _read(neg.get("evidence"), neg.get("caption"), graph, pid, fail)
        if read is None:
            continue
        nev, reading = read
        if nev.get("proof") not in PROOFS:
            fail(pid, STRUCTURE, f"unknown proof {nev.get('proof')!r}")
        problem = change_problem(str(kind), pos, reading) if kind in KINDS else None
        if problem:
            fail(pid, CHANGE, f"{kind}: {problem}")
        colour = person_colour(graph, pos, reading)
        if colour:
            fail(pid, PERSON_COLOUR, f"{kind}: {colour}")
        if kind in ("swap_obj", "aro_relation") and pos.get("relation") in graph.vrules.symmetric:
            fail(pid, SYMMETRIC, f"a swap over the symmetric relation {pos['relation']!r} may be true")
        _run(lambda r=reading: graph.false(r), fail, pid, FALSE)
        for fact in nev["facts"]:
            _run(lambda f=fact: graph.check_fact(f), fail, pid, FACT)
    return out


def _run(check: Any, fail: Any, pid: str | None, kind: str) -> None:
    try:
        check()
    except EvidenceProblem as exc:
        fail(pid, kind, str(exc))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        fail(pid, STRUCTURE, f"malformed evidence ({exc!r})")
