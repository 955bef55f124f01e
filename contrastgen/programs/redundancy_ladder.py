"""GQA's redundancy ladder (Super-CLEVR, Li et al. CVPR 2023, section 5.3 and Table 3): each GQA
question with its redundant operations removed one at a time, level 0 the original, level n with n
removed, up to the most that can be removed.

Why a ladder of proven rungs and not a rewrite: the paper "progressively removed the redundant
operations from the reasoning program ... and then regenerated questions using a
program-to-question generator", so a model's accuracy drop can be read as its reliance on the
redundant words. That reading is only fair if every rung asks the same thing: here each level is
made from the one before by the program path's rd- edit (`ProgramEditor.perturb`, its
invariances that drop a `filter`: "the white car" -> "the car" where the car is the only car),
which proves the reference still picks out the same objects, the answer is unchanged and the
words still read; `verify` re-proves each rung against the level before it. A question whose
original program does not execute to its gold answer on the graph is refused (counted by reason),
since nothing built on it is proven; one with no redundant operation stays at level 0, counted.
A proven removal is still no rung where its words would stop saying exactly its program: one word
may say a value for two references ("Do you see any white street signs or cars?", GQA filtering
`white` on both), and dropping it with one of the filters leaves the other unsaid
(`programs.said_filters`; counted in `removals_refused`).

Removal order, where several steps are redundant at once (two references, each with a redundant
attribute): `first` takes the earliest step of the program, `last` the latest, `seeded` draws
one with an RNG seeded by (seed, question id, level). Each rung is re-proven from the level it
edits, so the order changes which words go first, never whether a rung holds.

A rung may also remove a redundant relation with the object it relates to ("the bus behind the
cyan car" -> "the bus", `programs.edits.relation_removal`): the subject's name alone must denote
on the graph the objects the relation picked, and the relation must be said as one run of words
after the subject's noun. That edit is the ladder's own (the editor here is given it beside
`EDITS`), so `generate` makes what it made.

Why here, among the program path's modules: the ladder is the program editor run again on its own
output, a generator feature; `ood gqa-redundancy` writes it, and `evaluate --ood` scores models
on it (`ood.gqa_redundancy_eval`) as on the OOD splits.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contrastgen.datasets.gqa import load_questions, load_scene_graphs, semantic_str
from contrastgen.datasets.ladder_files import LADDER, level_file
from contrastgen.errors import InputError
from contrastgen.files.atomic import atomic_dir
from contrastgen.files.manifest import GQA_REDUNDANCY_LADDER, write_manifest
from contrastgen.jsonio import write_json, write_text
from contrastgen.language.lexicon import Lexicon
from contrastgen.perturb import Perturbation, Refusal, normalize_question
from contrastgen.programs.edits import EDITS, ProgramEditor
from contrastgen.programs.edits.relation_removal import DropRedundantRelation
from contrastgen.programs.said_filters import unsaid_filters
from contrastgen.scene.index import SceneIndex
from contrastgen.terminal.progress import counted
from contrastgen.terminal.progress import progress as progress_bar

BENCHMARK = "gqa-redundancy"
ORDERS = ("first", "last", "seeded")
LEVEL_ID = "_rd"  # level n of question Q is `Q_rd<n>`; level 0 keeps Q's own id
# the editor's refusals that leave the original itself unproven: such a question has no level 0
_UNPROVEN = ("program_mismatch", "not_executable", "answer_mismatch", "original_presupposition")
# what GQA records say of the original's words, which no longer fit a rung's words
_ORIGINAL_ONLY = ("annotations", "entailed", "equivalent", "fullAnswer", "semanticStr")
# the program path's edits and the relation removal, which only the ladder makes
LADDER_EDITS = (*EDITS, DropRedundantRelation())
_SCENES_KEPT = 256  # scene indexes kept for the next questions: questions come roughly by image
# why a proven removal is still no rung (`LadderBuild.removals_refused`)
WORDS_UNSAID = "words drop or add a filter the program keeps"
REMOVAL_REFUSALS = (WORDS_UNSAID,)

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class LadderConfig:
    order: str = "first"  # which redundant step a rung removes when several are: ORDERS
    seed: int = 0
    max_level: int | None = None  # stop climbing here (None: as far as removals are proven)


@dataclass
class Rung:
    """One level above 0: the question with one more redundant operation removed."""

    level: int
    question: str
    semantic: list[dict[str, Any]]
    answer: str
    change: dict[str, Any]
    evidence: dict[str, Any]
    removed_operation: str  # the filter's operation ("filter color")
    candidates: int  # how many redundant steps the level below offered


@dataclass
class Ladder:
    """One question's ladder: its rungs above level 0, and why it stopped where it did."""

    question_id: str
    rungs: list[Rung]
    stopped: str  # "no redundant operation left", "max level", or the editor's refusal
    # proven removals left out, by reason (WORDS_UNSAID), at every level climbed
    refused_removals: Counter[str] = field(default_factory=Counter)


