"""The contrast-set engine for one question: match -> ground -> propose and prove (template
handlers) -> phrase -> dedupe.

Library entry points (the CLI and the HTTP service call these, through `contrastgen.run` for
whole datasets; neither holds generation logic of its own):

    engine = Engine.load()
    corpus = engine.build_corpus(scene_graphs)
    results = engine.perturb_question(qid, question, scene_graph, corpus=corpus, max_k=5, seed=0)
        # one PerturbResult per matched template (the two "Is the X Rel the Y" templates both
        # match the same question), each its own line of contrast_sets.jsonl
    result = engine.perturb(qid, question, scene_graph, ...)   # the first of those, for callers
        # that want one answer per question; pass templates=[...] to pick one
    gen = contrastgen.run.generate.generate(engine, questions, scene_graphs, max_k=5, workers=2)

Determinism: each (question, template) gets its own RNG seeded from (seed, question id,
template id), so results do not depend on processing order, sharding or the number of workers.
Perturbation ids are `<question id>_<template suffix><rank>`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import regex

from contrastgen.answers import normalize_answer
from contrastgen.errors import InputError
from contrastgen.language.lexicon import Lexicon
from contrastgen.language.nounphrase import fits
from contrastgen.language.nounphrase import parse_cached as parse
from contrastgen.programs.edits import PROGRAM_PATH, EditRefusal, ProgramEditor
from contrastgen.programs.gqa import GqaExecutor, ProgramRefusal
from contrastgen.records import contrast_set_record
from contrastgen.scene.corpus import Corpus
from contrastgen.scene.ground import denoted_ids, ground_slots
from contrastgen.scene.index import SceneIndex
from contrastgen.scene.program import ProgramReading, edit_program, read_program
from contrastgen.templates.agreement import agreeing_reading
from contrastgen.templates.base import Candidate, Context, Refusal
from contrastgen.templates.patterns import Match, Template, load_templates, match_all
from contrastgen.templates.registry import Binding, bind

NP_SLOTS = ("x", "y")
_NORM = regex.compile(r"[^\p{L}\p{N} ]+")
_ASCII_PUNCT = str.maketrans({c: " " for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"})

# Every reason a (question, template) can end without perturbations; stats.md counts them and a
# test holds the handlers to this list, so a new reason cannot appear undocumented.
MODES = ("templates", "programs", "both")
REASONS = ("no_answer", "no_match", "no_scene_graph", "not_grounded", "ambiguous", "answer_mismatch",
           "no_distractor", "duplicate", "unannotated_prone", "unsupported_phrase", "no_relation",
           "no_opposite", "inconsistent_graph", "program_mismatch", "not_executable", "unaligned",
           "no_argument", "original_presupposition", "uninformative_answer", "attribute_kind")


def normalize_question(text: str) -> str:
    """The form in which two questions count as the same question."""
    low = text.lower()
    if low.isascii():  # the common case, without a regex
        return " ".join(low.translate(_ASCII_PUNCT).split())
    return " ".join(_NORM.sub(" ", low).split())


@dataclass
class PerturbResult:
    question_id: str
    image_id: str
    question: str
    answer: str
    template: str | None
    slots: dict[str, str] = field(default_factory=dict)
    grounding: dict[str, Any] = field(default_factory=dict)
    perturbations: list[dict[str, Any]] = field(default_factory=list)
    reason: str | None = None
    types: dict[str, Any] = field(default_factory=dict)  # the question's GQA types, if it has them
    program: list[dict[str, Any]] | None = None  # the original's program, where the question has one

    def to_record(self) -> dict[str, Any] | None:
        """The contrast_sets.jsonl line, or None when nothing was produced."""
        if not self.perturbations:
            return None
        return contrast_set_record(question_id=self.question_id, image_id=self.image_id,
                                   template=self.template, question=self.question, answer=self.answer,
                                   slots=self.slots, grounding=self.grounding,
                                   perturbations=self.perturbations, types=self.types,
                                   semantic=self.program)


class Engine:
    """Lexicon and templates, loaded once; cheap to share across requests and worker processes."""

    def __init__(self, lex: Lexicon, templates: tuple[Template, ...]):
        self.lex = lex
        self.templates = templates
        self.template_by_id = {t.id: t for t in templates}
        # Every template is bound to its handler here, so a rules entry without one fails at load.
        self.bindings: dict[str, Binding] = bind(templates)

    @classmethod
    def load(cls) -> Engine:
        return cls(Lexicon.load(), load_templates())

    def build_corpus(self, scene_graphs: Mapping[str, dict]) -> Corpus:
        return Corpus.from_graphs(scene_graphs, self.lex)

    def select_templates(self, ids: Iterable[str] | None) -> tuple[Template, ...]:
        if not ids:
            return self.templates
        unknown = [i for i in ids if i not in self.template_by_id]
        if unknown:
            raise InputError(f"unknown template id(s): {', '.join(unknown)}; "
                             f"known: {', '.join(self.template_by_id)}")
        wanted = set(ids)
        return tuple(t for t in self.templates if t.id in wanted)

    def match(self, text: str, templates: tuple[Template, ...] | None = None) -> list[Match]:
        """Every template whose pattern matches and whose slots are read with certainty.

        A pattern alone over-reads real phrasing ("Is the man near the catcher wearing jeans?"
        would give Y = "the catcher wearing jeans"); a match counts only when each slot fits the
        grammar its template gives it (`rules/templates.json`, `slots`).
        """
        found = match_all(text, self.templates if templates is None else templates)
        return [m for m in found if self.readable(m)]

    def readable(self, m: Match) -> bool:
        return all(fits(parse(m.spans[s].text, self.lex), grammar, self.lex)
                   for s, grammar in m.template.slots.items())

    # -- one question ----------------------------------------------------------------------------
    def perturb_question(self, question_id: str, question: dict[str, Any], scene_graph: dict | None, *,
                         corpus: Corpus | None = None, max_k: int = 5, seed: int = 0,
                         templates: Iterable[str] | None = None, scene: SceneIndex | None = None,
                         existing: set[str] | None = None,
                         matches: list[Match] | None = None, mode: str = "templates") -> list[PerturbResult]:
        """Perturb one question under every template it matches (one result per template) and,
        by `mode`, through its program (one more result, template "program").

        `mode`: "templates" (the paper's templates only), "programs" (the program path for a
        question that has a program, the templates for one that has none) or "both".
        `scene`, `existing` (normalised texts of the image's questions) and `matches` let a
        caller that processes a whole image share work between its questions.
        """
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        image_id = str(question.get("imageId", ""))
        text = str(question.get("question", ""))
        raw_answer = question.get("answer")
        types = question.get("types")
        base = {"question_id": question_id, "image_id": image_id, "question": text,
                "answer": raw_answer if isinstance(raw_answer, str) else "",
                "types": types if isinstance(types, dict) else {}}
        has_program = isinstance(question.get("semantic"), list) and bool(question.get("semantic"))
        # the original's program, carried by every set of a question that has one (a template
        # set's perturbations carry their edited programs; a reader compares the two)
        program = question["semantic"] if has_program else None
        by_program = mode != "templates" and has_program
        if mode == "programs" and has_program:
            matches = []
        elif matches is None:
            matches = self.match(text, self.select_templates(templates))
        if not matches and not by_program:
            return [PerturbResult(**base, template=None, reason="no_match")]
        if existing is None:
            existing = {normalize_question(text)}
        results = []
        for m in matches:
            res = PerturbResult(**base, template=m.template.id, slots=self.slots_of(m), program=program)
            if not isinstance(raw_answer, str) or not raw_answer.strip():
                res.reason = "no_answer"
            elif scene_graph is None and scene is None:
                res.reason = "no_scene_graph"
            else:
                if scene is None:
                    scene = SceneIndex.build(image_id, scene_graph, self.lex)
                self._perturb_match(res, m, question, scene, corpus, max_k, seed, existing)
            results.append(res)
        if by_program:
            res = PerturbResult(**base, template=PROGRAM_PATH, program=question["semantic"])
            if not isinstance(raw_answer, str) or not raw_answer.strip():
                res.reason = "no_answer"
            elif scene_graph is None:
                res.reason = "no_scene_graph"
            else:
                if scene is None:
                    scene = SceneIndex.build(image_id, scene_graph, self.lex)
                try:
                    res.perturbations = ProgramEditor(scene, scene_graph, self.lex).perturb(
                        question_id, question, max_k=max_k, seed=seed, existing=existing,
                        normalize=normalize_question)
                except EditRefusal as exc:
                    res.reason = exc.reason
            results.append(res)
        return results

    def perturb(self, question_id: str, question: dict[str, Any], scene_graph: dict | None, *,
                corpus: Corpus | None = None, max_k: int = 5, seed: int = 0,
                templates: Iterable[str] | None = None, mode: str = "templates") -> PerturbResult:
        """The first result that has perturbations (else the first result)."""
        results = self.perturb_question(question_id, question, scene_graph, corpus=corpus,
                                        max_k=max_k, seed=seed, templates=templates, mode=mode)
        return next((r for r in results if r.perturbations), results[0])

    def slots_of(self, m: Match) -> dict[str, str]:
        slots = dict(m.slots)
        for s in NP_SLOTS:
            if s in slots:
                np = parse(slots[s], self.lex)
                slots[f"{s}_head"] = np.head
        return slots

    def context(self, question_id: str, question: dict[str, Any], m: Match, scene: SceneIndex, *,
                corpus: Corpus | None = None, seed: int = 0) -> Context:
        """What a handler (or an answerer) works from: the slots read, checked against the
        question's program when it has one (a disagreement raises Refusal("program_mismatch")),
        and grounded."""
        nps = {s: parse(m.spans[s].text, self.lex) for s in NP_SLOTS if s in m.spans}
        semantic = question.get("semantic")
        reading = None
        if isinstance(semantic, list) and semantic:
            reading = agreeing_reading(m, nps, read_program(semantic), self.lex)
            if reading is None:
                raise Refusal("program_mismatch")
            if any(i not in scene.objects for ref in reading.slots.values() for i in ref.ids):
                raise Refusal("not_grounded")  # the program names an object the graph lacks
        return Context(question_id=question_id, question=question,
                       answer=normalize_answer(question.get("answer")), match=m, nps=nps,
                       grounding=ground_slots(question, nps, scene, self.lex, reading),
                       scene=scene, lex=self.lex, corpus=corpus,
                       rng=random.Random(f"{seed}:{question_id}:{m.template.id}"), reading=reading)

    def _perturb_match(self, res: PerturbResult, m: Match, question: dict[str, Any], scene: SceneIndex,
                       corpus: Corpus | None, max_k: int, seed: int, existing: set[str]) -> None:
        try:
            ctx = self.context(res.question_id, question, m, scene, corpus=corpus, seed=seed)
        except Refusal as r:
            res.reason = r.reason
            return
        res.grounding = {"via": next((g.via for g in ctx.grounding.values()), "none"),
                         **{s: list(g.ids) for s, g in ctx.grounding.items() if g.ok}}
        if ctx.reading is not None and (why := self._program_refusal(question, scene)) is not None:
            res.reason = why  # each perturbation carries the edited program, which must execute too
            return
        if self._presupposition_fails(ctx):
            res.reason = "original_presupposition"
            return
        if self._slot_runs_on(ctx):
            res.reason = "unsupported_phrase"
            return
        semantic, reading = question.get("semantic"), ctx.reading
        seen = set(existing)
        duplicates = 0
        try:
            for cand in self.bindings[m.template.id].perturb(ctx):
                key = normalize_question(cand.question)
                if key in seen:
                    duplicates += 1
                    continue
                seen.add(key)
                rank = len(res.perturbations) + 1
                perturbation = {
                    "question_id": f"{res.question_id}_{m.template.id_suffix}{rank}",
                    "question": cand.question, "answer": cand.answer, "rank": rank,
                    "change": cand.change, "evidence": cand.evidence}
                if reading is not None:
                    perturbation["semantic"] = self._edited_program(semantic, reading, cand, scene)
                perturbation["kind"] = "contrast"  # a template's edit always changes the answer
                res.perturbations.append(perturbation)
                if rank >= max_k:
                    break
        except Refusal as r:
            res.reason = r.reason
            return
        if not res.perturbations:
            res.reason = "duplicate" if duplicates else "no_distractor"

    def _slot_runs_on(self, ctx: Context) -> bool:
        """Is the word right after a noun slot the name of an object of the graph ("Do you see any
        sculptures or sky there?" in a graph with an object named "there")? The slot could then
        be read as running on to that noun, and the words would not say one thing."""
        words = ctx.match.question
        names = ctx.scene.by_name
        for slot in NP_SLOTS:
            if slot in ctx.match.spans:
                after = words[ctx.match.spans[slot].end:].split()
                if after and after[0].strip("?,.!").lower() in names:
                    return True
        return False

    def _program_refusal(self, question: dict[str, Any], scene: SceneIndex) -> str | None:
        """Why the question's own program does not execute to its gold answer on the graph, with
        its ids read as the verifier reads them (an object the step's name does not denote is a
        `program_mismatch`); None when it does."""
        try:
            got = GqaExecutor(scene, self.lex, scene.graph).run(question["semantic"]).answer
        except ProgramRefusal as exc:
            return "program_mismatch" if exc.reason in ("program_mismatch", "malformed_program") else "not_executable"
        return None if got == normalize_answer(question.get("answer")) else "answer_mismatch"

    def _presupposition_fails(self, ctx: Context) -> bool:
        """Does the original say "the X" where the words alone denote more objects than the one
        it is grounded to ("What color is the player?" with a catcher there too: a catcher is a
        player)? Its perturbations' kept references must denote one object under the words; the
        original must too, or its set compares a model against a question it cannot answer."""
        for slot, np in ctx.nps.items():
            g = ctx.grounding.get(slot)
            if not np.definite or np.modifier is not None or g is None or not g.ok or not g.ids:
                continue
            ids = {i for i in denoted_ids(np.head, ctx.scene, ctx.lex)
                   if all(a in ctx.scene.objects[i].attributes for a in np.attributes)}
            if ids - set(g.ids):
                return True
        return False

    def _edited_program(self, semantic: list[dict], reading: ProgramReading, cand: Candidate,
                        scene: SceneIndex) -> list[dict]:
        """The program of the perturbed question; a new object is named as the graph names it
        (GQA's programs do), or by its singular when the graph has none."""
        change = cand.change
        name = change["to"] if change["to"] in scene.by_name else self.lex.singular(change["to"])
        return edit_program(semantic, reading, change["kind"], change["slot"],
                            name=name, ids=cand.ids, relation=change["to"])


__all__ = ["Engine", "PerturbResult", "normalize_question", "REASONS"]
