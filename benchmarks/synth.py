"""GQA-shaped synthetic questions and scene graphs, at any size.

Why: GQA's scene graphs for the validation set are 100 MB and its questions a million records; the
engine's speed, memory and determinism must be measured at that scale, and property tests need
graphs with known answers. This module produces data in exactly GQA v1.2's format (programs with
object ids, token annotations) whose statistics resemble GQA's: ~16 objects per image with names
drawn Zipf-like from the Visual Genome vocabulary, several attributes per object, spatial relations
written in both directions and consistent with the boxes, and ~13 questions per image of which
~22% belong to the six contrast-set templates (`template_family`). Every answer is computed from
the graph, under the object ids the program names (as GQA does, even where the words are
ambiguous).

Real GQA is not clean, and neither is this data (`Noise`; `CLEAN` turns all of it off):

- graphs: 15% of images have one object duplicated (same name and attributes, a box within 4% of
  the original's); 1 in 200 spatially related pairs also gets the contradicting edge (both "to the
  left of" and "to the right of", or both "behind" and "in front of", each written both ways); 20%
  of images have "to the left of" / "to the right of" between all pairs with distinct box centres;
  a quarter of the images with people have a second person, who often wears the same garment;
- questions: 10% have no `semantic`, `semanticStr` or `annotations` (some datasets strip them).

The question mix (weights in `QUESTION_KINDS`; measured on 19,500 questions, seed 7): the six
templates' kinds are 22% of the questions with a program (side, color, exist-or, exist-near,
relation; `template_family` reads the family off the program). The rest are GQA's other kinds
(relO, relS, material, verify and choose colour, exist-that, exist-and, relChooser, place,
weather) and two kinds that *look* like templates but are not: non-spatial verify-rel questions
(6%; "Is the man wearing a hat?", half of them with a mostly spatial modifier on X: "Is the man
near the catcher wearing jeans?", whose program ends in `verify rel: jeans,wearing,o`) and
shared-attribute or-questions (2%; "Are there any tables or chairs that are white?"). Within the
template kinds, ~28% of relation and colour questions and ~20% of side and near questions qualify
X or Y with a modifier, written as GQA writes them (the modifier becomes a `relate` step, the asked
relation or query comes last): participial ("the man wearing a hat", "the cup on the table"),
relative clauses ("the cup that is on the table", "the man who is holding the umbrella", "the
shirt the boy is wearing"), possessives ("the man's hat": `select: man->relate: hat,wearing,o`;
"the girl's hair": `select: girl->relate: hair,of,s`). ~7% of relation, colour and near
questions end in "in this picture" (and a third of the or-questions, as GQA phrases them). With
modifiers on both X and Y the program follows X's chain and names Y by id, as GQA drops the other
slot's qualifiers. A tenth of the relation questions are drawn from pairs where X or Y is not the
only object of its name, so ~7% of them name an ambiguous "the X" (GQA asks "Is the man to the
left of the car?" in an image with two men; its program picks one by id).

The question builders (`ask_*`) take explicit object ids so that `benchmarks/make_sample.py` can
reuse them for the hand-designed sample; the `_pick_*` functions choose ids at random for bulk data.
Generation is sequential from one `random.Random(seed)`, so the output depends only on
(n_images, n_questions, seed, noise), and `write_dataset` streams image by image so that a million
questions never sit in memory twice.
"""

from __future__ import annotations

import contextlib
import json
import math
import multiprocessing
import os
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from contrastgen.datasets.gqa import semantic_str
from contrastgen.files.atomic import atomic_file

Graph = dict[str, Any]
Question = dict[str, Any]

# Share of an image's width (height) by which two box centres must differ before a left/right
# (above/below) relation is written; GQA leaves near-overlapping pairs unrelated too.
SPATIAL_MARGIN = 0.05
# Objects whose centre lies within this share of the width from the middle get no side question:
# GQA does not ask "On which side is the X?" when the answer is unclear.
CENTER_BAND = 0.1


@dataclass(frozen=True)
class Noise:
    """How unclean the generated data is; each rate is a probability (see the module docstring)."""

    duplicate_share: float = 0.15  # images with one object duplicated (same name, near-identical box)
    contradiction_rate: float = 0.005  # related pairs that also get the contradicting spatial edge
    all_pairs_share: float = 0.2  # images with left/right written between all pairs of objects
    no_program_share: float = 0.10  # questions without semantic, semanticStr and annotations


DEFAULT_NOISE = Noise()
CLEAN = Noise(0.0, 0.0, 0.0, 0.0)

# The question mix within kinds (the module docstring explains them).
MODIFIED_SHARE = 0.3  # relation and colour questions whose X or Y carries a modifier (side, near: 2/3 of it)
PICTURE_SHARE = 0.08  # questions that end in "in this picture"
AMBIGUOUS_SHARE = 0.1  # relation questions drawn from all objects, not only the only ones of their name
SECOND_PERSON_SHARE = 0.25  # images with people that have a second person

# Relations of the "Is the X Rel the Y?" template (rules/templates.json, SPATIAL_REL): a verify-rel
# question belongs to the template family only when its last step asks one of these.
TEMPLATE_RELATIONS = frozenset({"to the left of", "to the right of", "in front of", "on top of", "next to",
                                "above", "below", "behind", "under", "beneath", "beside", "near"})
# Relations a possessive can stand for: "the man's hat" (man wearing hat), "the girl's hair" (hair of girl).
POSSESSIVE_RELS = frozenset({"wearing", "holding", "carrying"})
# Non-spatial relations of verify-rel questions ("Is the man wearing a hat?").
VERIFY_RELS = frozenset({"wearing", "holding", "riding", "carrying", "on", "in", "sitting on", "standing on",
                         "lying on", "parked on", "hanging on", "leaning on", "covering", "attached to",
                         "mounted on", "growing on"})
HORIZONTAL = ("to the left of", "to the right of")


# --------------------------------------------------------------------------- vocabulary


@dataclass(frozen=True)
class SynthVocabulary:
    """Names, attribute groups and relations the generator draws from (see synth_vocab.json)."""

    names: tuple[str, ...]
    cum_weights: tuple[float, ...]
    plurals: dict[str, str]
    plural_names: frozenset[str]
    uncountable: frozenset[str]
    colors: tuple[str, ...]
    materials: tuple[str, ...]
    sizes: tuple[str, ...]
    states: tuple[str, ...]
    poses: tuple[str, ...]
    other_attributes: tuple[str, ...]
    people: tuple[str, ...]
    clothing: tuple[str, ...]
    held: tuple[str, ...]
    spatial: dict[str, str]
    symmetric: tuple[str, ...]
    semantic: tuple[str, ...]
    places: tuple[str, ...]
    weather: tuple[str, ...]
    plural_forms: frozenset[str] = frozenset()

    def plural(self, name: str) -> str:
        return self.plurals.get(name, name)

    def is_plural(self, name: str) -> bool:
        """Plural forms take "are": "jeans", "men", and plurals of vocabulary names ("dishes")."""
        return name in self.plural_names or (name not in self.plurals and name in self.plural_forms)

    def is_mass(self, name: str) -> bool:
        return name in self.uncountable


def _zipf_cum_weights(n: int, exponent: float = 1.0) -> tuple[float, ...]:
    total = 0.0
    out = []
    for rank in range(n):
        total += 1.0 / (rank + 2) ** exponent
        out.append(total)
    return tuple(out)


@lru_cache(maxsize=1)
def load_vocabulary() -> SynthVocabulary:
    """Load the packaged vocabulary once (it is built by benchmarks/make_synth_vocab.py)."""
    raw = json.loads(
        Path(__file__).with_name("synth_vocab.json").read_text("utf-8")
    )
    attrs = raw["attributes"]
    grouped = {a for group in attrs.values() for a in group}
    spatial = dict(raw["spatial"])
    spatial.update({v: k for k, v in raw["spatial"].items()})
    return SynthVocabulary(
        names=tuple(raw["names"]),
        cum_weights=_zipf_cum_weights(len(raw["names"])),
        plurals=raw["plurals"],
        plural_names=frozenset(raw["plural_names"]),
        uncountable=frozenset(raw["uncountable"]),
        colors=tuple(attrs["color"]),
        materials=tuple(attrs["material"]),
        sizes=tuple(attrs["size"]),
        states=tuple(attrs["state"]),
        poses=tuple(attrs["pose"]),
        other_attributes=tuple(a for a in raw["vg_attributes"][:300] if a not in grouped),
        people=tuple(raw["people"]),
        clothing=tuple(raw["clothing"]),
        held=tuple(raw["held"]),
        spatial=spatial,
        symmetric=tuple(raw["symmetric"]),
        semantic=tuple(raw["semantic"]),
        places=tuple(raw["places"]),
        weather=tuple(raw["weather"]),
        plural_forms=frozenset(v for k, v in raw["plurals"].items() if v != k),
    )


# --------------------------------------------------------------------------- programs and text


def step(operation: str, argument: str, dependencies: list[int] | None = None) -> dict[str, Any]:
    """One step of a GQA functional program."""
    return {"operation": operation, "argument": argument, "dependencies": list(dependencies or [])}


def ref(name: str, oid: str | None) -> str:
    """A program argument naming an object: "cat (12)", or "cat (-)" when the graph has none."""
    return f"{name} ({oid if oid is not None else '-'})"


