"""`Engine`: the lexicon and the templates, loaded once, and one GQA question taken through the
paths its `mode` asks (the templates it matches, its program's edits).

Each path only proposes; `contrastgen.perturb.Ranking` ranks and numbers what it proposes. The
engine reads a matched question (`Engine.context`: slots checked against the program, grounded);
what is done with that reading, the template path's checks of the original (its program, its
presuppositions) and its handler's proposals, lives in `engine.template_path`, which never sees
the engine; the program path is `programs.edits`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from contrastgen.answers import normalize_answer
from contrastgen.datasets.gqa_program import parsed
from contrastgen.engine.template_path import NP_SLOTS, perturb_match
from contrastgen.errors import InputError
from contrastgen.language.lexicon import Lexicon
from contrastgen.language.nounphrase import fits
from contrastgen.language.nounphrase import parse_cached as parse
from contrastgen.perturb import (
    PROGRAM_PATH,
    PerturbResult,
    Refusal,
    normalize_question,
    seeded_rng,
)
from contrastgen.programs.edits import ProgramEditor
from contrastgen.scene.corpus import Corpus
from contrastgen.scene.ground import ground_slots
from contrastgen.scene.index import SceneIndex
from contrastgen.scene.program_reading import read_program
from contrastgen.templates.base import Context
from contrastgen.templates.patterns import Match, Template, load_templates, match_all
from contrastgen.templates.program_agreement import agreeing_reading
from contrastgen.templates.registry import Binding, bind

MODES = ("templates", "programs", "both")
# The template path's seed string (`perturb.seeded_rng`): fixed, since changing it changes every output.
TEMPLATE_SEED = "{seed}:{question}:{template}"


class Engine:
    """Lexicon and templates, loaded once; cheap to share across requests and worker processes."""

    def __init__(self, lex: Lexicon, templates: tuple[Template, ...]):
        self.lex = lex
        self.templates = templates
        self.template_by_id = {t.id: t for t in templates}
        # Every template is bound to its handler here, so a rules entry without one fails at load.
        self.bindings: dict[str, Binding] = bind(templates)
        self._matchers: dict[tuple[str, ...], Callable[[str], list[Match]]] = {}

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
        return matched(text, self.templates if templates is None else templates, self.lex)

    def matcher(self, templates: tuple[Template, ...]) -> Callable[[str], list[Match]]:
        """`match` over `templates` (the engine's own, as `select_templates` gives them),
        remembered per question text: a million GQA questions repeat about a third of the texts
        a template may match ("What color is the car?"), and a match is a function of the text
        alone. The lists given are shared between the texts' questions: never changed."""
        if any(self.template_by_id.get(t.id) is not t for t in templates):
            raise ValueError("matcher: templates must be the engine's own (select_templates)")
        key = tuple(t.id for t in templates)
        found = self._matchers.get(key)
        if found is None:
            found = self._matchers[key] = _RememberedMatches(templates, self.lex).__getitem__
        return found

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
        once: dict[str, Any] = {}  # what the template path reads of the original, the same for each match
        if by_program:  # parsed once for both paths; the program path also takes the template path's run
            once["steps"] = parsed(program)
        for m in matches:
            res = PerturbResult(**base, template=m.template.id, slots=self.slots_of(m), program=program)
            if not isinstance(raw_answer, str) or not raw_answer.strip():
                res.reason = "no_answer"
            elif scene_graph is None and scene is None:
                res.reason = "no_scene_graph"
            else:
                if scene is None:
                    scene = SceneIndex.build(image_id, scene_graph, self.lex)
                try:
                    ctx = self.context(question_id, question, m, scene, corpus=corpus, seed=seed, once=once)
                except Refusal as r:
                    res.reason = r.reason
                else:
                    perturb_match(res, ctx, self.bindings[m.template.id], max_k, existing, once=once)
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
                # the template path's run is this one where its executor reads the same graph
                run = once.get("run") if scene.graph is scene_graph else None
                try:
                    res.perturbations = ProgramEditor(scene, scene_graph, self.lex).perturb(
                        question_id, question, max_k=max_k, seed=seed, existing=existing,
                        steps=once.get("steps"), original=run)
                except Refusal as exc:
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
                corpus: Corpus | None = None, seed: int = 0, once: dict[str, Any] | None = None) -> Context:
        """What a handler (or an answerer) works from: the slots read, checked against the
        question's program when it has one (a disagreement raises Refusal("program_mismatch")),
        and grounded. `once` keeps the program's reading for the question's other matches."""
        nps = {s: parse(m.spans[s].text, self.lex) for s in NP_SLOTS if s in m.spans}
        semantic = question.get("semantic")
        reading = None
        if isinstance(semantic, list) and semantic:
            once = {} if once is None else once
            if "reading" not in once:
                # parsed once: the reading and the original's run (`program_refusal`) share it
                if "steps" not in once:
                    once["steps"] = parsed(semantic)
                steps = once["steps"]
                once["reading"] = read_program(semantic, parsed=True) if steps is not None else None
            reading = agreeing_reading(m, nps, once["reading"], self.lex)
            if reading is None:
                raise Refusal("program_mismatch")
            if any(i not in scene.objects for ref in reading.slots.values() for i in ref.ids):
                raise Refusal("not_grounded")  # the program names an object the graph lacks
        return Context(question_id=question_id, question=question,
                       answer=normalize_answer(question.get("answer")), match=m, nps=nps,
                       grounding=ground_slots(question, nps, scene, self.lex, reading),
                       scene=scene, lex=self.lex, corpus=corpus,
                       make_rng=partial(seeded_rng, TEMPLATE_SEED, seed, question_id, m.template.id), reading=reading)


def matched(text: str, templates: tuple[Template, ...], lex: Lexicon) -> list[Match]:
    """`Engine.match`: the templates' patterns that match the text, each slot read with certainty."""
    return [m for m in match_all(text, templates) if readable(m, lex)]


def readable(m: Match, lex: Lexicon) -> bool:
    """Does each slot of the match fit the grammar its template gives it?"""
    return all(fits(parse(m.spans[s].text, lex), grammar, lex) for s, grammar in m.template.slots.items())


class _RememberedMatches(dict[str, list[Match]]):
    """The matches of each question text over some templates (`Engine.matcher`); a lookup that
    hits costs no Python call. Emptied when full, so a run of distinct texts costs bounded
    memory. It holds the templates and the lexicon, not the engine (which holds it)."""

    LIMIT = 1 << 16

    def __init__(self, templates: tuple[Template, ...], lex: Lexicon):
        super().__init__()
        self.templates, self.lex = templates, lex

    def __missing__(self, text: str) -> list[Match]:
        if len(self) >= self.LIMIT:
            self.clear()
        found = self[text] = matched(text, self.templates, self.lex)
        return found
