"""Checking a program-path perturbation: the words, the program and the evidence say one edit.

A program-path perturbation (`template: "program"`, evidence query `{"op": "program", "step": i}`)
claims that the original question, with the words naming one selected object replaced, asks what
the original program asks with that object's name replaced, and that this program's answer on the
graph is the claimed one. Each part is checked here with the verifier's own code:
- the words: the original and the perturbed question differ in one run of words (and an "a"/"an"
  before it), which is a form of `change.from` in the original and of `change.to` in the new one;
- the programs: the record's original `semantic` and the perturbation's have the same operations
  and dependencies, and differ in names only at step i, from `change.from` to `change.to` (ids may
  differ: they follow the new object);
- the answer: the perturbation's program, executed by `verify.program`, gives the claimed answer,
  which differs from the original's;
- the reference: an `only` fact shows the new name denotes exactly the object step i selects.
"""

from __future__ import annotations

from typing import Any

import regex

from contrastgen.verify.graph import EvidenceProblem, GraphIndex
from contrastgen.verify.nouns import load_nouns
from contrastgen.verify.program import execute_program_steps
from contrastgen.verify.rules import VerifyRules, normalize_name

Problem = tuple[str, str]
_WORD = regex.compile(r"\w+(?:'\w+)?|[^\w\s]")
_ARTICLES = {"a", "an"}


def _name(argument: str) -> str:
    body = argument.strip()
    if body.endswith(")") and "(" in body:
        body = body[:-1].rpartition("(")[0]
    return normalize_name(body.split(",")[0])


def _relation(argument: str) -> str:
    body = argument.strip()
    if body.endswith(")") and "(" in body:
        body = body[:-1].rpartition("(")[0]
    parts = [x.strip() for x in body.split(",")]
    return normalize_name(",".join(parts[1:-1])) if len(parts) >= 3 else ""


def _edited_step(change: dict[str, Any]) -> int | None:
    slot = str(change.get("slot", ""))
    return int(slot[4:]) if slot.startswith("step") and slot[4:].isdigit() else None


def word_problems(original: str, perturbed: str, change: dict[str, Any]) -> list[Problem]:
    """One run of words differs, and it is the changed name in both questions.

    The run is widened over words the two share where the names do ("hot dog" -> "dog" differs
    only in "hot", but the names are the whole words).
    """
    a = [w.lower() for w in _WORD.findall(original)]
    b = [w.lower() for w in _WORD.findall(perturbed)]
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    before, after = normalize_name(str(change.get("from", ""))), normalize_name(str(change.get("to", "")))
    if change.get("kind") == "relation":  # a relation is said in the program's own words
        old_names, new_names = {before}, {after}
    else:
        nouns = load_nouns()
        old_names, new_names = nouns.names(before), nouns.names(after)
    for left in range(0, 4):
        for right in range(0, 4):
            s, ea, eb = start - left, end_a + right, end_b + right
            if s < 0 or ea > len(a) or eb > len(b):
                continue
            old, new = a[s:ea], b[s:eb]
            if old[:1] and new[:1] and old[0] in _ARTICLES and new[0] in _ARTICLES:
                old, new = old[1:], new[1:]
            if " ".join(old) in old_names and " ".join(new) in new_names:
                return []
    return [("text_mismatch", f"the questions differ in {' '.join(a[start:end_a])!r} -> "
             f"{' '.join(b[start:end_b])!r}, not in the change {before!r} -> {after!r}")]


def program_diff_problems(original: Any, edited: Any, change: dict[str, Any]) -> list[Problem]:
    """Same steps, one name changed, at the step the change names."""
    step = _edited_step(change)
    if not isinstance(original, list) or not isinstance(edited, list) or step is None:
        return [("program", "a program edit needs the record's 'semantic', the perturbation's, "
                 "and change.slot 'step<i>'")]
    if len(original) != len(edited) or not 0 <= step < len(edited):
        return [("program", "the edited program has other steps than the original")]
    for i, (o, e) in enumerate(zip(original, edited, strict=True)):
        if not isinstance(o, dict) or not isinstance(e, dict):
            return [("program", f"program step {i} is not an object")]
        if o.get("operation") != e.get("operation") or o.get("dependencies") != e.get("dependencies"):
            return [("program", f"step {i} changed its operation or dependencies")]
        want = (normalize_name(str(change.get("from"))), normalize_name(str(change.get("to")))) if i == step else None
        part = _relation if change.get("kind") == "relation" and i == step else _name
        got = (part(str(o.get("argument", ""))), part(str(e.get("argument", ""))))
        if part is _relation and _name(str(o.get("argument", ""))) != _name(str(e.get("argument", ""))):
            return [("program", f"step {i} changed the object it names as well as its relation")]
        if want is not None and got != want:
            return [("program", f"step {i} names {got[0]!r} -> {got[1]!r}, not the change {want}")]
        if want is None and got[0] != got[1]:
            return [("program", f"step {i} also changed its name: {got[0]!r} -> {got[1]!r}")]
    return []


def program_edit_problems(record: dict[str, Any], p: dict[str, Any], graph: GraphIndex,
                          rules: VerifyRules) -> list[Problem]:
    change = p.get("change") if isinstance(p.get("change"), dict) else {}
    evidence = p.get("evidence") if isinstance(p.get("evidence"), dict) else {}
    claimed = evidence.get("answer")
    problems = word_problems(str(record.get("question", "")), str(p.get("question", "")), change)
    problems += program_diff_problems(record.get("semantic"), p.get("semantic"), change)
    try:
        answer, values = execute_program_steps(p.get("semantic"), graph, rules)
    except EvidenceProblem as exc:
        return problems + [("program", f"the program does not execute: {exc}")]
    if not isinstance(claimed, str) or normalize_name(answer) != normalize_name(claimed):
        problems.append(("answer", f"the program gives {answer!r}, the evidence claims {claimed!r}"))
    if normalize_name(str(p.get("answer"))) != normalize_name(answer):
        problems.append(("answer", f"the perturbation's answer {p.get('answer')!r} is not the program's {answer!r}"))
    kept = normalize_name(answer) == normalize_name(str(record.get("answer", "")))
    if p.get("kind") == "invariance" and not kept:
        problems.append(("answer", "an invariance perturbation's answer changed"))
    elif p.get("kind") != "invariance" and kept:
        problems.append(("answer", "the answer did not change"))
    step = _edited_step(change)
    selected = values[step] if step is not None and step < len(values) else None
    if change.get("kind") == "relation":
        # a relate step's new relation must pick out one object ("the cup to the right of ...")
        if isinstance(selected, set) and len(selected) != 1:
            problems.append(("reference", f"step {step}'s new relation denotes {len(selected)} objects, not one"))
        return problems
    onlys = [f for f in evidence.get("facts") or [] if isinstance(f, dict) and f.get("fact") == "only"]
    if not (isinstance(selected, set) and len(selected) == 1
            and any([str(i) for i in f.get("ids", [])] == sorted(selected) for f in onlys)):
        problems.append(("reference", f"no 'only' fact shows that step {step}'s new name denotes one object"))
    return problems
