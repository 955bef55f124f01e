"""Super-CLEVR's question-redundancy splits (rd- / rd / rd+), made from existing questions.

The paper generates three datasets: rd (CLEVR's default: some redundant attributes, from random
sampling), rd- (every redundant attribute removed) and rd+ (every attribute said). From existing
questions the same three sets are made by rewriting each question: its program is read back from
its words (`datasets.clevr_reading`), and every reference is stripped to the attributes it needs
(rd-) or given all its object's attributes (rd+), with the same checks as a contrast set's
redundancy edits (`clevr.edits`): every reference still denotes the same object, the answer is
unchanged, the family's constraints hold, and the words read back to the program. A question that
is already at a level stands for itself there; one whose rewrite fails those checks is left out of
that split and counted, never approximated.

Relations move too, as far as the proof allows (`clevr.redundant_relations`): rd+ adds a
redundant relation to every reference that a family words with one ("the bus" -> "the bus that is
left of the large cyan metal car"), proven on the scene graph to leave what the reference denotes
unchanged, the question written in that family and read back; rd- drops a relation that changes
nothing the same way, then the attributes the shorter question does not need. The record then
names its new family and carries the evidence (`relations_added` / `relations_dropped`), which
`contrastgen verify` re-proves (`verify.superclevr_redundancy`).

Every program is written in CLEVR's format as Super-CLEVR's engine runs it, a part named as the
scene names it (`wheel_front_left`, not `front_left_wheel` as the words are read), as a contrast
set writes it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from contrastgen.clevr.edits import Edit, Editor
from contrastgen.clevr.evidence import engine_program, part_words_ambiguous
from contrastgen.clevr.executor import Execution, Invalid, execute
from contrastgen.clevr.redundant_relations import RelationRewriter, Rewrite, relations_said
from contrastgen.clevr.scene_view import ClevrScene, clevr_scene
from contrastgen.datasets.clevr_reading import Reading, read_question
from contrastgen.terminal.progress import Advance, counted, noop

LEVELS = ("rd-", "rd", "rd+")
_ATTRIBUTE_FILTERS = ("filter_size", "filter_color", "filter_material", "partfilter_size", "partfilter_color",
                      "partfilter_material")


def attribute_filters(program: list[dict[str, Any]]) -> int:
    """How many attributes a question says: its size/colour/material filters (a shape is a noun)."""
    return sum(1 for n in program if n["type"] in _ATTRIBUTE_FILTERS)


def _as_question(q: Mapping[str, Any], question: str, program: list[dict[str, Any]], level: str,
                 rewrite: dict[str, Any] | None = None) -> dict[str, Any]:
    out = {k: v for k, v in q.items() if k not in ("imageId", "program")}
    out.update({"question": question, "program": program, "redundancy": level})
    out.update(rewrite or {})
    return out


def _as_written(program: list[dict[str, Any]], scene: ClevrScene) -> list[dict[str, Any]]:
    """The program as the split writes it: each part named as the scene names it
    (`clevr.evidence.engine_program`), as a contrast set writes it, so Super-CLEVR's engine, which
    matches the scene's raw part names, runs it as it is."""
    execution = execute(program, scene)
    assert isinstance(execution, Execution)  # every emitted program is proven to run
    return engine_program(program, execution)


def _part_words_ambiguous(program: list[dict[str, Any]], scene: ClevrScene) -> bool:
    """A relation rewrite's part words checked as an edit's are (`Editor` checks its own)."""
    execution = execute(program, scene)
    return isinstance(execution, Execution) and part_words_ambiguous(program, execution)


def _with_relations_added(reading: Reading, edit: Edit | None, rewriter: RelationRewriter) -> Rewrite | None:
    """rd+'s relations, added to the question with rd+'s attributes (`edit`, or the question
    itself when it says every attribute already)."""
    return rewriter.add(edit.values if edit is not None else reading.values)


def _with_relations_dropped(rewriter: RelationRewriter, scene: ClevrScene) -> tuple[Rewrite, Edit | None] | None:
    """rd-'s dropped relations, then the attributes the shorter question does not need."""
    dropped = rewriter.drop()
    if dropped is None:
        return None
    execution = execute(dropped.program, scene)
    assert isinstance(execution, Execution)  # proven by the rewriter
    return dropped, Editor(dropped.reading, scene, execution).whole_question("rd-")