def insert_filter(semantic: list[dict[str, Any]], after: int, operation: str, argument: str) -> list[dict[str, Any]]:
    """Insert "filter color: white" after step `after`, renumbering later dependencies.

    GQA writes attribute-qualified references ("the white plate") as select -> filter; builders
    produce the unqualified program and this adds the filter, as GQA's own programs show it.
    """
    out = []
    for i, s in enumerate(semantic):
        deps = [d + 1 if d > after else d for d in s["dependencies"]]
        if i > after:
            deps = [after + 1 if d == after else d for d in deps]
        out.append({**s, "dependencies": deps})
        if i == after:
            out.append(step(operation, argument, [after]))
    return out


_TOKEN = re.compile(r"[^\s,?.!;:]+")


def tokens(text: str) -> list[str]:
    """GQA's token positions: words split on white space with punctuation dropped."""
    return _TOKEN.findall(text.lower())


def annotate(text: str, mentions: list[tuple[str, str]]) -> dict[str, str]:
    """Map each mention's token span ("4" or "5:7") to its object id, left to right.

    A mention is found after the previous one so that "the man near the man" style repeats land
    on distinct positions; a mention that is absent from the text is skipped (GQA does the same).
    """
    toks = tokens(text)
    out: dict[str, str] = {}
    start = 0
    for phrase, oid in mentions:
        want = tokens(phrase)
        n = len(want)
        for i in range(start, len(toks) - n + 1):
            if toks[i : i + n] == want:
                out[str(i) if n == 1 else f"{i}:{i + n}"] = oid
                start = i + n
                break
    return out


def article(word: str) -> str:
    """ "a" or "an" by the first sound (roughly: "a uniform", "an hour")."""
    w = word.lower()
    if w.startswith(("uni", "use", "usu", "uten", "eu", "one", "once")):
        return "a"
    return "an" if w[:1] in "aeiou" or w.startswith(("hour", "honest", "honor")) else "a"


def side_of(obj: dict[str, Any], width: float) -> str:
    """The evidence schema's rule: left iff the box centre is left of the image's middle."""
    return "left" if obj["x"] + obj["w"] / 2 < width / 2 else "right"


def template_family(detailed: str, semantic: list[dict[str, Any]]) -> str | None:
    """The contrast-set template family a question belongs to by its meaning, or None.

    From GQA's type and the program (which must be present): side (positionQuery), color (a
    direct colour query, possessives and modified references included), see_x_or_y (existOrC),
    x_near_y (existRelS(C) whose last relate is "near"), x_rel_y (verify rel whose relation is one
    of the template's spatial relations). "Is the man near the catcher wearing jeans?" ends in
    `verify rel: jeans,wearing,o` and so belongs to none, however much it looks like x_rel_y.
    """
    last = semantic[-1] if semantic else {}
    if detailed == "positionQuery":
        return "side"
    if detailed in ("directOf", "directWhich"):
        return "color" if last.get("argument") == "color" else None
    if detailed == "existOrC":
        return "see_x_or_y"
    if detailed in ("existRelS", "existRelSC"):
        relates = [s for s in semantic if s["operation"] == "relate"]
        return "x_near_y" if relates and relates[-1]["argument"].split(",")[1] == "near" else None
    if detailed in ("relVerify", "relVerifyCr", "relVerifyCo") and last.get("operation") == "verify rel":
        return "x_rel_y" if last["argument"].split(",")[1] in TEMPLATE_RELATIONS else None
    return None


def colors_of(obj: dict[str, Any], vocab: SynthVocabulary) -> list[str]:
    return [a for a in obj.get("attributes", []) if a in vocab.colors]


def first_in(obj: dict[str, Any], group: tuple[str, ...]) -> str | None:
    for a in obj.get("attributes", []):
        if a in group:
            return a
    return None


# --------------------------------------------------------------------------- graph index


@dataclass
class GraphView:
    """A scene graph with the look-ups question builders need, built once per image."""

    graph: Graph
    by_name: dict[str, list[str]] = field(default_factory=dict)
    edges: set[tuple[str, str, str]] = field(default_factory=set)
    unique_ids: list[str] = field(default_factory=list)
    _unique: set[str] = field(default_factory=set)
    # Candidate lists the random pickers derive from the graph, computed once per image.
    memo: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, graph: Graph) -> GraphView:
        view = cls(graph)
        for oid, obj in graph["objects"].items():
            view.by_name.setdefault(obj["name"], []).append(oid)
            for rel in obj.get("relations", []):
                view.edges.add((oid, rel["name"], str(rel["object"])))
        view.unique_ids = [ids[0] for ids in view.by_name.values() if len(ids) == 1]
        view._unique = set(view.unique_ids)
        return view

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    def obj(self, oid: str) -> dict[str, Any]:
        return self.graph["objects"][oid]

    def name(self, oid: str) -> str:
        return self.graph["objects"][oid]["name"]

    def unique(self, oid: str) -> bool:
        return oid in self._unique

    def has_edge(self, subject: str, rel: str, obj: str) -> bool:
        return (subject, rel, obj) in self.edges

    def related(self, names: set[str], rel: str, target: str, symmetric: bool) -> list[str]:
        """Ids of objects named in `names` with `rel` to `target` (either way when symmetric)."""
        out = []
        for n in sorted(names):
            for oid in self.by_name.get(n, []):
                if oid == target:
                    continue
                if (oid, rel, target) in self.edges or (symmetric and (target, rel, oid) in self.edges):
                    out.append(oid)
        return out

    def related_to(self, subject: str, rel: str) -> list[str]:
        return [str(r["object"]) for r in self.obj(subject).get("relations", []) if r["name"] == rel]

    def sorted_edges(self) -> list[tuple[str, str, str]]:
        return self.cached("edges", lambda: sorted(self.edges))

    def by_relation(self, rel: str) -> list[tuple[str, str]]:
        """(subject, object) of every `rel` edge, in sorted order."""
        def compute() -> dict[str, list[tuple[str, str]]]:
            out: dict[str, list[tuple[str, str]]] = {}
            for s, r, o in self.sorted_edges():
                out.setdefault(r, []).append((s, o))
            return out
        return self.cached("by_rel", compute).get(rel, [])

    def incoming(self, oid: str) -> list[tuple[str, str]]:
        """(subject, relation) of every edge that ends at `oid`, in sorted order."""
        def compute() -> dict[str, list[tuple[str, str]]]:
            out: dict[str, list[tuple[str, str]]] = {}
            for s, r, o in self.sorted_edges():
                out.setdefault(o, []).append((s, r))
            return out
        return self.cached("incoming", compute).get(oid, [])


# --------------------------------------------------------------------------- question records


@dataclass
class QuestionParts:
    """Everything of a GQA question record except its ids (which the caller assigns)."""

    question: str
    answer: str
    full_answer: str
    semantic: list[dict[str, Any]]
    detailed: str
    semantic_type: str
    structural: str
    group_global: str | None
    group_local: str | None
    mentions: list[tuple[str, str]] = field(default_factory=list)
    full_mentions: list[tuple[str, str]] = field(default_factory=list)
    answer_mentions: list[tuple[str, str]] = field(default_factory=list)

    @property
    def family(self) -> str | None:
        """The contrast-set template family (`template_family`)."""
        return template_family(self.detailed, self.semantic)

    def record(self, qid: str, image_id: str, *, program: bool = True, annotations: bool = True) -> Question:
        """The GQA record; `program=False` leaves out semantic/semanticStr, `annotations=False` those."""
        rec: Question = {
            "imageId": image_id,
            "question": self.question,
            "answer": self.answer,
            "fullAnswer": self.full_answer,
            "semantic": self.semantic,
            "semanticStr": semantic_str(self.semantic),
            "types": {"detailed": self.detailed, "semantic": self.semantic_type, "structural": self.structural},
            "groups": {"global": self.group_global, "local": self.group_local},
            "annotations": {
                "question": annotate(self.question, self.mentions),
                "fullAnswer": annotate(self.full_answer, self.full_mentions),
                "answer": annotate(self.answer, self.answer_mentions),
            },
            "entailed": [],
            "equivalent": [qid],
            "isBalanced": True,
        }
        if not program:
            del rec["semantic"], rec["semanticStr"]
        if not annotations:
            del rec["annotations"]
        return rec


def _be(name: str, vocab: SynthVocabulary) -> str:
    return "are" if vocab.is_plural(name) else "is"


def _yes(b: bool) -> str:
    return "yes" if b else "no"


def _det(name: str, vocab: SynthVocabulary) -> str:
    """ "a "/"an " before a countable singular, nothing before plurals and mass nouns."""
    return "" if vocab.is_plural(name) or vocab.is_mass(name) else article(name) + " "


# --- references with modifiers ------------------------------------------------------------


@dataclass(frozen=True)
class Modifier:
    """A clause that picks out the referent X through an edge to another object.

    role "s": X is the subject ("the cup on the table": cup -on-> table); role "o": X is the
    object ("the shirt the boy is wearing": boy -wearing-> shirt). GQA's program for the
    reference is `select: <other> -> relate: <X>,<rel>,<role> (<X id>)`. Styles: "plain"
    ("the man wearing jeans", "the man near the catcher", "the shirt the boy is wearing"),
    "that" ("the cup that is on the table", "the shirt that the boy is wearing"), "who" ("the man
    who is holding the umbrella"), "possessive" ("the man's hat" for role "o" with wearing /
    holding / carrying, "the girl's hair" for role "s" with "of").
    """

    rel: str
    other: str
    role: str = "s"
    style: str = "plain"

    def holds(self, v: GraphView, x: str) -> bool:
        return v.has_edge(x, self.rel, self.other) if self.role == "s" else v.has_edge(self.other, self.rel, x)

    def valid_style(self) -> bool:
        if self.style == "possessive":
            return (self.role == "s" and self.rel == "of") or (self.role == "o" and self.rel in POSSESSIVE_RELS)
        return self.style in ("plain", "that") or (self.style == "who" and self.role == "s")


