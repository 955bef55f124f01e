"""The template path for one (question, template) match: the checks the original must pass, the
handler's proposals ranked, and each kept perturbation's edited program.

Why the checks are here and not in the handlers: they are about the original question (its
program executes to its answer, its references pick out what its program says, no slot runs on
into a noun of the graph), the same for every template, and a set headed by an original that
fails them compares a model against a question with no certain answer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from contrastgen.answers import normalize_answer
from contrastgen.datasets.gqa_program import Step
from contrastgen.language.lexicon import Lexicon
from contrastgen.perturb import PerturbResult, Proposal, Ranking, Refusal, perturbation_id
from contrastgen.programs.executor import Execution, GqaExecutor, ProgramRefusal
from contrastgen.scene.ground import denoted_ids
from contrastgen.scene.index import SceneIndex
from contrastgen.scene.program_reading import ProgramReading, edit_program
from contrastgen.templates.base import Context
from contrastgen.templates.registry import Binding

NP_SLOTS = ("x", "y")


def perturb_match(res: PerturbResult, ctx: Context, binding: Binding, max_k: int, existing: set[str], *,
                  once: dict[str, Any] | None = None) -> None:
    """Fill `res` (one question under the template `ctx.match` matched) with its perturbations or
    its reason. `ctx` is the engine's reading of the question (slots checked against its program,
    grounded); `binding` the template's handler; `once` keeps what is decided of the original
    alone (its program's execution) for the question's other matches."""
    question, scene, m = ctx.question, ctx.scene, ctx.match
    res.grounding = {"via": next((g.via for g in ctx.grounding.values()), "none"),
                     **{s: list(g.ids) for s, g in ctx.grounding.items() if g.ok}}
    if ctx.reading is not None:
        once = {} if once is None else once
        if "program" not in once:
            once["program"], once["run"] = original_run(ctx.lex, question, scene, once.get("steps"))
        if once["program"] is not None:
            res.reason = once["program"]  # each perturbation carries the edited program, which must execute too
            return
    if presupposition_fails(ctx):
        res.reason = "original_presupposition"
        return
    if slot_runs_on(ctx):
        res.reason = "unsupported_phrase"
        return
    ranking = Ranking(existing, max_k)
    try:
        ranking.take(binding.perturb(ctx))
    except Refusal as r:
        res.reason = r.reason  # what was kept before the refusal stays
    semantic, reading = question.get("semantic"), ctx.reading
    for rank, proposal in enumerate(ranking.kept, 1):
        if reading is not None:
            proposal = replace(proposal, program={"semantic": edited_program(ctx.lex, semantic, reading, proposal,
                                                                             scene)})
        res.perturbations.append(proposal.numbered(perturbation_id(res.question_id, m.template.id_suffix, rank),
                                                   rank))
    if res.reason is None and not res.perturbations:
        res.reason = "duplicate" if ranking.duplicates else "no_distractor"


def slot_runs_on(ctx: Context) -> bool:
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


def program_refusal(lex: Lexicon, question: dict[str, Any], scene: SceneIndex,
                    steps: list[Step] | None = None) -> str | None:
    """Why the question's own program does not execute to its gold answer on the graph, with
    its ids read as the verifier reads them (an object the step's name does not denote is a
    `program_mismatch`); None when it does. `steps`: the program already parsed."""
    return original_run(lex, question, scene, steps)[0]


def original_run(lex: Lexicon, question: dict[str, Any], scene: SceneIndex,
                 steps: list[Step] | None = None) -> tuple[str | None, Execution | None]:
    """`program_refusal`, with the run it read the answer from (None where the program did not
    execute to an answer): `--mode both` hands it to the program path, which needs the same run."""
    try:
        executor = GqaExecutor(scene, lex, scene.graph)
        run = executor.run(question["semantic"]) if steps is None else executor.run_steps(steps)
        got = run.answer
    except ProgramRefusal as exc:
        return "program_mismatch" if exc.reason in ("program_mismatch", "malformed_program") else "not_executable", None
    return None if got == normalize_answer(question.get("answer")) else "answer_mismatch", run


def presupposition_fails(ctx: Context) -> bool:
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


def edited_program(lex: Lexicon, semantic: list[dict], reading: ProgramReading, proposal: Proposal,
                   scene: SceneIndex) -> list[dict]:
    """The program of the perturbed question; a new object is named as the graph names it
    (GQA's programs do), or by its singular when the graph has none."""
    change = proposal.change
    name = change["to"] if change["to"] in scene.by_name else lex.singular(change["to"])
    return edit_program(semantic, reading, change["kind"], change["slot"],
                        name=name, ids=proposal.ids, relation=change["to"])