@dataclass
class LadderBuild:
    levels: list[dict[str, dict[str, Any]]]  # level -> {question id: GQA record with its `ladder`}
    refused: Counter[str] = field(default_factory=Counter)
    stopped: Counter[str] = field(default_factory=Counter)
    removed: dict[int, Counter[str]] = field(default_factory=dict)  # level -> removed operations
    ties: Counter[int] = field(default_factory=Counter)  # level -> rungs chosen among several
    removals_refused: Counter[str] = field(default_factory=Counter)  # proven removals that are no rung, by reason
    input_questions: int = 0
    config: LadderConfig = field(default_factory=LadderConfig)

    def stats(self) -> dict[str, Any]:
        counts = [len(level) for level in self.levels]
        deepest = Counter(r[LADDER]["deepest_level"] for r in self.levels[0].values())
        return {
            "benchmark": BENCHMARK,
            "order": self.config.order, "seed": self.config.seed, "max_level": self.config.max_level,
            "input_questions": self.input_questions,
            "questions_per_level": {str(n): c for n, c in enumerate(counts)},
            "reaching": {"1": counts[1] if len(counts) > 1 else 0, "2": counts[2] if len(counts) > 2 else 0,
                         "3+": counts[3] if len(counts) > 3 else 0},
            "deepest_level": {str(n): deepest[n] for n in sorted(deepest)},
            "refused": dict(sorted(self.refused.items())),
            "stopped": dict(sorted(self.stopped.items())),
            "removed_operations": {str(n): dict(sorted(c.items())) for n, c in sorted(self.removed.items())},
            "rungs_chosen_among_several": {str(n): c for n, c in sorted(self.ties.items())},
            "removals_refused": {reason: self.removals_refused[reason] for reason in REMOVAL_REFUSALS},
            "files": [level_file(n) for n in range(len(counts))],
        }


def level_id(question_id: str, level: int) -> str:
    return question_id if level == 0 else f"{question_id}{LEVEL_ID}{level}"


def _is_removal(p: Perturbation, below: list[dict[str, Any]]) -> bool:
    """An editor result that is an rd- edit: a proven invariance that drops one filter step, or a
    relation with the steps that make its object."""
    change = p.change
    if not p.invariance or change.get("to") != "" or str(change.get("from", "")) == "":
        return False
    steps = len(p.program.get("semantic") or [])
    if change.get("kind") == "attribute":
        return steps == len(below) - 1
    return change.get("kind") == "relation" and steps < len(below)


def _words_say_program(p: Perturbation, below: Mapping[str, Any]) -> bool:
    """A rung's words say exactly its program: no filter value the removal leaves in the program
    goes unsaid, and none it takes out stays said ("Do you see any white street signs or cars?"
    -> "... any street signs or cars?" while the cars' `filter color: white` stays is no rung)."""
    return not unsaid_filters(str(below["question"]), below["semantic"], p.question, p.program["semantic"])


def _step_of(change: Mapping[str, Any]) -> int:
    return int(str(change["slot"])[4:])


def _choose(found: list[Perturbation], order: str, rng: random.Random) -> Perturbation:
    ranked = sorted(found, key=lambda p: _step_of(p.change))
    if order == "last":
        return ranked[-1]
    if order == "seeded":
        return rng.choice(ranked)
    return ranked[0]