def describe(v: GraphView, x: str, vocab: SynthVocabulary, mod: Modifier | None = None, *,
             x_text: str | None = None) -> tuple[str, list[tuple[str, str]]]:
    """The words for "the X" (with its modifier) and the mentions they contain, in text order."""
    xn = v.name(x)
    xw = x_text or xn
    if mod is None:
        return f"the {xw}", [(xw, x)]
    if not mod.holds(v, x) or not mod.valid_style():
        raise ValueError(f"modifier {mod} does not hold of object {x} ({xn})")
    on = v.name(mod.other)
    if mod.style == "possessive":
        return f"the {on}'s {xw}", [(f"{on}'s", mod.other), (xw, x)]
    if mod.role == "s":
        # GQA: "the man wearing a hat", "the person that is wearing jeans", but "holding the umbrella".
        det = _det(on, vocab) if mod.rel == "wearing" else "the "
        if mod.style == "plain":
            text = f"the {xw} {mod.rel} {det}{on}"
        else:
            text = f"the {xw} {mod.style} {_be(xn, vocab)} {mod.rel} {det}{on}"
    else:
        that = "that " if mod.style == "that" else ""
        text = f"the {xw} {that}the {on} {_be(on, vocab)} {mod.rel}"
    return text, [(xw, x), (on, mod.other)]


def reference_program(v: GraphView, x: str, mod: Modifier | None = None) -> list[dict[str, Any]]:
    """GQA's steps for "the X": `select: X (id)`, or `select: Y (id)->relate: X,rel,role (id) [0]`."""
    if mod is None:
        return [step("select", ref(v.name(x), x))]
    return [step("select", ref(v.name(mod.other), mod.other)),
            step("relate", f"{v.name(x)},{mod.rel},{mod.role} ({x})", [0])]


# --- the six contrast-set templates -------------------------------------------------------


def ask_side(v: GraphView, x: str, vocab: SynthVocabulary, *, x_text: str | None = None,
             phrasing: int = 0, x_mod: Modifier | None = None) -> QuestionParts:
    """positionQuery: "On which side of the picture is the X?" (select X -> query hposition).

    With `x_mod`: "On which side is the man that is wearing a hat?" (select hat -> relate
    man,wearing,s -> query hposition).
    """
    name = v.name(x)
    rx, mentions = describe(v, x, vocab, x_mod, x_text=x_text)
    be = _be(name, vocab)
    text = [f"On which side of the picture {be} {rx}?", f"On which side {be} {rx}?",
            f"Which side of the photo {be} {rx} on?"][phrasing % 3]
    side = side_of(v.obj(x), v.graph["width"])
    semantic = reference_program(v, x, x_mod)
    semantic.append(step("query", "hposition", [len(semantic) - 1]))
    return QuestionParts(
        text, side, f"The {name} {be} on the {side} of the image.", semantic,
        "positionQuery", "attr", "query", None, f"10q-{name}_hposition", mentions, [(name, x)])


def ask_color(v: GraphView, x: str, vocab: SynthVocabulary, *, x_text: str | None = None,
              via: tuple[str, str, str] | None = None, phrasing: int = 0,
              x_mod: Modifier | None = None, picture: bool = False) -> QuestionParts | None:
    """directOf/directWhich: "What color is the X?", optionally with a modifier on X.

    `via` = (rel, y, role) is shorthand for a plain modifier: role "s" for "the X <rel> the Y" (X
    is the subject: "the cat in front of the wall"), "o" for "the X the Y is <rel>" (Y is the
    subject: "the bat the batter is holding"). `x_mod` takes any `Modifier` ("What color is the
    man's hat?", "Which color is the cup that is on the table?"); `picture` appends "in this
    picture" to an unmodified X. Returns None unless X has exactly one colour, as GQA only asks then.
    """
    colors = colors_of(v.obj(x), vocab)
    if len(colors) != 1:
        return None
    if via is not None:
        x_mod = Modifier(via[0], via[1], via[2])
    name = v.name(x)
    rx, mentions = describe(v, x, vocab, x_mod, x_text=x_text)
    be = _be(name, vocab)
    pic = " in this picture" if picture and x_mod is None else ""
    if x_mod is not None and x_mod.role == "o" and x_mod.style != "possessive" and phrasing % 2 == 0:
        text = f"{rx[0].upper()}{rx[1:]} {'have' if vocab.is_plural(name) else 'has'} what color?"
    elif x_mod is not None and x_mod.role == "o" and x_mod.style != "possessive":
        text = f"What color {be} {rx}?"
    else:
        text = [f"What color {be} {rx}{pic}?", f"Which color {be} {rx}{pic}?",
                f"What is the color of {rx}{pic}?"][phrasing % 3]
    semantic = reference_program(v, x, x_mod)
    semantic.append(step("query", "color", [len(semantic) - 1]))
    detailed = "directOf" if x_mod is None or (x_mod.role == "s" and x_mod.style != "possessive") else "directWhich"
    return QuestionParts(
        text, colors[0], f"The {name} {be} {colors[0]}.", semantic, detailed, "attr", "query",
        "color", f"10q-{name}_color", mentions, [(name, x)])


def ask_exist_or(v: GraphView, a: str, b: str, vocab: SynthVocabulary, *,
                 a_names: list[str] | None = None, b_names: list[str] | None = None,
                 a_text: str | None = None, b_text: str | None = None,
                 phrasing: int = 0, program: bool = True,
                 attr: tuple[str, str] | None = None, attr_style: str = "pre") -> QuestionParts:
    """existOrC: "Do you see Xs or Ys?" and its GQA variants; yes iff either name is in the graph.

    `a`/`b` are names (not ids): the point of the question is that they may be absent.
    `a_names`/`b_names` widen what counts as present (synonyms, hyponyms of "animal").
    `attr` = (kind, value), e.g. ("color", "white") or ("material", "metal"), qualifies both options
    as GQA's existAttrOr ("Do you see any white cars or trucks?", attr_style "pre") and existThatOr
    ("Are there any tables or chairs that are made of metal?", attr_style "that") do:
    `select: a->filter color: white->exist->select: b->filter color: white->exist->or`; yes iff an
    object of either name has the attribute. Those are not the template's (which asks plain
    existence) and belong to no template family.
    """
    an = a_names or [a]
    bn = b_names or [b]
    a_ids = [o for n in an for o in v.by_name.get(n, [])]
    b_ids = [o for n in bn for o in v.by_name.get(n, [])]
    aw = a_text or vocab.plural(a)
    bw = b_text or vocab.plural(b)
    first, second = sorted((a, b))
    if attr is not None:
        kind, value = attr
        a_hit = [o for o in a_ids if value in v.obj(o).get("attributes", [])]
        b_hit = [o for o in b_ids if value in v.obj(o).get("attributes", [])]
        a_id = (a_hit or a_ids or [None])[0]
        b_id = (b_hit or b_ids or [None])[0]
        yes = bool(a_hit or b_hit)
        if attr_style == "pre":
            text = [f"Do you see any {value} {aw} or {bw}?", f"Are there {value} {aw} or {bw}?"][phrasing % 2]
            detailed = "existAttrOr" if yes else "existAttrOrC"
        else:
            clause = f"made of {value}" if kind == "material" and not value.endswith("en") else value
            text = [f"Are there any {aw} or {bw} that are {clause}?",
                    f"Do you see any {aw} or {bw} that are {clause}?"][phrasing % 2]
            detailed = "existThatOr" if yes else "existThatOrC"
        if yes:
            present = a if a_hit else b
            full = f"Yes, there {_be(present, vocab)} {_det(present, vocab)}{value} {present}."
            full_m = [(present, (a_hit or b_hit)[0])]
        else:
            full = f"No, there are no {value} {aw} or {bw}."
            full_m = []
        semantic = [step("select", ref(a, a_id)), step(f"filter {kind}", value, [0]), step("exist", "?", [1]),
                    step("select", ref(b, b_id) + " "), step(f"filter {kind}", value, [3]), step("exist", "?", [4]),
                    step("or", "", [2, 5])]
        mentions = ([(aw, a_id)] if a_id else []) + ([(bw, b_id)] if b_id else [])
        return QuestionParts(text, _yes(yes), full, semantic if program else [], detailed, "obj", "logical",
                             None, f"09existAttrOr-{first}_{second}", mentions, full_m)
    text = [f"Do you see {aw} or {bw}?", f"Do you see either {aw} or {bw} there?",
            f"Are there {aw} or {bw} in this picture?", f"Are there any {aw} or {bw}?",
            f"Do you see any {aw} or {bw} there?", f"Do you see {aw} or {bw} in this picture?"][phrasing % 6]
    answer = _yes(bool(a_ids or b_ids))
    if answer == "yes":
        present = a if a_ids else b
        pid = (a_ids or b_ids)[0]
        full = f"Yes, there {'are' if vocab.is_plural(present) else 'is'} {present if vocab.is_plural(present) or vocab.is_mass(present) else article(present) + ' ' + present}."
        full_m = [(present, pid)]
    else:
        full = f"No, there are no {bw} or {aw}."
        full_m = []
    semantic = [step("select", ref(a, a_ids[0] if a_ids else None)), step("exist", "?", [0]),
                step("select", ref(b, b_ids[0] if b_ids else None) + " "), step("exist", "?", [2]),
                step("or", "", [1, 3])]
    mentions = ([(aw, a_ids[0])] if a_ids else []) + ([(bw, b_ids[0])] if b_ids else [])
    return QuestionParts(
        text, answer, full, semantic if program else [], "existOrC", "obj", "logical", None,
        f"09existOr-{first}_{second}", mentions, full_m)


