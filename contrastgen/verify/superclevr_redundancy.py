"""Re-proving Super-CLEVR's question-redundancy splits (`contrastgen ood superclevr`: rd-, rd, rd+).

Every question of the three splits is a claim: its words, read with the family its record names,
are its `program`, and that program, run on its scene, answers what the record says. A question
whose rewrite added a redundant relation (`relations_added`, rd+) or dropped one
(`relations_dropped`, rd-) also claims, per relation, that it changes nothing: the set the
reference denotes with the relation is the set it denotes without it. Each claim is re-checked
here with the verifier's own interpreter (`verify.clevr.run_program`), the relation's absence
made by putting a `scene` node where the `relate` was (CLEVR's own degeneracy test, on the
reference rather than on the answer). An added relation must also be redundancy rather than the
answer said: it relates no object the question asks about, no object the question describes with
the answer, and no reference that denotes nothing (which any relation leaves as it is). A dropped
relation's program is the original's, which the record carries (`from_program`) and which must be
the rd split's program of the same question.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from contrastgen.datasets.clevr_reading import Reading, read_question
from contrastgen.jsonio import read_json
from contrastgen.records import Failure, VerifyReport
from contrastgen.terminal.progress import progress as progress_bar
from contrastgen.verify.clevr import (
    ProgramFails,
    answer_words,
    comparable_program,
    part_name_problems,
    run_program,
)

BENCHMARK = "super-clevr"
LEVELS = ("rd-", "rd", "rd+")
CHECKS = ("structure", "text_mismatch", "query", "answer", "relation", "image")
_RELATIONS = ("left", "right", "behind", "front")

Problem = tuple[str, str]


def _run(program: Any, objects: Mapping[str, Any]) -> list[Any] | str:
    try:
        return run_program(program, objects)
    except (ProgramFails, KeyError, IndexError, TypeError, ValueError) as exc:
        return f"the program does not run on the scene: {exc}"


def relation_problems(program: list[dict[str, Any]], evidence: Any, objects: Mapping[str, Any]) -> list[Problem]:
    """Each cited relation is in `program` and changes nothing on the scene."""
    if not isinstance(evidence, list) or not evidence:
        return [("relation", "the rewrite cites no relation")]
    trace = _run(program, objects)
    if isinstance(trace, str):
        return [("query", trace)]
    problems: list[Problem] = []
    for n, r in enumerate(evidence):
        where = f"relation {n}"
        if not isinstance(r, Mapping):
            problems.append(("structure", f"{where} is not an object"))
            continue
        relate, node = r.get("relate_node"), r.get("reference_node")
        if not (isinstance(relate, int) and isinstance(node, int) and 0 <= relate < node < len(program)):
            problems.append(("relation", f"{where}: its nodes are not a relate and a later node of the program"))
            continue
        step = program[relate]
        if step.get("type") != "relate" or step.get("value_inputs") != [r.get("relation")] \
                or r.get("relation") not in _RELATIONS:
            problems.append(("relation", f"{where}: node {relate} is not `relate` {r.get('relation')!r}"))
            continue
        if trace[step["inputs"][0]] != r.get("object"):
            problems.append(("relation", f"{where}: the relation is to object {trace[step['inputs'][0]]!r}, "
                             f"not {r.get('object')!r}"))
        cut = [dict(s) for s in program]
        cut[relate] = {"type": "scene", "inputs": [], "value_inputs": []}
        without = _run(cut, objects)
        if isinstance(without, str):
            problems.append(("relation", f"{where}: without the relation, {without}"))
            continue
        if not (trace[node] == without[node] == r.get("denotes") == r.get("denotes_without_relation")):
            problems.append(("relation", f"{where}: the reference denotes {trace[node]!r} with the relation and "
                             f"{without[node]!r} without it (the evidence says {r.get('denotes')!r})"))
    return problems


def _asked(program: list[dict[str, Any]], trace: list[Any], node: int) -> set[int]:
    """The objects the question asks about, from its answer back through comparisons: what a
    query reads (a part's object), the members of what a count or exist measures."""
    kind = str(program[node].get("type"))
    if kind.startswith(("equal_", "less_than", "greater_than")):
        return set().union(*(_asked(program, trace, i) for i in program[node]["inputs"]))
    if not (kind.startswith(("query_", "partquery_")) or kind in ("count", "exist")):
        return set()
    value = trace[program[node]["inputs"][0]]
    if isinstance(value, int):
        return {value}
    if len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], str):  # one part
        return {value[0]}
    return {v[0] if isinstance(v, list) else v for v in value}


def _said_of(program: list[dict[str, Any]], node: int) -> list[str]:
    """The values the filters from `node` back to the scene say of what they select."""
    said: list[str] = []
    while program[node].get("type") not in ("scene", "relate"):
        if str(program[node].get("type")).startswith("filter_"):
            said += [str(v) for v in program[node].get("value_inputs", [])]
        node = program[node]["inputs"][0]
    return said