def climb(editor: ProgramEditor, question_id: str, question: Mapping[str, Any], config: LadderConfig
          ) -> Ladder:
    """The question's rungs, each the rd- edit of the one below, chosen by `config.order`.

    Raises Refusal when the original itself is not proven (the editor's reason)."""
    rungs: list[Rung] = []
    refused: Counter[str] = Counter()
    below: dict[str, Any] = {"question": question["question"], "answer": question["answer"],
                             "imageId": question.get("imageId"), "semantic": question["semantic"]}
    if question.get("annotations") is not None:
        below["annotations"] = question["annotations"]  # the original's words only
    while config.max_level is None or len(rungs) < config.max_level:
        level = len(rungs)
        try:
            # every edit the editor can prove (no `max_k`), so that no contrast takes the rank an rd-
            # invariance needs (invariances only fill the ranks contrasts leave: `perturb.Ranking`)
            found = editor.perturb(level_id(question_id, level), below, max_k=None, seed=config.seed,
                                   existing={normalize_question(below["question"])})
        except Refusal as exc:
            if exc.reason not in _UNPROVEN:  # the editor found no edit at all, so no removal
                return Ladder(question_id, rungs, "no redundant operation left", refused)
            if level == 0:
                raise
            return Ladder(question_id, rungs, f"level {level} refused by the editor: {exc.reason}", refused)
        proven = [p for p in found if _is_removal(p, below["semantic"])]
        removals = [p for p in proven if _words_say_program(p, below)]
        if len(removals) < len(proven):
            refused[WORDS_UNSAID] += len(proven) - len(removals)
        if not removals:
            return Ladder(question_id, rungs, "no redundant operation left", refused)
        rng = random.Random(f"{config.seed}/{question_id}/{level + 1}")
        p = _choose(removals, config.order, rng)
        gone = below["semantic"][_step_of(p.change)]
        rungs.append(Rung(level + 1, p.question, p.program["semantic"], p.answer, p.change, p.evidence,
                          str(gone.get("operation", "")), len(removals)))
        below = {"question": p.question, "answer": p.answer, "imageId": question.get("imageId"),
                 "semantic": p.program["semantic"]}
    return Ladder(question_id, rungs, "max level", refused)


def _level_record(original: Mapping[str, Any], question_id: str, ladder: Ladder, level: int) -> dict[str, Any]:
    """A GQA-format record of the question at `level`, with the chain of removals that made it."""
    deepest = len(ladder.rungs)
    if level == 0:
        out = dict(original)
        out[LADDER] = {"original_id": question_id, "level": 0, "deepest_level": deepest, "chain": []}
        return out
    rung = ladder.rungs[level - 1]
    out = {k: v for k, v in original.items() if k not in _ORIGINAL_ONLY}
    out.update({"question": rung.question, "answer": rung.answer, "semantic": rung.semantic,
                "semanticStr": semantic_str(rung.semantic)})
    chain = [{"level": r.level, "step": _step_of(r.change), "operation": r.removed_operation,
              "value": r.change["from"], "question": r.question} for r in ladder.rungs[:level]]
    out[LADDER] = {"original_id": question_id, "level": level, "deepest_level": deepest,
                     "previous_id": level_id(question_id, level - 1), "chain": chain,
                     "kind": "invariance", "change": rung.change, "evidence": rung.evidence,
                     "candidates": rung.candidates}
    return out