def ask_exist_near(v: GraphView, x_name: str, y: str, vocab: SynthVocabulary, *,
                   x_names: list[str] | None = None, x_text: str | None = None,
                   plural: bool = False, y_text: str | None = None, rel: str = "near",
                   phrasing: int = 0, y_mod: Modifier | None = None, picture: bool = False) -> QuestionParts:
    """existRelS: "Is there a X near the Y?" / "Are there any Xs near the Y?".

    `rel` defaults to the symmetric "near" (counted in either direction, as GQA writes it both
    ways); yes iff an object named in `x_names` (default: just `x_name`) has `rel` to Y. `y_mod`
    qualifies Y ("Are there any dishes near the cup that is on the table?": select table -> relate
    cup,on,s -> relate dish,near,s -> exist); `picture` appends "in this picture".
    """
    names = set(x_names or [x_name])
    symmetric = rel in vocab.symmetric
    hits = v.related(names, rel, y, symmetric)
    yname = v.name(y)
    ry, y_mentions = describe(v, y, vocab, y_mod, x_text=y_text)
    pic = " in this picture" if picture else ""
    mass = vocab.is_mass(x_name) or vocab.is_plural(x_name)
    if plural:
        xw = x_text or vocab.plural(x_name)
        text = [f"Are there any {xw} {rel} {ry}{pic}?", f"Are there {xw} {rel} {ry}{pic}?"][phrasing % 2]
    else:
        xw = x_text or x_name
        det = "" if mass else article(xw) + " "
        text = [f"Is there {det}{xw} {rel} {ry}{pic}?", f"Is there any {xw} {rel} {ry}{pic}?"][phrasing % 2]
        if phrasing % 2 == 0 and vocab.is_plural(x_name):
            text = f"Are there {xw} {rel} {ry}{pic}?"
    answer = _yes(bool(hits))
    if hits:
        hn = v.name(hits[0])
        full = f"Yes, there {_be(hn, vocab)} {'' if vocab.is_mass(hn) or vocab.is_plural(hn) else article(hn) + ' '}{hn} {rel} the {yname}."
        full_m = [(hn, hits[0]), (yname, y)]
    else:
        full = f"No, there {'are no' if plural else 'is no'} {xw} {rel} the {yname}."
        full_m = [(yname, y)]
    semantic = reference_program(v, y, y_mod)
    k = len(semantic) - 1
    semantic += [step("relate", f"{x_name},{rel},s ({hits[0] if hits else '-'})", [k]),
                 step("exist", "?", [k + 1])]
    mentions = ([(xw, hits[0])] if hits else []) + y_mentions
    return QuestionParts(
        text, answer, full, semantic, "existRelS" if hits else "existRelSC", "rel", "verify", None,
        f"13-{yname}_{x_name}", mentions, full_m)


def ask_relation(v: GraphView, x: str, rel: str, y: str, vocab: SynthVocabulary, *,
                 x_text: str | None = None, y_text: str | None = None,
                 subject_selected: bool = True, x_mod: Modifier | None = None,
                 y_mod: Modifier | None = None, picture: bool = False) -> QuestionParts | None:
    """relVerify: "Is the X to the left of the Y?" (also above/below/in front of/behind).

    Yes iff the edge X -rel-> Y exists, no iff the opposite edge does; None when the graph says
    neither (GQA never asks those). A contradictory pair (both edges) answers yes, as GQA's program
    would. `subject_selected` picks GQA's ",o" program shape (select X) or the ",s" one (select Y).
    `x_mod`/`y_mod` qualify X/Y ("Is the cup that is on the table to the left of the plate?":
    select table -> relate cup,on,s -> verify rel plate,to the left of,o); with both, the program
    follows X's chain and names Y by id, as GQA drops the other slot's qualifiers.
    """
    opposite = vocab.spatial.get(rel)
    if v.has_edge(x, rel, y):
        answer = "yes"
    elif opposite and v.has_edge(x, opposite, y):
        answer = "no"
    else:
        return None
    xn, yn = v.name(x), v.name(y)
    rx, x_mentions = describe(v, x, vocab, x_mod, x_text=x_text)
    ry, y_mentions = describe(v, y, vocab, y_mod, x_text=y_text)
    be = _be(xn, vocab)
    pic = " in this picture" if picture else ""
    text = f"{be.capitalize()} {rx} {rel} {ry}{pic}?"
    if answer == "yes":
        full = f"Yes, the {xn} {be} {rel} the {yn}."
    else:
        full = f"No, the {xn} {be} {opposite} the {yn}."
    if x_mod is not None or (y_mod is None and subject_selected):
        semantic = reference_program(v, x, x_mod)
        semantic.append(step("verify rel", f"{yn},{rel},o ({y})", [len(semantic) - 1]))
        detailed = "relVerify"
    else:
        semantic = reference_program(v, y, y_mod)
        semantic.append(step("verify rel", f"{xn},{rel},s ({x})", [len(semantic) - 1]))
        detailed = "relVerifyCr"
    return QuestionParts(
        text, answer, full, semantic, detailed, "rel", "verify", None, f"13-{xn}_{yn}",
        x_mentions + y_mentions, [(xn, x), (yn, y)])


def ask_verify_rel(v: GraphView, x: str, rel: str, vocab: SynthVocabulary, *, t: str | None = None,
                   t_name: str | None = None, x_mod: Modifier | None = None, x_text: str | None = None,
                   t_text: str | None = None, picture: bool = False) -> QuestionParts | None:
    """relVerify(Co) with a non-spatial relation: "Is the man wearing a hat?".

    Looks like "Is the X Rel the Y?" once X is qualified ("Is the man near the catcher wearing
    jeans?", "Is the person to the left of the boy wearing jeans?") but asks whether X (the man,
    the person) has `rel` to T: `select: catcher->relate: man,near,s->verify rel: jeans,wearing,o`.
    Pass `t` (an id X has `rel` to: yes, relVerify) or `t_name` (a name no object X has `rel` to
    bears: no, relVerifyCo with GQA's "(-)"). `picture` puts "in this picture" after an
    unqualified X ("Is the man in this picture wearing a hat?"). None when the graph disagrees.
    """
    xn = v.name(x)
    if t is not None:
        if not v.has_edge(x, rel, t):
            return None
        tn = v.name(t)
    else:
        if t_name is None or any(v.name(o) == t_name for o in v.related_to(x, rel)):
            return None
        tn = t_name
    tw = t_text or tn
    det = _det(tn, vocab)
    rx, mentions = describe(v, x, vocab, x_mod, x_text=x_text)
    pic = " in this picture" if picture and x_mod is None else ""
    be = _be(xn, vocab)
    text = f"{be.capitalize()} {rx}{pic} {rel} {det}{tw}?"
    full = f"Yes, the {xn} {be} {rel} {det}{tn}." if t else f"No, the {xn} {be} not {rel} {det}{tn}."
    semantic = reference_program(v, x, x_mod)
    semantic.append(step("verify rel", f"{tn},{rel},o ({t if t else '-'})", [len(semantic) - 1]))
    if t:
        mentions = [*mentions, (tw, t)]
    return QuestionParts(
        text, _yes(t is not None), full, semantic, "relVerify" if t else "relVerifyCo", "rel", "verify",
        None, f"13-{xn}_{tn}", mentions, [(xn, x)] + ([(tn, t)] if t else []))


# --- other GQA question kinds (must not match the templates) ------------------------------


def ask_rel_object(v: GraphView, x: str, rel: str, vocab: SynthVocabulary) -> QuestionParts | None:
    """relO: "What is the man wearing?" (select X -> relate _,rel,o -> query name)."""
    targets = v.related_to(x, rel)
    if not targets:
        return None
    t = targets[0]
    xn, tn = v.name(x), v.name(t)
    be = _be(xn, vocab)
    det = "" if vocab.is_plural(tn) or vocab.is_mass(tn) else article(tn) + " "
    return QuestionParts(
        f"What {be} the {xn} {rel}?", tn, f"The {xn} {be} {rel} {det}{tn}.",
        [step("select", ref(xn, x)), step("relate", f"_,{rel},o ({t})", [0]), step("query", "name", [1])],
        "relO", "rel", "query", None, f"14-{xn}_{rel},o", [(xn, x)], [(xn, x), (tn, t)], [(tn, t)])


def ask_rel_subject(v: GraphView, t: str, rel: str, vocab: SynthVocabulary) -> QuestionParts | None:
    """relS: "What is on the table?" (select Y -> relate _,rel,s -> query name)."""
    subjects = [s for (s, r) in v.incoming(t) if r == rel]
    if not subjects:
        return None
    s = subjects[0]
    sn, tn = v.name(s), v.name(t)
    who = "Who" if sn in vocab.people else "What"
    text = f"{who} is {rel} the {tn}?"
    return QuestionParts(
        text, sn, f"The {sn} {_be(sn, vocab)} {rel} the {tn}.",
        [step("select", ref(tn, t)), step("relate", f"_,{rel},s ({s})", [0]), step("query", "name", [1])],
        "relS", "rel", "query", None, f"14-{tn}_{rel},s", [(tn, t)], [(sn, s), (tn, t)], [(sn, s)])


def ask_material(v: GraphView, x: str, vocab: SynthVocabulary, phrasing: int = 0) -> QuestionParts | None:
    mat = first_in(v.obj(x), vocab.materials)
    if mat is None:
        return None
    xn = v.name(x)
    be = _be(xn, vocab)
    text = [f"What is the {xn} made of?", f"What is the material of the {xn}?"][phrasing % 2]
    return QuestionParts(
        text, mat, f"The {xn} {be} made of {mat}.",
        [step("select", ref(xn, x)), step("query", "material", [0])],
        "material", "attr", "query", "material", f"10q-{xn}_material", [(xn, x)], [(xn, x)])