def added_relation_problems(program: list[dict[str, Any]], evidence: list[Any],
                            objects: Mapping[str, Any]) -> list[Problem]:
    """rd+'s relations are redundancy, not the answer said: none relates an object the question
    asks about, none an object described with the answer, none a reference denoting nothing."""
    trace = _run(program, objects)
    if isinstance(trace, str):
        return []  # the program's own check reports it
    asked = _asked(program, trace, len(program) - 1)
    answer = answer_words(trace[-1])
    problems: list[Problem] = []
    for n, r in enumerate(evidence):
        relate = r.get("relate_node") if isinstance(r, Mapping) else None
        node = r.get("reference_node") if isinstance(r, Mapping) else None
        if not (isinstance(relate, int) and isinstance(node, int) and 0 <= relate < node < len(program)
                and program[relate].get("type") == "relate"):
            continue  # `relation_problems` reports it
        where = f"relation {n}"
        if trace[node] == []:
            problems.append(("relation", f"{where}: the reference denotes nothing, so the relation is vacuous"))
        anchor = program[relate]["inputs"][0]
        if isinstance(trace[anchor], int) and trace[anchor] in asked:
            problems.append(("relation", f"{where} is to object {trace[anchor]}, which the question asks about"))
        said = [v for v in _said_of(program, anchor) if answer_words(v) == answer]
        if said:
            problems.append(("relation", f"{where} is to an object described as {said[0]!r}: the answer"))
    return problems


def question_problems(record: Mapping[str, Any], objects: Mapping[str, Any],
                      originals: Mapping[str, Mapping[str, Any]]) -> list[Problem]:
    """Everything wrong with one question of a redundancy split (an empty list: it holds)."""
    program = record.get("program")
    if not isinstance(program, list) or not all(isinstance(n, Mapping) for n in program):
        return [("structure", "the question has no `program` list")]
    problems: list[Problem] = []
    reading = read_question(record)
    if not isinstance(reading, Reading):
        problems.append(("text_mismatch", f"the words cannot be read with their family: {reading.reason}"))
    elif comparable_program(reading.program()) != comparable_program(program):
        problems.append(("text_mismatch", "the words say a different program from the record's"))
    trace = _run(program, objects)
    if isinstance(trace, str):
        return [*problems, ("query", trace)]
    problems += part_name_problems(program, trace)
    if answer_words(trace[-1]) != answer_words(record.get("answer")):
        problems.append(("answer", f"the program answers {answer_words(trace[-1])!r}, the record "
                         f"{record.get('answer')!r}"))
    added, dropped = record.get("relations_added"), record.get("relations_dropped")
    if isinstance(added, Mapping):
        problems += relation_problems(program, added.get("relations"), objects)
        if isinstance(added.get("relations"), list):
            problems += added_relation_problems(program, added["relations"], objects)
    if isinstance(dropped, Mapping):
        original = dropped.get("from_program")
        rd = originals.get(str(record.get("question_index")))
        if rd is None or original != rd.get("program"):
            problems.append(("relation", "the program the relations were dropped from is not the rd question's"))
        elif isinstance(original, list):
            problems += relation_problems(original, dropped.get("relations"), objects)
    return problems


def verify_redundancy(path: Path, scene_graphs: Mapping[str, Mapping[str, Any]], *,
                      progress: bool = False) -> VerifyReport:
    """Every question of `path`'s rd-, rd and rd+ re-proven; `checked` counts the questions."""
    report = VerifyReport(checked=0, check_order=CHECKS)
    levels = {lv: read_json(path / f"{lv}.json") for lv in LEVELS}
    rd = {str(q.get("question_index")): q for q in levels["rd"].get("questions", []) if isinstance(q, Mapping)}
    total = sum(len(d.get("questions", [])) if isinstance(d, Mapping) else 0 for d in levels.values())
    with progress_bar("verifying questions", total, enabled=progress) as advance:
        for level, data in levels.items():
            for n, record in enumerate(data.get("questions", []) if isinstance(data, Mapping) else []):
                advance(1)
                report.checked += 1
                qid = f"{level}/{record.get('question_index', n)}" if isinstance(record, Mapping) else f"{level}/{n}"
                if not isinstance(record, Mapping):
                    report.failures.append(Failure(qid, None, "the question is not an object", "structure"))
                    continue
                image = str(record.get("image") or record.get("imageId") or "")
                graph = scene_graphs.get(image)
                if graph is None:
                    report.failures.append(Failure(qid, None, f"image {image!r} is not among the scenes", "image"))
                    continue
                found = question_problems(record, graph["objects"], rd)
                report.failures.extend(Failure(qid, None, message, check) for check, message in found)
    return report


def verify_redundancy_dir(path: Path, scenes_path: Path, *, progress: bool = False) -> VerifyReport:
    from contrastgen.datasets.clevr import load_any_scene_graphs

    return verify_redundancy(path, load_any_scene_graphs(scenes_path), progress=progress)