def build_ladder(questions: Mapping[str, dict[str, Any]], graphs: Mapping[str, dict[str, Any]],
                 config: LadderConfig | None = None, lex: Lexicon | None = None, *,
                 progress: bool = False) -> LadderBuild:
    """Every question's ladder, in the questions' order; one scene index per image. `progress`: a
    bar on a terminal, advanced per question."""
    config = config or LadderConfig()
    if config.order not in ORDERS:
        raise InputError(f"unknown removal order {config.order!r}; choose from {', '.join(ORDERS)}")
    lex = lex or Lexicon.load()
    build = LadderBuild(levels=[{}], input_questions=len(questions), config=config)
    scenes: dict[str, SceneIndex] = {}
    with progress_bar("climbing ladders", len(questions), enabled=progress) as advance:
        for qid, q in counted(questions.items(), advance):
            image = str(q.get("imageId", ""))
            semantic = q.get("semantic")
            if not isinstance(semantic, list) or not semantic:
                build.refused["no program"] += 1
                continue
            if not isinstance(q.get("answer"), str) or not q["answer"].strip():
                build.refused["no answer"] += 1
                continue
            graph = graphs.get(image)
            if graph is None:
                build.refused["no scene graph"] += 1
                continue
            scene = scenes.get(image)
            if scene is None:
                if len(scenes) >= _SCENES_KEPT:
                    scenes.clear()
                scene = scenes.setdefault(image, SceneIndex.build(image, graph, lex))
            try:
                ladder = climb(ProgramEditor(scene, graph, lex, edits=LADDER_EDITS), qid, q, config)
            except Refusal as exc:
                build.refused[exc.reason] += 1
                continue
            build.stopped[ladder.stopped] += 1
            build.removals_refused.update(ladder.refused_removals)
            for level in range(len(ladder.rungs) + 1):
                while len(build.levels) <= level:
                    build.levels.append({})
                record_id = level_id(qid, level)
                if level and record_id in questions:
                    raise InputError(f"the ladder names its level {level} {record_id!r}, an id the input already has",
                                     record=f"question {qid}")
                build.levels[level][record_id] = _level_record(q, qid, ladder, level)
            for rung in ladder.rungs:
                build.removed.setdefault(rung.level, Counter())[rung.removed_operation] += 1
                if rung.candidates > 1:
                    build.ties[rung.level] += 1
    return build


def render_markdown(stats: Mapping[str, Any]) -> str:
    lines = ["# GQA redundancy ladder", "",
             f"{stats['input_questions']} input questions; removal order `{stats['order']}` (seed {stats['seed']}).",
             "", "| level | questions | redundant operations removed |", "|---|---|---|"]
    for level, n in stats["questions_per_level"].items():
        removed = stats["removed_operations"].get(level, {})
        lines.append(f"| {level} | {n} | {', '.join(f'{k} {v}' for k, v in removed.items()) or '-'} |")
    reach = stats["reaching"]
    lines += ["", f"Reaching level 1: {reach['1']}, level 2: {reach['2']}, level 3 or more: {reach['3+']}.", ""]
    lines.append("Refused (no level 0): " + (", ".join(f"{k} {v}" for k, v in stats["refused"].items()) or "none") + ".")
    lines.append("Proven removals that are no rung: " + (", ".join(
        f"{k} {v}" for k, v in stats.get("removals_refused", {}).items()) or "none") + ".")
    lines.append("Where the ladders stopped: " + (", ".join(f"{k} {v}" for k, v in stats["stopped"].items())
                                                   or "none") + ".")
    return "\n".join(lines) + "\n"


def write_ladder(build: LadderBuild, out_dir: PathLike) -> dict[str, Any]:
    """level_<n>.json (GQA question format, each record with its `ladder` evidence), stats.json and
    stats.md, written as one directory that appears whole."""
    stats = build.stats()
    with atomic_dir(out_dir) as tmp:
        for n, level in enumerate(build.levels):
            write_json(tmp / level_file(n), level)
        write_json(tmp / "stats.json", stats, indent=True)
        write_text(tmp / "stats.md", render_markdown(stats))
        write_manifest(tmp, GQA_REDUNDANCY_LADDER, "contrastgen ood gqa-redundancy")
    return stats


def run_gqa_redundancy(questions: PathLike, scene_graphs: PathLike, out_dir: PathLike,
                       config: LadderConfig | None = None, *, progress: bool = False) -> dict[str, Any]:
    """Read GQA questions (a file or a folder of shards) and scene graphs, build, write; the stats."""
    build = build_ladder(load_questions(questions), load_scene_graphs(scene_graphs), config, progress=progress)
    return write_ladder(build, Path(out_dir))