def ask_verify_color(v: GraphView, x: str, color: str, vocab: SynthVocabulary) -> QuestionParts | None:
    colors = colors_of(v.obj(x), vocab)
    if not colors:
        return None
    xn = v.name(x)
    be = _be(xn, vocab)
    yes = color in colors
    full = f"Yes, the {xn} {be} {color}." if yes else f"No, the {xn} {be} {colors[0]}."
    return QuestionParts(
        f"{be.capitalize()} the {xn} {color}?", _yes(yes), full,
        [step("select", ref(xn, x)), step("verify color", color, [0])],
        "verifyAttr" if yes else "verifyAttrC", "attr", "verify", None, f"06-{xn}_{color}",
        [(xn, x)], [(xn, x)])


def ask_choose_color(v: GraphView, x: str, other: str, vocab: SynthVocabulary, flip: bool) -> QuestionParts | None:
    colors = colors_of(v.obj(x), vocab)
    if len(colors) != 1 or other == colors[0]:
        return None
    xn = v.name(x)
    c1, c2 = (colors[0], other) if flip else (other, colors[0])
    return QuestionParts(
        f"{_be(xn, vocab).capitalize()} the {xn} {c1} or {c2}?", colors[0], f"The {xn} {_be(xn, vocab)} {colors[0]}.",
        [step("select", ref(xn, x)), step("choose color", f"{c1}|{c2}", [0])],
        "chooseAttr", "attr", "choose", "color", f"10c-{xn}_color", [(xn, x)], [(xn, x)])


def ask_exist_that(v: GraphView, name: str, color: str, vocab: SynthVocabulary) -> QuestionParts:
    """existThatC: "Is there a table that is blue?"; yes iff some such table is blue."""
    ids = v.by_name.get(name, [])
    hits = [o for o in ids if color in v.obj(o).get("attributes", [])]
    det = "" if vocab.is_mass(name) or vocab.is_plural(name) else article(name) + " "
    be = _be(name, vocab)
    if hits:
        full = f"Yes, there {be} {det}{color} {name}."
    elif ids:
        cs = colors_of(v.obj(ids[0]), vocab)
        full = f"No, there {be} {det}{name} but it is {cs[0] if cs else 'not ' + color}."
    else:
        full = f"No, there {be} no {name}."
    oid = (hits or ids or [None])[0]
    return QuestionParts(
        f"{'Are' if vocab.is_plural(name) else 'Is'} there {det}{name} that {be} {color}?", _yes(bool(hits)), full,
        [step("select", ref(name, oid)), step("filter color", color, [0]), step("exist", "?", [1])],
        "existThatC", "obj", "verify", None, f"04-{name}_{color}",
        [(name, oid)] if oid else [], [(name, oid)] if oid else [])


def ask_exist_and(v: GraphView, a: str, b: str, vocab: SynthVocabulary) -> QuestionParts:
    a_ids, b_ids = v.by_name.get(a, []), v.by_name.get(b, [])
    ap, bp = vocab.plural(a), vocab.plural(b)
    yes = bool(a_ids and b_ids)
    if yes:
        full = f"Yes, there are both {ap} and {bp}."
    elif a_ids or b_ids:
        full = f"No, there {'are' if False else 'is'} {a if a_ids else b} but no {bp if a_ids else ap}."
    else:
        full = f"No, there are no {ap} or {bp}."
    first, second = sorted((a, b))
    return QuestionParts(
        f"Are there both {ap} and {bp} in the image?", _yes(yes), full,
        [step("select", ref(a, a_ids[0] if a_ids else None)), step("exist", "?", [0]),
         step("select", ref(b, b_ids[0] if b_ids else None) + " "), step("exist", "?", [2]),
         step("and", "", [1, 3])],
        "existAndC", "obj", "logical", None, f"09existAnd-{first}_{second}",
        ([(ap, a_ids[0])] if a_ids else []) + ([(bp, b_ids[0])] if b_ids else []), [])


def ask_rel_choose(v: GraphView, x: str, y: str, vocab: SynthVocabulary) -> QuestionParts | None:
    """relChooser: "Is the X to the left or to the right of the Y?" (a realistic near-miss).

    None for a contradictory pair (both edges): the choice would have no answer.
    """
    if v.has_edge(x, "to the left of", y) and v.has_edge(x, "to the right of", y):
        return None
    if v.has_edge(x, "to the left of", y):
        side, other = "to the left of", "to the right of"
    elif v.has_edge(x, "to the right of", y):
        side, other = "to the right of", "to the left of"
    else:
        return None
    xn, yn = v.name(x), v.name(y)
    be = _be(xn, vocab)
    return QuestionParts(
        f"{be.capitalize()} the {xn} to the left or to the right of the {yn}?", side.split()[-2],
        f"The {xn} {be} {side} the {yn}.",
        [step("select", ref(yn, y)), step("choose rel", f"{xn},{side}|{other},s ({x})", [0])],
        "relChooser", "rel", "choose", None, f"13-{yn}_{xn}", [(xn, x), (yn, y)], [(xn, x), (yn, y)])


def ask_scene(v: GraphView, key: str, phrasing: int = 0) -> QuestionParts | None:
    """place / weather: "Which place is it?", "How's the weather?" (needs location / weather)."""
    value = v.graph.get("location" if key == "place" else "weather")
    if not value:
        return None
    if key == "place":
        text = ["Which place is it?", "What place is this?", "Where is this?"][phrasing % 3]
        full = f"It is {article(value)} {value}."
    else:
        text = ["How's the weather?", "How is the weather in the image?", "What is the weather like?"][phrasing % 3]
        full = f"It is {value}."
    return QuestionParts(
        text, value, full, [step("select", "scene"), step("query", key, [0])],
        key, "global", "query", key, f"02q-{key}")


# --------------------------------------------------------------------------- scene graphs


def _box(rng: random.Random, width: int, height: int) -> dict[str, int]:
    # rng.random() arithmetic rather than randrange/uniform: this runs 1.2M times for GQA scale.
    r = rng.random
    w = max(8, int(width * (0.04 + 0.41 * r())))
    h = max(8, int(height * (0.04 + 0.41 * r())))
    return {"x": int((width - w) * r()), "y": int((height - h) * r()), "w": w, "h": h}


def add_relation(objects: dict[str, dict[str, Any]], subject: str, rel: str, obj: str) -> None:
    rels = objects[subject]["relations"]
    for r in rels:
        if r["object"] == obj and r["name"] == rel:
            return
    rels.append({"name": rel, "object": obj})


def add_spatial(objects: dict[str, dict[str, Any]], a: str, b: str, width: float, height: float,
                rng: random.Random | None = None, *, lr: bool = True) -> int:
    """Write the box-implied relations between a and b in both directions; return edges added.

    Left/right from box centres, above/below from box centres (image y grows downwards), near when
    the centres are within a quarter of the width; in front of/behind (no geometry in a 2-D box)
    with a random direction when `rng` is given. `lr=False` leaves left/right out (for images whose
    left/right edges are written between all pairs by `add_all_pairs_lr`).
    """
    oa, ob = objects[a], objects[b]
    ax, bx = oa["x"] + oa["w"] / 2, ob["x"] + ob["w"] / 2
    ay, by = oa["y"] + oa["h"] / 2, ob["y"] + ob["h"] / 2
    n = 0
    if lr and abs(ax - bx) > SPATIAL_MARGIN * width:
        left, right = (a, b) if ax < bx else (b, a)
        add_relation(objects, left, "to the left of", right)
        add_relation(objects, right, "to the right of", left)
        n += 2
    if abs(ay - by) > SPATIAL_MARGIN * height and (rng is None or rng.random() < 0.5):
        top, bottom = (a, b) if ay < by else (b, a)
        add_relation(objects, top, "above", bottom)
        add_relation(objects, bottom, "below", top)
        n += 2
    if ((ax - bx) ** 2 + (ay - by) ** 2) ** 0.5 < 0.25 * width and (rng is None or rng.random() < 0.5):
        add_relation(objects, a, "near", b)
        add_relation(objects, b, "near", a)
        n += 2
    if rng is not None and rng.random() < 0.2:
        front, back = (a, b) if rng.random() < 0.5 else (b, a)
        add_relation(objects, front, "in front of", back)
        add_relation(objects, back, "behind", front)
        n += 2
    return n


