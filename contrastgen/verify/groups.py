"""The verifier's check of a two-image group (a perturbation's `group`, docs/groups.md).

All four cells are re-proven with the verifier's own executor: the two on the record's image are
the original and the perturbation, checked as they always are; the two on the second image J are
the same two programs with J's ids, which must
  - be the record's and the perturbation's programs, step for step, but for the ids;
  - execute on J's graph to the cell's answer (every "no" shown, as for any program here);
  - refer, where the words presuppose objects (say "the" ones, or anchor a relation on them:
    "Is there a sofa near the lamp?" presupposes the lamp), to at least one object of J, to
    exactly the objects the words denote on J (the program run again with every reference by
    name gives the same objects), none of a kind annotators leave out, and to one object
    wherever the same step referred to one on the record's image; a bare absence ("Is there a
    lamp?") presupposes nothing;
and the group must be what it claims: on J the original question's answer differs from its
answer on the record's image, and for a `swap` the two answers are exchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contrastgen.answers import normalize_answer
from contrastgen.verify.clevr import (
    ProgramFails,
    answer_words,
    comparable_program,
    part_name_problems,
    run_program,
)
from contrastgen.verify.facts import check_fact
from contrastgen.verify.graph import EvidenceProblem, GraphIndex
from contrastgen.verify.program import execute_program_steps
from contrastgen.verify.program_arguments import (
    REFERENCE_OPERATIONS,
    listed_ids,
    operation_of,
    split_listed,
)
from contrastgen.verify.program_edits import left_out_problems, said_as_the
from contrastgen.verify.rules import VerifyRules

GROUP = "group"  # the check's name in the report
KINDS = ("swap", "differs")
CELL_SUFFIXES = ("_gq", "_gp")

Problem = tuple[str, str]


def group_problems(record: dict[str, Any], p: dict[str, Any], graph_of: Callable[[str], GraphIndex | None],
                   rules: VerifyRules) -> list[Problem]:
    """Every problem with the group of perturbation `p` of `record`; [] if all four cells hold."""
    group = p.get("group")
    try:
        return _problems(record, p, group, graph_of, rules)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        return [(GROUP, f"the group is not shaped as docs/groups.md says ({type(exc).__name__}: {exc})")]


def _problems(record: dict[str, Any], p: dict[str, Any], group: Any, graph_of: Callable[[str], GraphIndex | None],
              rules: VerifyRules) -> list[Problem]:
    pid, image = str(p["question_id"]), str(record["image_id"])
    if not isinstance(group, dict) or group.get("id") != pid + "_g" or group.get("kind") not in KINDS:
        return [(GROUP, f"the group needs id {pid + '_g'!r} and a kind of {list(KINDS)}")]
    images, cells = group["images"], group["cells"]
    if len(images) != 2 or str(images[0]) != image or str(images[1]) == image or len(cells) != 4:
        return [(GROUP, "a group is two images (the record's first, then another) and four cells")]
    other = str(images[1])
    clevr = record.get("dataset") == "clevr"  # CLEVR programs (`program`) run as they stand on any scene
    programs = (record.get("program"), p.get("program")) if clevr else (record.get("semantic"), p.get("semantic"))
    on_i = [(str(record["question_id"]), record["question"], record["answer"]), (pid, p["question"], p["answer"])]
    problems: list[Problem] = []
    for n, (qid, question, answer) in enumerate(on_i):
        c = cells[n]
        if (str(c["question_id"]), str(c["image_id"]), c["question"], c["answer"]) != (qid, image, question, answer):
            problems.append((GROUP, f"cell {n} is not the record's {'perturbation' if n else 'original'} on its image"))
    graph_i, graph_j = graph_of(image), graph_of(other)
    if graph_i is not None and isinstance(programs[0], list):
        try:  # the original's cell: GQA's gold answer, proven here as every other cell is
            proven = _clevr_answer(programs[0], graph_i) if clevr else execute_program_steps(programs[0], graph_i, rules)[0]
            if normalize_answer(proven) != normalize_answer(record["answer"]):
                problems.append((GROUP, f"cell 0: the original's program gives {proven!r}, not {record['answer']!r}"))
        except (EvidenceProblem, ProgramFails) as exc:
            problems.append((GROUP, f"cell 0: the original's program does not execute: {exc}"))
    if graph_j is None:
        return problems + [(GROUP, f"image {other!r} is not among the scene graphs")]
    if not all(isinstance(s, list) for s in programs):
        return problems + [(GROUP, "a group's two questions need programs")]
    answers = []
    for n, suffix in enumerate(CELL_SUFFIXES):
        c = cells[2 + n]
        where = f"cell {2 + n} ({c.get('question_id')})"
        if str(c["question_id"]) != pid + suffix or str(c["image_id"]) != other or c["question"] != on_i[n][1]:
            problems.append((GROUP, f"{where} is not question {n} on image {other!r}"))
        check = _clevr_cell_problems if clevr else _cell_problems
        problems += [(GROUP, f"{where}: {why}") for why in check(programs[n], c, graph_j, rules)]
        answers.append(normalize_answer(c["answer"]))
    a, a2 = normalize_answer(record["answer"]), normalize_answer(p["answer"])
    if answers[0] == a:
        problems.append((GROUP, f"the original question answers {a!r} on both images: not a group"))
    if group["kind"] == "swap" and (answers[0] != a2 or answers[1] != a):
        problems.append((GROUP, f"a swap needs {a2!r} and {a!r} on image {other!r}, the cells say {answers}"))
    return problems


def _cell_problems(program: list[Any], cell: dict[str, Any], graph_j: GraphIndex, rules: VerifyRules) -> list[str]:
    semantic = cell["semantic"]
    if not isinstance(semantic, list) or len(semantic) != len(program) or \
            any(_without_ids(s) != _without_ids(t) for s, t in zip(semantic, program, strict=True)):
        return ["its program is not the question's, but for the ids"]
    evidence = cell.get("evidence") if isinstance(cell.get("evidence"), dict) else {}
    out = _fact_problems(evidence, graph_j, rules)
    try:
        answer, values = execute_program_steps(semantic, graph_j, rules)
        _, by_words = execute_program_steps([_by_name(s) for s in semantic], graph_j, rules)
    except EvidenceProblem as exc:
        return out + [f"the program does not execute: {exc}"]
    if normalize_answer(answer) != normalize_answer(cell["answer"]) or \
            normalize_answer(str(evidence.get("answer"))) != normalize_answer(answer):
        out.append(f"the program gives {answer!r}, the cell says {cell['answer']!r}")
    on_i = _listed_counts(program)
    for i in sorted(presupposed(semantic)):
        now = values[i]
        if not isinstance(now, set):
            continue
        if not now:
            out.append(f"step {i} is what the words presuppose ({_without_ids(semantic[i])[1]!r}) and denotes "
                       "nothing here: the question does not make sense on this image")
            continue
        if by_words[i] != now:
            out.append(f"step {i} lists {sorted(now)}, the words denote {sorted(by_words[i])}")
        if on_i[i] == 1 and len(now) != 1:
            out.append(f"step {i} refers to one object on the record's image and to {len(now)} here")
        prone = sorted(o for o in now if rules.is_unannotated_prone(graph_j.name_of(o)))
        if prone:
            out.append(f"step {i} refers to {prone}, of a kind scene graphs leave out: that no other is there "
                       "is not shown")
        out += [why for _, why in left_out_problems(semantic, i, now, values, graph_j, rules)]
    return out


def presupposed(semantic: list[Any]) -> set[int]:
    """The steps whose objects the words presuppose on any image they are asked of: those said
    as "the" ones (`said_as_the`) and those a `relate` starts from ("near the lamp"), with what
    hands objects on to them (a filter's or a relation's input). An `exist` alone presupposes
    nothing: "Is there a lamp?" makes sense where there is none."""
    out = said_as_the(semantic)
    for j in range(len(semantic) - 1, -1, -1):
        step = semantic[j] if isinstance(semantic[j], dict) else {}
        operation = operation_of(step)
        if operation == "relate" or (j in out and operation.split(" ")[0] in ("filter", "relate")):
            out.update(d for d in (step.get("dependencies") or ()) if isinstance(d, int) and 0 <= d < j)
    return out


def _clevr_answer(program: list[Any], graph: GraphIndex) -> str:
    return answer_words(run_program(program, graph.objects)[-1])


def _clevr_cell_problems(program: list[Any], cell: dict[str, Any], graph_j: GraphIndex,
                         rules: VerifyRules) -> list[str]:
    """A CLEVR cell: the question's program (part names compared by their words, as each scene
    names its parts), run on the second scene (every `unique` one object or part), its trace the
    evidence's, its part names keeping the parts their words keep, its answer the cell's; its facts
    hold there."""
    semantic = cell["program"]
    if not isinstance(semantic, list) or comparable_program(semantic) != comparable_program(program):
        return ["its program is not the question's"]
    evidence = cell.get("evidence") if isinstance(cell.get("evidence"), dict) else {}
    out = _fact_problems(evidence, graph_j, rules)
    try:
        trace = run_program(semantic, graph_j.objects)
    except (ProgramFails, KeyError, IndexError, TypeError) as exc:
        return out + [f"the program does not run on the scene: {exc}"]
    if trace != evidence.get("trace"):
        out.append("the evidence's trace is not what the program computes")
    out += [why for _, why in part_name_problems(semantic, trace)]
    answer = answer_words(trace[-1])
    if answer != cell["answer"] or answer != evidence.get("answer"):
        out.append(f"the program answers {answer!r}, the cell says {cell['answer']!r}")
    return out


def _fact_problems(evidence: dict[str, Any], graph: GraphIndex, rules: VerifyRules) -> list[str]:
    out = []
    for n, fact in enumerate(evidence.get("facts") or [], 1):
        try:
            check_fact(fact, graph, rules)
        except EvidenceProblem as exc:
            out.append(f"fact {n} does not hold: {exc}")
    return out


def _listed_counts(program: list[Any]) -> list[int | None]:
    """Per step, how many objects the program's ids on the record's image name (a filter: those
    of the reference it narrows, which GQA lists after the filtering); None where it lists none."""
    out: list[int | None] = []
    for step in program:
        operation, argument, deps = _without_ids(step)
        if operation in ("select", "relate") and split_listed(str(step.get("argument", "")))[1] is not None:
            out.append(len(listed_ids(str(step.get("argument", "")))) or None)
        elif operation.startswith("filter") and deps and deps[0] < len(out):
            out.append(out[deps[0]])
        else:
            out.append(None)
    return out


def _without_ids(step: Any) -> tuple[str, str, tuple[int, ...]]:
    operation = operation_of(step)
    argument = str(step.get("argument", "")).strip()
    if operation in REFERENCE_OPERATIONS:
        argument = split_listed(argument)[0]
    return operation, argument, tuple(step.get("dependencies") or ())


def _by_name(step: dict[str, Any]) -> dict[str, Any]:
    """The step with its reference as the words say it: every object the name denotes."""
    operation, argument, _ = _without_ids(step)
    listed = str(step.get("argument", "")).strip().endswith(")")
    return {**step, "argument": f"{argument} (-)"} if operation in REFERENCE_OPERATIONS and listed else step
