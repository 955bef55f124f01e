"""Two-image groups for CLEVR-family contrast sets (`generate --groups` on Super-CLEVR).

A CLEVR program names no object ids: it is executed as it stands on another scene, and a scene
lists every object in it (a closed world), so a cell is proven by the executor alone: every
`unique` must denote exactly one object or part there. Candidates come from the same inverted
index as GQA's (`groups.index`: shapes, attribute values, relations), intersected on the
attribute values the program's definite references filter on, walked from the record's own place
in the corpus (shifted by the seed), at most `MAX_TRIED` per pair: deterministic and bounded.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from contrastgen.clevr.evidence import engine_program, evidence, part_words_ambiguous
from contrastgen.clevr.executor import Execution, Invalid, execute
from contrastgen.clevr.question import family_fields
from contrastgen.clevr.scene_view import ClevrScene, clevr_scene
from contrastgen.datasets.clevr_reading import Reading, read_question
from contrastgen.datasets.clevr_vocab import load_vocabulary
from contrastgen.groups.index import ATTRIBUTE, GroupIndex, key
from contrastgen.groups.record import (
    FOUND,
    GROUP_SUFFIX,
    ORIGINAL_CELL,
    PAIRS,
    PERTURBED_CELL,
    pair_cells,
)
from contrastgen.groups.search import DIFFERS, MAX_TRIED, SWAP
from contrastgen.perturb import PerturbResult
from contrastgen.records import Group, GroupCell

_ATTRIBUTE_FILTERS = ("filter_size", "filter_color", "filter_material")


def requirements(program: list[dict[str, Any]]) -> frozenset[frozenset[str]]:
    """The attribute values filtered on by each chain that ends in a `unique` (a definite "the")."""
    out: set[frozenset[str]] = set()
    for node in program:
        if node["type"] != "unique":
            continue
        todo = list(node["inputs"])
        while todo:
            n = program[todo.pop()]
            if n["type"] in _ATTRIBUTE_FILTERS:
                out.add(frozenset({key(ATTRIBUTE, n["value_inputs"][0])}))
            if n["type"].startswith("filter_"):
                todo.extend(n["inputs"])
    return frozenset(out)


def _usable(program: list[dict[str, Any]], run: Execution | Invalid, counts: Counter) -> bool:
    """Can a cell rest on this run of the program on a candidate scene? Not where the scene makes
    it ambiguous, nor where its part words pick other parts than Super-CLEVR's engine would (the
    reason counted)."""
    if isinstance(run, Invalid):
        counts["ambiguous"] += 1
        return False
    if part_words_ambiguous(program, run):
        counts["part_ambiguous"] += 1
        return False
    return True


def add_clevr_groups(result: PerturbResult, reading: Reading, index: GroupIndex, scene_of: Any, seed: int,
                     counts: Counter) -> None:
    """Look for a group for each contrast pair of a CLEVR result; give each one found to its
    perturbation (`group`). `scene_of(image_id)` gives a scene's executor view."""
    vocab = load_vocabulary()
    original = reading.program()
    family = family_fields(reading)
    on: dict[str, Execution | Invalid] = {}  # the original on each candidate, for the record's pairs
    for i, p in enumerate(result.perturbations):
        if p.invariance:
            continue
        counts[PAIRS] += 1
        perturbed = read_question({"question": p.question, **family})
        if not isinstance(perturbed, Reading):
            counts["unreadable"] += 1
            continue
        edited = perturbed.program()
        candidates, met = index.candidates(requirements(original) | requirements(edited), result.image_id, seed,
                                           MAX_TRIED)
        found = None
        for j in candidates:
            scene = scene_of(j)
            run_q = on.get(j) or on.setdefault(j, execute(original, scene))
            if not _usable(original, run_q, counts):
                continue
            answer_q = vocab.answer_words(run_q.answer)
            if answer_q == result.answer:
                counts["same_answer"] += 1
                continue
            run_p = execute(edited, scene)
            if not _usable(edited, run_p, counts):
                continue
            answer_p = vocab.answer_words(run_p.answer)
            kind = SWAP if answer_q == p.answer and answer_p == result.answer else DIFFERS
            found = (kind, j, (_cell(p.question_id + ORIGINAL_CELL, j, result.question, original, run_q,
                                     scene, answer_q),
                               _cell(p.question_id + PERTURBED_CELL, j, p.question, edited, run_p, scene,
                                     answer_p)))
            break
        if found is None:
            counts["no_candidate" if met <= 1 else "not_grouped"] += 1
            continue
        kind, j, cells = found
        counts[kind] += 1
        counts[FOUND] += 1
        result.perturbations[i] = replace(p, group=Group(id=p.question_id + GROUP_SUFFIX, kind=kind,
                                                         images=(result.image_id, j),
                                                         cells=(*pair_cells(result, p), *cells)))


def _cell(qid: str, image: str, question: str, program: list[dict[str, Any]], run: Execution, scene: ClevrScene,
          answer: str) -> GroupCell:
    return GroupCell(qid, image, question, answer, {"program": engine_program(program, run)},
                     evidence(program, run, scene, answer))


def scene_reader(scenes: Mapping[str, dict[str, Any]], cache: dict[str, ClevrScene]) -> Any:
    def scene_of(image_id: str) -> ClevrScene:
        found = cache.get(image_id)
        if found is None:
            found = cache[image_id] = clevr_scene(image_id, scenes[image_id])
        return found
    return scene_of