def redundancy_splits(questions: list[dict[str, Any]], graphs: Mapping[str, dict[str, Any]],
                      advance: Advance = noop) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """The three splits (CLEVR question records with their programs) and their statistics;
    `advance(1)` as each question is taken up (a progress bar's)."""
    splits: dict[str, list[dict[str, Any]]] = {level: [] for level in LEVELS}
    said: dict[str, list[int]] = {level: [] for level in LEVELS}
    related: dict[str, list[int]] = {level: [] for level in LEVELS}
    original_level: Counter[str] = Counter()
    left_out: dict[str, Counter[str]] = {"rd-": Counter(), "rd+": Counter()}
    relation_changes: dict[str, Counter[str]] = {"rd-": Counter(), "rd+": Counter()}
    refused: dict[str, Counter[str]] = {"rd-": Counter(), "rd+": Counter()}
    scenes: dict[str, ClevrScene] = {}

    def emit(level: str, question: str, said_program: list[dict[str, Any]], rewrite: Rewrite | None = None) -> None:
        fields = rewrite.record_fields(reading.family, written, level) if rewrite is not None else None
        splits[level].append(_as_question(q, question, _as_written(said_program, scene), level, fields))
        said[level].append(attribute_filters(said_program))
        related[level].append(relations_said(said_program))
        if rewrite is not None:
            relation_changes[level]["questions"] += 1
            relation_changes[level]["relations"] += len(rewrite.changes)
            if level == "rd-":  # a count or exist of nothing needs no relation; rd+ adds none to it
                relation_changes[level]["relations of an empty set"] += sum(1 for c in rewrite.changes if c.denotes == [])

    for q in counted(questions, advance):
        image = str(q.get("image") or q.get("imageId"))
        reading = read_question(q)
        if not isinstance(reading, Reading):
            original_level[f"unread ({reading.reason})"] += 1
            continue
        scene = scenes.get(image) or scenes.setdefault(image, clevr_scene(image, graphs[image]))
        program = reading.program()
        original = execute(program, scene)
        if isinstance(original, Invalid):
            original_level["unread (program does not run)"] += 1
            continue
        if part_words_ambiguous(program, original):
            original_level["unread (part words ambiguous)"] += 1
            continue
        written = engine_program(program, original)
        emit("rd", str(q["question"]), program)
        editor = Editor(reading, scene, original)
        key = f"{image}|{q.get('question_index', '')}|{q['question']}"
        at_level = {}
        for level in ("rd-", "rd+"):
            rewriter = RelationRewriter(reading, scene, original, key)
            edit = editor.whole_question(level)
            if level == "rd+":
                rewrite = _with_relations_added(reading, edit, rewriter) \
                    if edit is not None or editor.at_level(level) else None
            else:
                both = _with_relations_dropped(rewriter, scene)
                rewrite, edit = (both[0], both[1]) if both is not None else (None, edit)
            refused[level].update(rewriter.refused)
            nothing_to_do = edit is None and rewrite is None and editor.at_level(level)
            at_level[level] = nothing_to_do
            if rewrite is not None and _part_words_ambiguous(rewrite.program, scene):
                left_out[level]["part words ambiguous"] += 1
            elif rewrite is not None and edit is not None and level == "rd-":
                emit(level, edit.question, edit.program, Rewrite(edit_reading(rewrite, edit), edit.program,
                                                                  edit.question, rewrite.changes))
            elif rewrite is not None:
                emit(level, rewrite.question, rewrite.program, rewrite)
            elif edit is not None:
                emit(level, edit.question, edit.program)
            elif nothing_to_do:
                emit(level, str(q["question"]), program)
            else:
                left_out[level]["the rewrite fails a check"] += 1
        original_level["minimal (already rd-)" if at_level["rd-"] else
                       "full (already rd+)" if at_level["rd+"] else "some redundancy (rd)"] += 1
    stats = {
        "questions": {level: len(splits[level]) for level in LEVELS},
        "mean_attributes_said": {level: _mean(v) for level, v in said.items()},
        "mean_relations_said": {level: _mean(v) for level, v in related.items()},
        "relations_added": dict(sorted(relation_changes["rd+"].items())),
        "relations_dropped": dict(sorted(relation_changes["rd-"].items())),
        "relations_not_changed": {level: dict(sorted(c.items())) for level, c in refused.items()},
        "originals": dict(sorted(original_level.items())),
        "left_out": {level: dict(c) for level, c in left_out.items()},
    }
    return splits, stats


def _mean(values: list[int]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def edit_reading(rewrite: Rewrite, edit: Edit) -> Reading:
    """The reading of an attribute edit made on a rewritten question (its family and text)."""
    return Reading(rewrite.reading.family, rewrite.reading.text_index, edit.values, rewrite.reading.words,
                   rewrite.reading.choices)
