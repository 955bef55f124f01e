"""Perturbing a CLEVR-family question: one parameter changed (contrast), or a reference's
redundant attributes dropped or all of them said (invariance, Super-CLEVR's rd- and rd+).

An edit is kept only when everything the generator demanded of a question still holds and the
proof is complete:
- the edited program executes: every `unique` denotes exactly one object or part;
- its part words select the parts Super-CLEVR's engine selects by the raw name the program
  writes (`clevr.evidence.part_words_ambiguous`); an edit refused for that alone is counted in
  `Editor.refused` as `part_ambiguous`;
- the family's constraints hold (NULL parameters stay open, OUT_NEQ references stay different);
- it is not degenerate: as in CLEVR's `is_degenerate`, no `relate` could be dropped without
  changing the answer;
- a contrast changes the answer; a redundancy edit keeps both the answer and every reference's
  object;
- the words, written from the family's own text, read back to exactly the edited program, and
  are not already a question of the image (`perturb.Ranking.asked`, asked before the
  contrasts are shuffled, so the seeded order is over the edits that may be kept).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from contrastgen.clevr.evidence import part_words_ambiguous
from contrastgen.clevr.executor import Execution, Invalid, execute
from contrastgen.clevr.render import render
from contrastgen.clevr.scene_view import ClevrScene
from contrastgen.datasets.clevr_reading import (
    Reading,
    build_program,
    build_program_and_map,
    constraints_hold,
    is_null,
    null_value,
    read_question,
)
from contrastgen.datasets.clevr_templates import Family
from contrastgen.datasets.clevr_vocab import load_vocabulary

EDITABLE = ("Size", "Color", "Material", "Shape", "Relation")
CHANGE_KIND = {"Size": "attribute", "Color": "attribute", "Material": "attribute", "Shape": "object",
               "Relation": "relation"}
_REFERENCES = ("filter_unique", "relate_filter_unique", "partfilter_unique")
PART_AMBIGUOUS = "part_ambiguous"  # a refusal reason of the CLEVR family (`families.clevr.REASONS`)
_ATTRIBUTE_OF = {"Size": "size", "Color": "color", "Material": "material", "Shape": "shape"}


@dataclass(frozen=True)
class Edit:
    """One kept perturbation, with everything its record needs."""

    values: dict[str, str]
    program: list[dict[str, Any]]
    question: str
    answer: str
    invariance: bool
    change: dict[str, str]
    execution: Execution


def _alternatives(kind: str, value: str) -> list[str]:
    """Values a parameter may change to: the same type, and for shapes the same level (a CLEVR
    shape for a CLEVR shape, a Super-CLEVR category for a category, a model for a model)."""
    vocab = load_vocabulary()
    options = [v for v in vocab.values[kind] if v != value]
    if kind != "Shape":
        return options
    clevr = {"cube", "sphere", "cylinder"}
    categories = set(vocab.shape_category.values())
    if value in clevr:
        return [v for v in options if v in clevr]
    if value in categories:
        return [v for v in options if v in categories]
    return [v for v in options if v in vocab.shape_category]


def template_outputs(reading: Reading, values: Mapping[str, str]) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The program and, for each template node, the program node that holds its output."""
    return build_program_and_map(reading.family, values)


def _degenerate(program: list[dict[str, Any]], scene: ClevrScene, answer: Any) -> bool:
    for i, node in enumerate(program):
        if node["type"] == "relate":
            cut = [dict(n) for n in program]
            cut[i] = {"type": "scene", "inputs": [], "value_inputs": []}
            out = execute(cut, scene)
            if isinstance(out, Execution) and out.answer == answer:
                return True
    return False


def out_neq_holds(family: Family, at: Mapping[int, int], execution: Execution) -> bool:
    """The family's OUT_NEQ constraints on an execution: the references they name differ."""
    for c in family.constraints:
        if c["type"] == "OUT_NEQ":
            i, j = c["params"]
            if execution.outputs[at[i]] == execution.outputs[at[j]]:
                return False
    return True


