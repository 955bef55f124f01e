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
from dataclasses import dataclass, field
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
    splits = _Splits(graphs)
    for q in counted(questions, advance):
        splits.add(q)
    return splits.splits, splits.stats()


@dataclass
class _Question:
    """One question as the splits take it: its record, its reading, its scene, its program
    (read back from its words), that program's run and the program as the split writes it."""

    record: Mapping[str, Any]
    reading: Reading
    scene: ClevrScene
    program: list[dict[str, Any]]
    original: Execution
    written: list[dict[str, Any]]


@dataclass
class _Splits:
    """The three splits being built, question by question, and what their statistics count."""

    graphs: Mapping[str, dict[str, Any]]
    splits: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {level: [] for level in LEVELS})
    said: dict[str, list[int]] = field(default_factory=lambda: {level: [] for level in LEVELS})
    related: dict[str, list[int]] = field(default_factory=lambda: {level: [] for level in LEVELS})
    original_level: Counter[str] = field(default_factory=Counter)
    left_out: dict[str, Counter[str]] = field(default_factory=lambda: {"rd-": Counter(), "rd+": Counter()})
    relation_changes: dict[str, Counter[str]] = field(default_factory=lambda: {"rd-": Counter(), "rd+": Counter()})
    refused: dict[str, Counter[str]] = field(default_factory=lambda: {"rd-": Counter(), "rd+": Counter()})
    scenes: dict[str, ClevrScene] = field(default_factory=dict)

    def add(self, record: Mapping[str, Any]) -> None:
        """One question: itself in rd, and its rd- and rd+ rewrites (or itself where it is at
        that level already); counted where it is unread or a rewrite is left out."""
        q = self._read(record)
        if q is None:
            return
        self.emit(q, "rd", str(record["question"]), q.program)
        editor = Editor(q.reading, q.scene, q.original)
        key = f"{self._image(record)}|{record.get('question_index', '')}|{record['question']}"
        at_level = {level: self._add_level(q, editor, level, key) for level in ("rd-", "rd+")}
        self.original_level["minimal (already rd-)" if at_level["rd-"] else
                            "full (already rd+)" if at_level["rd+"] else "some redundancy (rd)"] += 1

    @staticmethod
    def _image(record: Mapping[str, Any]) -> str:
        return str(record.get("image") or record.get("imageId"))

    def _read(self, record: Mapping[str, Any]) -> _Question | None:
        """The question read back from its words and run on its scene; None (counted) where it
        is not read, its program does not run, or its part words are ambiguous."""
        image = self._image(record)
        reading = read_question(record)
        if not isinstance(reading, Reading):
            self.original_level[f"unread ({reading.reason})"] += 1
            return None
        scene = self.scenes.get(image) or self.scenes.setdefault(image, clevr_scene(image, self.graphs[image]))
        program = reading.program()
        original = execute(program, scene)
        if isinstance(original, Invalid):
            self.original_level["unread (program does not run)"] += 1
            return None
        if part_words_ambiguous(program, original):
            self.original_level["unread (part words ambiguous)"] += 1
            return None
        return _Question(record, reading, scene, program, original, engine_program(program, original))

    def _add_level(self, q: _Question, editor: Editor, level: str, key: str) -> bool:
        """The question's rewrite at `level` ("rd-" or "rd+") into its split, or the question
        itself where nothing is to be done; whether it is at that level already."""
        rewriter = RelationRewriter(q.reading, q.scene, q.original, key)
        edit = editor.whole_question(level)
        if level == "rd+":
            rewrite = _with_relations_added(q.reading, edit, rewriter) \
                if edit is not None or editor.at_level(level) else None
        else:
            both = _with_relations_dropped(rewriter, q.scene)
            rewrite, edit = (both[0], both[1]) if both is not None else (None, edit)
        self.refused[level].update(rewriter.refused)
        nothing_to_do = edit is None and rewrite is None and editor.at_level(level)
        if rewrite is not None and _part_words_ambiguous(rewrite.program, q.scene):
            self.left_out[level]["part words ambiguous"] += 1
        elif rewrite is not None and edit is not None and level == "rd-":
            self.emit(q, level, edit.question, edit.program, Rewrite(edit_reading(rewrite, edit), edit.program,
                                                                     edit.question, rewrite.changes))
        elif rewrite is not None:
            self.emit(q, level, rewrite.question, rewrite.program, rewrite)
        elif edit is not None:
            self.emit(q, level, edit.question, edit.program)
        elif nothing_to_do:
            self.emit(q, level, str(q.record["question"]), q.program)
        else:
            self.left_out[level]["the rewrite fails a check"] += 1
        return nothing_to_do

    def emit(self, q: _Question, level: str, question: str, said_program: list[dict[str, Any]],
             rewrite: Rewrite | None = None) -> None:
        """A question of the split `level`: its words, the program they say, and the relations a
        rewrite changed."""
        fields = rewrite.record_fields(q.reading.family, q.written, level) if rewrite is not None else None
        self.splits[level].append(_as_question(q.record, question, _as_written(said_program, q.scene), level, fields))
        self.said[level].append(attribute_filters(said_program))
        self.related[level].append(relations_said(said_program))
        if rewrite is not None:
            changes = self.relation_changes[level]
            changes["questions"] += 1
            changes["relations"] += len(rewrite.changes)
            if level == "rd-":  # a count or exist of nothing needs no relation; rd+ adds none to it
                changes["relations of an empty set"] += sum(1 for c in rewrite.changes if c.denotes == [])

    def stats(self) -> dict[str, Any]:
        return {
            "questions": {level: len(self.splits[level]) for level in LEVELS},
            "mean_attributes_said": {level: _mean(v) for level, v in self.said.items()},
            "mean_relations_said": {level: _mean(v) for level, v in self.related.items()},
            "relations_added": dict(sorted(self.relation_changes["rd+"].items())),
            "relations_dropped": dict(sorted(self.relation_changes["rd-"].items())),
            "relations_not_changed": {level: dict(sorted(c.items())) for level, c in self.refused.items()},
            "originals": dict(sorted(self.original_level.items())),
            "left_out": {level: dict(c) for level, c in self.left_out.items()},
        }


def _mean(values: list[int]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def edit_reading(rewrite: Rewrite, edit: Edit) -> Reading:
    """The reading of an attribute edit made on a rewritten question (its family and text)."""
    return Reading(rewrite.reading.family, rewrite.reading.text_index, edit.values, rewrite.reading.words,
                   rewrite.reading.choices)