def add_all_pairs_lr(objects: dict[str, dict[str, Any]], ids: list[str], rng: random.Random | None = None,
                     contradiction_rate: float = 0.0) -> int:
    """Write "to the left of"/"to the right of" between every pair with distinct box centres.

    GQA's graphs often relate every pair this way. Each pair then gets the contradicting edge with
    probability `contradiction_rate` (`add_contradiction`). The caller makes sure no left/right
    edge was written before (edges are appended without the duplicate check, for speed).
    """
    centres = sorted((objects[o]["x"] + objects[o]["w"] / 2, o) for o in ids)
    rels = {o: objects[o]["relations"] for o in ids}
    n = 0
    for i, (ax, a) in enumerate(centres):
        left_of = rels[a].append
        for bx, b in centres[i + 1:]:
            if ax != bx:  # sorted: a is the left one
                left_of({"name": "to the left of", "object": b})
                rels[b].append({"name": "to the right of", "object": a})
                n += 2
    if rng is not None and 0.0 < contradiction_rate < 1.0:
        # Bernoulli(rate) per pair, drawn as geometric gaps between the contradicted pairs.
        pairs = len(ids) * (len(ids) - 1) // 2
        log_q = math.log(1.0 - contradiction_rate)
        k = int(math.log(1.0 - rng.random()) / log_q)
        while k < pairs:
            i = int((1 + math.isqrt(8 * k + 1)) // 2)  # pair number k -> (i, j), j < i
            j = k - i * (i - 1) // 2
            add_contradiction(objects, ids[i], ids[j], rng)
            k += 1 + int(math.log(1.0 - rng.random()) / log_q)
    return n


def add_contradiction(objects: dict[str, dict[str, Any]], a: str, b: str, rng: random.Random) -> None:
    """Give the pair contradicting spatial edges, each written both ways (GQA's annotation noise).

    Half the time (when the centres differ) both "to the left of" and "to the right of" hold
    between a and b; otherwise both "in front of" and "behind".
    """
    oa, ob = objects[a], objects[b]
    ax, bx = oa["x"] + oa["w"] / 2, ob["x"] + ob["w"] / 2
    if ax != bx and rng.random() < 0.5:
        left, right = (a, b) if ax < bx else (b, a)
        for s, o in ((left, right), (right, left)):
            add_relation(objects, s, "to the left of", o)
            add_relation(objects, o, "to the right of", s)
    else:
        for s, o in ((a, b), (b, a)):
            add_relation(objects, s, "in front of", o)
            add_relation(objects, o, "behind", s)


def _attributes(rng: random.Random, vocab: SynthVocabulary, person: bool) -> list[str]:
    attrs: list[str] = []
    r = rng.random()
    if r < 0.62:
        attrs.append(rng.choice(vocab.colors))
    elif r < 0.70:
        attrs.extend(rng.sample(vocab.colors, 2))
    if not person and rng.random() < 0.3:
        attrs.append(rng.choice(vocab.materials))
    if rng.random() < 0.3:
        attrs.append(rng.choice(vocab.sizes))
    if rng.random() < 0.25:
        attrs.append(rng.choice(vocab.poses if person else vocab.states))
    if rng.random() < 0.3:
        attrs.append(rng.choice(vocab.other_attributes))
    return attrs


def _near_box(rng: random.Random, box: dict[str, Any], width: int, height: int) -> dict[str, int]:
    """A box within 4% of `box` in position and size: a duplicated annotation of the same object."""
    r = rng.random
    w = max(8, min(width, int(box["w"] * (0.96 + 0.08 * r()))))
    h = max(8, min(height, int(box["h"] * (0.96 + 0.08 * r()))))
    x = min(max(0, box["x"] + int(box["w"] * 0.04 * (2 * r() - 1))), width - w)
    y = min(max(0, box["y"] + int(box["h"] * 0.04 * (2 * r() - 1))), height - h)
    return {"x": x, "y": y, "w": w, "h": h}


def make_graph(rng: random.Random, image_num: int, vocab: SynthVocabulary, noise: Noise = DEFAULT_NOISE) -> Graph:
    """One GQA-like scene graph; object ids are `image_num * 100 + k` so they are globally unique."""
    width = rng.choice((500, 640, 800, 1024))
    height = rng.choice((333, 375, 480, 500, 600, 768))
    n = rng.randint(8, 24)
    names: list[str] = []
    # (person, worn, held) indices, so "wearing"/"holding" edges are plausible.
    people: list[tuple[int, list[int], list[int]]] = []
    if rng.random() < 0.6:
        first_worn: list[str] = []
        for p in range(2 if rng.random() < SECOND_PERSON_SHARE else 1):
            person = len(names)
            names.append(rng.choice(vocab.people))
            if p == 0:
                first_worn = rng.sample(vocab.clothing, rng.randint(1, 2))
                garments = first_worn
            else:  # the second person often wears the same kind of garment ("two people in jeans")
                garments = [rng.choice(first_worn) if rng.random() < 0.5 else rng.choice(vocab.clothing)]
            worn, held = [], []
            for c in garments:
                worn.append(len(names))
                names.append(c)
            if rng.random() < 0.5:
                held.append(len(names))
                names.append(rng.choice(vocab.held))
            people.append((person, worn, held))
    names.extend(rng.choices(vocab.names, cum_weights=vocab.cum_weights, k=max(0, n - len(names))))
    duplicate_of = -1
    if rng.random() < noise.duplicate_share:
        duplicate_of = int(rng.random() * len(names))
        names.append(names[duplicate_of])
    base = image_num * 100
    ids = [str(base + k) for k in range(len(names))]
    person_idx = {p for p, _, _ in people}
    objects: dict[str, dict[str, Any]] = {}
    for k, (oid, name) in enumerate(zip(ids, names, strict=True)):
        if k == len(names) - 1 and duplicate_of >= 0:
            original = objects[ids[duplicate_of]]
            obj: dict[str, Any] = {"name": name, **_near_box(rng, original, width, height)}
            obj["attributes"] = list(original["attributes"])
        else:
            obj = {"name": name, **_box(rng, width, height)}
            obj["attributes"] = _attributes(rng, vocab, k in person_idx)
        obj["relations"] = []
        objects[oid] = obj
    for p, worn, held in people:
        for c in worn:
            add_relation(objects, ids[p], "wearing", ids[c])
        for h in held:
            add_relation(objects, ids[p], "holding", ids[h])
    all_pairs = rng.random() < noise.all_pairs_share
    contradiction_rate = noise.contradiction_rate
    seen: set[tuple[str, str]] = set()
    n_ids = len(ids)
    for i, a in enumerate(ids):
        for _ in range(1 if rng.random() < 0.8 else 2):
            b = ids[int(rng.random() * n_ids)]
            if b == a or (a, b) in seen or (b, a) in seen:
                continue
            seen.add((a, b))
            add_spatial(objects, a, b, width, height, rng, lr=not all_pairs)
            if not all_pairs and contradiction_rate and rng.random() < contradiction_rate:
                add_contradiction(objects, a, b, rng)
        if rng.random() < 0.5 and i >= 1:
            b = ids[int(rng.random() * n_ids)]
            if b != a:
                add_relation(objects, a, rng.choice(vocab.semantic), b)
    if all_pairs:
        add_all_pairs_lr(objects, ids, rng, contradiction_rate)
    graph: Graph = {"width": width, "height": height, "objects": objects}
    if rng.random() < 0.5:
        graph["location"] = rng.choice(vocab.places)
    if rng.random() < 0.3:
        graph["weather"] = rng.choice(vocab.weather)
    return graph


# --------------------------------------------------------------------------- random questions


Picker = Callable[[random.Random, GraphView, SynthVocabulary], "QuestionParts | None"]


def _unique_ids(v: GraphView) -> list[str]:
    return v.unique_ids


def _sorted_edges(v: GraphView) -> list[tuple[str, str, str]]:
    return v.sorted_edges()


def _edges(v: GraphView, rels) -> list[tuple[str, str, str]]:
    """(subject, relation, object) of the edges with one of `rels` (in the order given), sorted."""
    return [(s, r, o) for r in rels for (s, o) in v.by_relation(r)]


def _names(v: GraphView) -> list[str]:
    return v.cached("names", lambda: sorted(v.by_name))


def _absent_name(rng: random.Random, v: GraphView, vocab: SynthVocabulary) -> str:
    for _ in range(20):
        name = rng.choices(vocab.names, cum_weights=vocab.cum_weights, k=1)[0]
        if name not in v.by_name:
            return name
    return "unicorn"


_VERIFY_ORDER = tuple(sorted(VERIFY_RELS))


def _spatial_rels(vocab: SynthVocabulary) -> list[str]:
    return sorted(vocab.spatial)


def _semantic_rels(vocab: SynthVocabulary) -> list[str]:
    return sorted(set(vocab.semantic))


def _modifier_options(v: GraphView, x: str) -> list[tuple[str, str, str]]:
    """(rel, other, role) of the edges that single X out among the objects of its name.

    The other object must be the only one of its name ("the table"), and no other object named
    like X may have the same edge to it, as GQA's modifiers pick out their referent.
    """
    def compute() -> list[tuple[str, str, str]]:
        xn = v.name(x)
        same = [s for s in v.by_name[xn] if s != x]
        out = []
        for r in v.obj(x)["relations"]:
            o, rel = str(r["object"]), r["name"]
            if o != x and v.unique(o) and v.name(o) != xn and not any((s, rel, o) in v.edges for s in same):
                out.append((rel, o, "s"))
        for s, rel in v.incoming(x):
            if s != x and v.unique(s) and v.name(s) != xn and not any((s, rel, t) in v.edges for t in same):
                out.append((rel, s, "o"))
        return out
    return v.cached(f"mods/{x}", compute)


def _pick_modifier(rng: random.Random, v: GraphView, vocab: SynthVocabulary, x: str, *,
                   exclude: tuple[str, ...] = (), spatial_first: bool = False) -> Modifier | None:
    """A random modifier for X (None if the graph has none), in a random style that fits it."""
    opts = [o for o in _modifier_options(v, x) if o[1] not in exclude and v.name(o[1]) not in
            [v.name(e) for e in exclude]]
    if not opts:
        return None
    if spatial_first:  # "the man near the catcher", "the person to the left of the boy"
        spatial = [o for o in opts if o[2] == "s" and (o[0] in vocab.spatial or o[0] in vocab.symmetric)]
        if spatial and rng.random() < 0.7:
            opts = spatial
    else:  # left/right edges are so many in all-pairs images that they would crowd out the rest
        other = [o for o in opts if o[0] not in HORIZONTAL]
        if other and rng.random() < 0.7:
            opts = other
    rel, other, role = rng.choice(opts)
    r = rng.random()
    if role == "s":
        if rel == "of":
            style = "possessive" if r < 0.7 else "plain"
        elif r < 0.5:
            style = "plain"
        else:
            style = "who" if v.name(x) in vocab.people and r < 0.75 else "that"
    elif rel in POSSESSIVE_RELS and v.name(other) in vocab.people and r < 0.4:
        style = "possessive"
    else:
        style = "plain" if r < 0.7 else "that"
    return Modifier(rel, other, role, style)


def _pick_side(rng, v, vocab):
    width = v.graph["width"]

    def clear(o: str) -> bool:
        return abs(v.obj(o)["x"] + v.obj(o)["w"] / 2 - width / 2) > CENTER_BAND * width

    if rng.random() < MODIFIED_SHARE * 2 / 3:
        ok = v.cached("side_any", lambda: [o for o in v.graph["objects"] if clear(o)])
        if ok:
            x = rng.choice(ok)
            mod = _pick_modifier(rng, v, vocab, x)
            if mod is not None:
                return ask_side(v, x, vocab, x_mod=mod, phrasing=rng.randrange(3))
    ok = v.cached("side", lambda: [o for o in _unique_ids(v) if clear(o)])
    return ask_side(v, rng.choice(ok), vocab, phrasing=rng.randrange(3)) if ok else None


def _possessed(v: GraphView, vocab: SynthVocabulary) -> list[tuple[str, str, str]]:
    """(thing, rel, person) for one-colour things a person wears or holds that "the person's" picks out."""
    def compute() -> list[tuple[str, str, str]]:
        out = []
        for rel in sorted(POSSESSIVE_RELS):
            for s, o in v.by_relation(rel):
                if v.name(s) in vocab.people and len(colors_of(v.obj(o), vocab)) == 1 \
                        and (rel, s, "o") in _modifier_options(v, o):
                    out.append((o, rel, s))
        return out
    return v.cached("possessed", compute)


def _pick_color(rng, v, vocab):
    if rng.random() < MODIFIED_SHARE:
        possessed = _possessed(v, vocab)
        if possessed and rng.random() < 0.4:  # "What color is the man's shirt?"
            x, rel, person = rng.choice(possessed)
            return ask_color(v, x, vocab, x_mod=Modifier(rel, person, "o", "possessive"), phrasing=rng.randrange(3))
        ok = v.cached("one_color_any", lambda: [o for o in v.graph["objects"] if len(colors_of(v.obj(o), vocab)) == 1])
        if ok:
            x = rng.choice(ok)
            mod = _pick_modifier(rng, v, vocab, x)
            if mod is not None:
                return ask_color(v, x, vocab, x_mod=mod, phrasing=rng.randrange(3))
    ok = v.cached("one_color", lambda: [o for o in _unique_ids(v) if len(colors_of(v.obj(o), vocab)) == 1])
    if not ok:
        return None
    return ask_color(v, rng.choice(ok), vocab, phrasing=rng.randrange(3), picture=rng.random() < PICTURE_SHARE)


def _pick_exist_or(rng, v, vocab):
    present = _names(v)
    a = rng.choice(present) if rng.random() < 0.5 else _absent_name(rng, v, vocab)
    b = rng.choice(present) if rng.random() < 0.3 else _absent_name(rng, v, vocab)
    if a == b:
        return None
    return ask_exist_or(v, a, b, vocab, phrasing=rng.randrange(6))


def _pick_exist_attr_or(rng, v, vocab):
    """existAttrOr / existThatOr: "Are there any tables or chairs that are white?" (no template)."""
    present = _names(v)
    a = rng.choice(present)
    b = rng.choice(present) if rng.random() < 0.3 else _absent_name(rng, v, vocab)
    if a == b:
        return None
    if rng.random() < 0.75:
        colors = colors_of(v.obj(v.by_name[a][0]), vocab)
        attr = ("color", rng.choice(colors) if colors and rng.random() < 0.6 else rng.choice(vocab.colors))
    else:
        attr = ("material", rng.choice(vocab.materials))
    return ask_exist_or(v, a, b, vocab, attr=attr, attr_style="pre" if rng.random() < 0.5 else "that",
                        phrasing=rng.randrange(2))


def _pick_exist_near(rng, v, vocab):
    ys = _unique_ids(v)
    if not ys:
        return None
    with_near = v.cached("near", lambda: [
        (s, o) for (s, o) in v.by_relation("near") if v.unique(o) and v.name(s) != v.name(o)])
    if with_near and rng.random() < 0.5:
        s, y = rng.choice(with_near)
        x_name = v.name(s)
    else:
        y = rng.choice(ys)
        x_name = _absent_name(rng, v, vocab)
    if x_name == v.name(y):
        return None
    y_mod = None
    if rng.random() < MODIFIED_SHARE * 2 / 3:
        y_mod = _pick_modifier(rng, v, vocab, y)
        if y_mod is not None and v.name(y_mod.other) == x_name:
            y_mod = None
    return ask_exist_near(v, x_name, y, vocab, plural=rng.random() < 0.3, phrasing=rng.randrange(2),
                          y_mod=y_mod, picture=rng.random() < PICTURE_SHARE)


def _pick_relation(rng, v, vocab):
    edges = []
    if rng.random() < AMBIGUOUS_SHARE:  # "the man" where the image has two men: the program picks one
        edges = v.cached("spatial_ambiguous", lambda: [
            (s, r, o) for (s, r, o) in _edges(v, _spatial_rels(vocab))
            if not (v.unique(s) and v.unique(o)) and v.name(s) != v.name(o)])
    if not edges:
        edges = v.cached("spatial", lambda: [
            (s, r, o) for (s, r, o) in _edges(v, _spatial_rels(vocab))
            if v.unique(s) and v.unique(o) and v.name(s) != v.name(o)])
    if not edges:
        return None
    s, r, o = rng.choice(edges)
    if rng.random() < 0.5:
        r = vocab.spatial[r]  # ask the opposite relation: the answer is "no" (unless the pair is contradictory)
    x_mod = y_mod = None
    if rng.random() < MODIFIED_SHARE:
        which = rng.random()
        if which < 0.85:
            x_mod = _pick_modifier(rng, v, vocab, s, exclude=(o,))
        if which >= 0.6:
            y_mod = _pick_modifier(rng, v, vocab, o, exclude=(s,))
    return ask_relation(v, s, r, o, vocab, subject_selected=rng.random() < 0.7, x_mod=x_mod, y_mod=y_mod,
                        picture=rng.random() < PICTURE_SHARE)


def _pick_verify_rel(rng, v, vocab):
    """Non-spatial verify rel, half of them with a (mostly spatial) modifier on X: no template."""
    def compute() -> tuple[list, list]:
        verbal = [(s, r, o) for (s, r, o) in _edges(v, _VERIFY_ORDER) if v.name(s) != v.name(o)]
        return [e for e in verbal if e[1] in POSSESSIVE_RELS], verbal
    worn, verbal = v.cached("verbal", compute)
    edges = worn if worn and rng.random() < 0.7 else verbal
    if not edges:
        return None
    s, r, o = rng.choice(edges)
    t, t_name = o, None
    if rng.random() < 0.5:  # the answer is no: a name s has no `r` edge to
        t = None
        related = [v.name(x) for x in v.related_to(s, r)]
        in_image = v.cached(f"targets/{r}", lambda: sorted({v.name(o2) for (_, o2) in v.by_relation(r)}))
        cands = [n for n in in_image if n not in related and n != v.name(s)]
        if cands and rng.random() < 0.6:  # another person's jeans: the ambiguous reading says yes
            t_name = rng.choice(cands)
        else:
            group = vocab.clothing if r == "wearing" else vocab.held if r == "holding" else vocab.names[:200]
            t_name = rng.choice(group)
            if t_name in related or t_name == v.name(s):
                return None
    mod = None
    if not v.unique(s) or rng.random() < 0.5:
        mod = _pick_modifier(rng, v, vocab, s, exclude=(o,), spatial_first=True)
        if mod is None and not v.unique(s) and rng.random() >= AMBIGUOUS_SHARE:
            return None
    return ask_verify_rel(v, s, r, vocab, t=t, t_name=t_name, x_mod=mod,
                          picture=mod is None and rng.random() < PICTURE_SHARE)


def _pick_rel_object(rng, v, vocab):
    edges = v.cached("worn", lambda: [(s, r) for (s, r, o) in _edges(v, ("holding", "wearing")) if v.unique(s)])
    if not edges:
        return None
    s, r = rng.choice(edges)
    return ask_rel_object(v, s, r, vocab)


def _pick_rel_subject(rng, v, vocab):
    edges = v.cached("semantic", lambda: [(o, r) for (s, r, o) in _edges(v, _semantic_rels(vocab))
                                          if v.unique(o) and v.unique(s)])
    if not edges:
        return None
    o, r = rng.choice(edges)
    return ask_rel_subject(v, o, r, vocab)


def _pick_material(rng, v, vocab):
    ok = v.cached("material", lambda: [o for o in _unique_ids(v) if first_in(v.obj(o), vocab.materials)])
    return ask_material(v, rng.choice(ok), vocab, rng.randrange(2)) if ok else None


def _pick_verify_color(rng, v, vocab):
    ok = v.cached("colored", lambda: [o for o in _unique_ids(v) if colors_of(v.obj(o), vocab)])
    if not ok:
        return None
    x = rng.choice(ok)
    color = rng.choice(colors_of(v.obj(x), vocab)) if rng.random() < 0.5 else rng.choice(vocab.colors)
    return ask_verify_color(v, x, color, vocab)


def _pick_choose_color(rng, v, vocab):
    ok = v.cached("one_color", lambda: [o for o in _unique_ids(v) if len(colors_of(v.obj(o), vocab)) == 1])
    if not ok:
        return None
    return ask_choose_color(v, rng.choice(ok), rng.choice(vocab.colors), vocab, rng.random() < 0.5)


def _pick_exist_that(rng, v, vocab):
    name = rng.choice(_names(v))
    return ask_exist_that(v, name, rng.choice(vocab.colors), vocab)


def _pick_exist_and(rng, v, vocab):
    a = rng.choice(_names(v))
    b = rng.choice(_names(v)) if rng.random() < 0.5 else _absent_name(rng, v, vocab)
    return ask_exist_and(v, a, b, vocab) if a != b else None


def _pick_rel_choose(rng, v, vocab):
    edges = v.cached("horizontal", lambda: [
        (s, o) for (s, r, o) in _edges(v, HORIZONTAL)
        if v.unique(s) and v.unique(o) and v.name(s) != v.name(o)])
    if not edges:
        return None
    s, o = rng.choice(edges)
    return ask_rel_choose(v, s, o, vocab)


def _pick_place(rng, v, vocab):
    return ask_scene(v, "place", rng.randrange(3))


def _pick_weather(rng, v, vocab):
    return ask_scene(v, "weather", rng.randrange(3))


# (kind, weight, is one of the six templates). Template kinds make ~22% of the questions, as in
# the paper (§2.1); verify_rel and exist_attr_or look like templates but are not.
QUESTION_KINDS: tuple[tuple[str, Picker, float, bool], ...] = (
    ("side", _pick_side, 2.5, True),
    ("color", _pick_color, 5.0, True),
    ("exist_or", _pick_exist_or, 3.0, True),
    ("exist_near", _pick_exist_near, 3.0, True),
    ("relation", _pick_relation, 4.0, True),
    ("verify_rel", _pick_verify_rel, 5.0, False),
    ("exist_attr_or", _pick_exist_attr_or, 1.5, False),
    ("rel_object", _pick_rel_object, 12.0, False),
    ("rel_subject", _pick_rel_subject, 14.0, False),
    ("material", _pick_material, 6.0, False),
    ("verify_color", _pick_verify_color, 8.0, False),
    ("choose_color", _pick_choose_color, 6.0, False),
    ("exist_that", _pick_exist_that, 6.0, False),
    ("exist_and", _pick_exist_and, 5.0, False),
    ("rel_choose", _pick_rel_choose, 9.0, False),
    ("place", _pick_place, 6.0, False),
    ("weather", _pick_weather, 6.0, False),
)
TEMPLATE_KINDS = frozenset(k for k, _, _, t in QUESTION_KINDS if t)
_PICKERS = tuple(p for _, p, _, _ in QUESTION_KINDS)
_CUM = tuple(sum(w for _, _, w, _ in QUESTION_KINDS[: i + 1]) for i in range(len(QUESTION_KINDS)))


def _cum_weights(template_weight: float) -> tuple[float, ...]:
    total, out = 0.0, []
    for _, _, w, is_template in QUESTION_KINDS:
        total += w * (template_weight if is_template else 1.0)
        out.append(total)
    return tuple(out)


def make_questions(rng: random.Random, v: GraphView, vocab: SynthVocabulary, count: int,
                   *, template_weight: float = 1.0) -> list[QuestionParts]:
    """`count` questions about one graph; a kind the graph cannot support is redrawn.

    `template_weight` multiplies the weight of the six template kinds (the bundled sample uses
    more of them than GQA has, because it exists to exercise the engine).
    """
    cum = _CUM if template_weight == 1.0 else _cum_weights(template_weight)
    out: list[QuestionParts] = []
    asked: set[str] = set()
    while len(out) < count:
        parts = None
        for _ in range(12):
            parts = rng.choices(_PICKERS, cum_weights=cum, k=1)[0](rng, v, vocab)
            if parts is not None and parts.question not in asked:
                break
            parts = None
        if parts is None:  # always possible: a yes/no existence question
            parts = _pick_exist_that(rng, v, vocab)
        asked.add(parts.question)
        out.append(parts)
    return out


# --------------------------------------------------------------------------- datasets


# Images per independently seeded chunk. Fixed (not derived from the worker count) so that the
# data depends only on (n_images, n_questions, seed) however many processes write it.
CHUNK_IMAGES = 1000


def _chunks(n_images: int) -> list[tuple[int, int]]:
    return [(s, min(s + CHUNK_IMAGES, n_images)) for s in range(0, n_images, CHUNK_IMAGES)]


def _iter_chunk(start: int, stop: int, n_images: int, n_questions: int, seed: int,
                noise: Noise = DEFAULT_NOISE) -> Iterator[tuple[str, Graph, dict[str, Question]]]:
    vocab = load_vocabulary()
    # The label is part of the seed: another label would change every synthetic dataset, and with
    # it the benchmarks' cached data and the figures measured on it.
    rng = random.Random(f"contrastgen.synth/{seed}/{start}")  # str seeds hash with SHA-512: stable
    qnum = start * n_questions // n_images
    stripped = noise.no_program_share
    for i in range(start, stop):
        image_num = 1_000_000 + i
        image_id = str(image_num)
        graph = make_graph(rng, image_num, vocab, noise)
        count = (i + 1) * n_questions // n_images - i * n_questions // n_images
        questions: dict[str, Question] = {}
        for parts in make_questions(rng, GraphView.of(graph), vocab, count):
            qid = str(10_000_000 + qnum)
            qnum += 1
            keep = not stripped or rng.random() >= stripped
            questions[qid] = parts.record(qid, image_id, program=keep, annotations=keep)
        yield image_id, graph, questions


def _check_sizes(n_images: int, n_questions: int) -> None:
    if n_images <= 0 or n_questions < 0:
        raise ValueError("n_images must be positive and n_questions non-negative")
    if n_images > 8_999_999:
        raise ValueError("at most 8,999,999 images (image ids are 7 digits)")


def iter_dataset(n_images: int, n_questions: int, seed: int = 0, *,
                 noise: Noise = DEFAULT_NOISE) -> Iterator[tuple[str, Graph, dict[str, Question]]]:
    """Yield (image id, scene graph, its questions) one image at a time, deterministically.

    Questions are spread evenly: image i gets floor((i+1)Q/N) - floor(iQ/N) of them. `noise`
    sets the share of duplicated objects, contradictory edges, all-pairs left/right images and
    questions without programs (`Noise`; `CLEAN` for none).
    """
    _check_sizes(n_images, n_questions)
    for start, stop in _chunks(n_images):
        yield from _iter_chunk(start, stop, n_images, n_questions, seed, noise)


def make_dataset(n_images: int, n_questions: int, seed: int = 0, *,
                 noise: Noise = DEFAULT_NOISE) -> tuple[dict[str, Question], dict[str, Graph]]:
    """(questions, scene graphs) in GQA format, in memory; for tests and small benchmarks."""
    questions: dict[str, Question] = {}
    graphs: dict[str, Graph] = {}
    for image_id, graph, qs in iter_dataset(n_images, n_questions, seed, noise=noise):
        graphs[image_id] = graph
        questions.update(qs)
    return questions, graphs


def _inner(obj: dict[str, Any]) -> bytes:
    """The members of a JSON object without its braces, for writing one object in chunks."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)[1:-1]


def _chunk_bytes(task: tuple[int, int, int, int, int, Noise]) -> tuple[bytes, bytes]:
    """One chunk, serialised: (question members, scene-graph members). Runs in a worker."""
    questions: dict[str, Question] = {}
    graphs: dict[str, Graph] = {}
    for image_id, graph, qs in _iter_chunk(*task):
        graphs[image_id] = graph
        questions.update(qs)
    return _inner(questions), _inner(graphs)


def write_dataset(out_dir: str | Path, n_images: int, n_questions: int, seed: int = 0,
                  *, workers: int | None = None, noise: Noise = DEFAULT_NOISE) -> tuple[Path, Path]:
    """Write questions.json and scene_graphs.json into `out_dir`, streaming, atomically.

    Both files are single JSON objects exactly like GQA's, assembled chunk by chunk in id order
    (ids increase, so the bytes equal one sorted dump of `make_dataset(...)`). Chunks are generated
    by `workers` processes (default: all CPUs) and written in order, so at most a few chunks are in
    memory at once. Nothing is left behind if generation fails.
    """
    _check_sizes(n_images, n_questions)
    out = Path(out_dir)
    qpath, gpath = out / "questions.json", out / "scene_graphs.json"
    tasks = [(start, stop, n_images, n_questions, seed, noise) for start, stop in _chunks(n_images)]
    workers = max(1, min(workers or os.cpu_count() or 1, len(tasks)))
    with contextlib.ExitStack() as stack:
        qf = stack.enter_context(atomic_file(qpath))
        gf = stack.enter_context(atomic_file(gpath))
        if workers > 1:
            pool = stack.enter_context(multiprocessing.get_context("fork").Pool(workers))
            results: Iterator[tuple[bytes, bytes]] = pool.imap(_chunk_bytes, tasks)
        else:
            results = map(_chunk_bytes, tasks)
        qf.write(b"{")
        gf.write(b"{")
        q_first = True
        for i, (qbytes, gbytes) in enumerate(results):
            gf.write((b"," if i else b"") + gbytes)
            if qbytes:
                qf.write((b"" if q_first else b",") + qbytes)
                q_first = False
        qf.write(b"}\n")
        gf.write(b"}\n")
    return qpath, gpath