class Editor:
    """Edits of one question on one scene."""

    def __init__(self, reading: Reading, scene: ClevrScene, original: Execution,
                 asked: Callable[[str], bool] = lambda question: False):
        self.reading = reading
        self.scene = scene
        self.original = original
        self.asked = asked  # whether the image already asks a question (the driver's rule)
        self.vocab = load_vocabulary()
        self._null_params = {c["params"][0] for c in reading.family.constraints if c["type"] == "NULL"}
        self.refused: Counter[str] = Counter()  # edits that held but for a reason worth counting

    def _try(self, values: dict[str, str], *, invariance: bool, change: dict[str, str]) -> Edit | None:
        reading = self.reading
        if not constraints_hold(reading.family, values):
            return None
        program, at = template_outputs(reading, values)
        execution = execute(program, self.scene)
        if isinstance(execution, Invalid) or not out_neq_holds(reading.family, at, execution):
            return None
        new_answer = self.vocab.answer_words(execution.answer)
        old_answer = self.vocab.answer_words(self.original.answer)
        if (new_answer == old_answer) != invariance:
            return None
        # rd+ says what is redundant on purpose; Super-CLEVR's generator skips this check for it too
        if change.get("edit") != "rd+" and _degenerate(program, self.scene, execution.answer):
            return None
        if invariance and not self._same_referents(at, execution):
            return None
        question = render(reading, values)
        if self.asked(question):
            return None
        reread = read_question({"question": question, "template_filename": reading.family.file,
                                "question_family_index": reading.family.index})
        if not isinstance(reread, Reading) or reread.program() != program:
            return None
        if part_words_ambiguous(program, execution):
            self.refused[PART_AMBIGUOUS] += 1
            return None
        return Edit(values, program, question, new_answer, invariance, change, execution)

    def _same_referents(self, at: Mapping[int, int], execution: Execution) -> bool:
        _, old_at = template_outputs(self.reading, self.reading.values)
        return all(execution.outputs[at[t]] == self.original.outputs[old_at[t]] for t in at)

    def contrasts(self) -> list[Edit]:
        """Every one-parameter edit that changes the answer, in template parameter order."""
        out = []
        for param, kind in self.reading.family.params.items():
            value = self.reading.values[param]
            if kind not in EDITABLE or is_null(kind, value):
                continue
            for other in _alternatives(kind, value):
                values = {**self.reading.values, param: other}
                change = {"kind": CHANGE_KIND[kind], "slot": param, "edit": "value",
                          "from": self.vocab.render(kind, value, like=self.reading.words[param]),
                          "to": self.vocab.render(kind, other, like=self.reading.words[param])}
                edit = self._try(values, invariance=False, change=change)
                if edit is not None:
                    out.append(edit)
        return out

    def redundancy(self) -> list[Edit]:
        """Per reference: rd- (drop every attribute the reference does not need) and rd+ (say
        every attribute of the object it denotes)."""
        out = []
        for t, tnode in enumerate(self.reading.family.nodes):
            if tnode["type"] not in _REFERENCES:
                continue
            params = [p for p in tnode.get("side_inputs", []) if self.reading.family.params[p] in _ATTRIBUTE_OF]
            for edit in (self._rd_minus(params), self._rd_plus(t, params)):
                if edit is not None:
                    out.append(edit)
        return out

    def whole_question(self, edit: str) -> Edit | None:
        """rd- or rd+ applied to every reference of the question at once (Super-CLEVR's rd- and
        rd+ datasets): None when there is nothing to drop or add, or the result is not valid."""
        values, said = self._whole_values(edit)
        if values == self.reading.values:
            return None
        return self._try(values, invariance=True, change=self._rd_change(edit, said, values))

    def at_level(self, edit: str) -> bool:
        """Whether the question already is what `edit` would make it: no reference has an
        attribute to drop (rd-) or to add (rd+)."""
        return self._whole_values(edit)[0] == self.reading.values

    def _whole_values(self, edit: str) -> tuple[dict[str, str], list[str]]:
        values = dict(self.reading.values)
        said: list[str] = []
        for t, tnode in enumerate(self.reading.family.nodes):
            if tnode["type"] not in _REFERENCES:
                continue
            params = [p for p in tnode.get("side_inputs", []) if self.reading.family.params[p] in _ATTRIBUTE_OF]
            said += params
            values = self._dropped(params, values) if edit == "rd-" else self._added(t, params, values)
        return values, said

    def _dropped(self, params: list[str], values: dict[str, str]) -> dict[str, str]:
        for p in params:
            kind = self.reading.family.params[p]
            if is_null(kind, values[p]):
                continue
            trial = {**values, p: null_value(kind)}
            if self._keeps_referents(trial, build_program(self.reading.family, trial)):
                values = trial
        return values

    def _added(self, t: int, params: list[str], values: dict[str, str]) -> dict[str, str]:
        _, at = template_outputs(self.reading, self.reading.values)
        referent = self.original.outputs[at[t]]
        if isinstance(referent, tuple):
            attributes = self.scene.objects[referent[0]].parts[referent[1]]
        else:
            obj = self.scene.objects[referent]
            attributes = {"size": obj.size, "color": obj.color, "material": obj.material, "shape": obj.shape}
        values = dict(values)
        for p in params:
            kind = self.reading.family.params[p]
            if p in self._null_params:  # the family keeps it open (e.g. the colour a question asks)
                continue
            if is_null(kind, values[p]) and _ATTRIBUTE_OF[kind] in attributes:
                values[p] = attributes[_ATTRIBUTE_OF[kind]]
        return values

    def _rd_minus(self, params: list[str]) -> Edit | None:
        values = self._dropped(params, dict(self.reading.values))
        if values == self.reading.values:
            return None
        return self._try(values, invariance=True, change=self._rd_change("rd-", params, values))

    def _rd_plus(self, t: int, params: list[str]) -> Edit | None:
        values = self._added(t, params, dict(self.reading.values))
        if values == self.reading.values:
            return None
        return self._try(values, invariance=True, change=self._rd_change("rd+", params, values))

    def _keeps_referents(self, values: dict[str, str], program: list[dict[str, Any]]) -> bool:
        execution = execute(program, self.scene)
        if isinstance(execution, Invalid):
            return False
        _, at = template_outputs(self.reading, values)
        _, old_at = template_outputs(self.reading, self.reading.values)
        return all(execution.outputs[at[t]] == self.original.outputs[old_at[t]] for t in at)

    def _rd_change(self, edit: str, params: list[str], values: Mapping[str, str]) -> dict[str, str]:
        def words(vals: Mapping[str, str]) -> str:
            return " ".join(w for p in params if (w := self.vocab.render(
                self.reading.family.params[p], vals[p], like=self.reading.words[p] or None)))
        return {"kind": "attribute", "slot": " ".join(params), "edit": edit,
                "from": words(self.reading.values), "to": words(values)}
