"""Perturbing a question of any GQA type by editing one argument of its program: the name of an
object it selects, or a relation it asks (to its opposite, from rules/relations.tsv).

Why through the program: the program says what the question asks, whatever its type (GQA has over
100), and executing the edited program on the graph gives the new answer. The words follow the
edit exactly: the annotations say which words name the selected object, and only those words
(and an article before them) change.

A candidate is kept only if:
- the original program, executed with GQA's ids, gives the gold answer (else the graph and the
  annotation disagree, and nothing built on it is proven);
- the new name is a noun the lexicon knows, of another kind than every object the program names
  (and of the old one's category where the question asks about a relation of it), and it denotes
  exactly one object of the graph (the new words say "the X'", so X' must be unique);
- the edited program executes without refusal and gives another answer;
- an answer "no" that rests on absence is about names whose absence a graph can show (not
  unannotated-prone, and every kind they may denote known);
- the new question is not already one of the image's questions.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import regex

from contrastgen.language.articles import article
from contrastgen.language.lexicon import Lexicon
from contrastgen.programs.gqa import (
    Execution,
    GqaExecutor,
    ProgramRefusal,
    Step,
    parse_program,
    split_reference,
)
from contrastgen.scene.ground import denoted_ids, same_kind
from contrastgen.scene.index import SceneIndex

PROGRAM_PATH = "program"  # the `template` of a program-path contrast set
ID_SUFFIX = "p"
EVIDENCE_VERSION = 1

# GQA's question tokens (what `annotations` index): words, and punctuation on its own.
_TOKEN = regex.compile(r"\w+(?:'\w+)?|[^\w\s]")
_REFERENCE_OPS = ("select", "relate")
_RELATION_ARGUMENT_OPS = ("relate", "verify", "choose")


class EditRefusal(Exception):
    """Why a question got no program edit; `reason` is one of engine.REASONS."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Span:
    start: int  # character offsets in the question
    end: int


def tokens(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _TOKEN.finditer(text)]


def aligned_span(question: dict[str, Any], text: str, ids: tuple[str, ...]) -> Span | None:
    """The one span of words the annotations give to exactly these object ids, if there is one."""
    ann = question.get("annotations")
    ann = ann.get("question") if isinstance(ann, dict) else None
    if not isinstance(ann, dict) or not ids:
        return None
    toks = tokens(text)
    spans = []
    for key, oid in ann.items():
        if str(oid) not in ids:
            continue
        first, _, last = str(key).partition(":")
        try:
            a = int(first)
            b = int(last) if last else a + 1
        except ValueError:
            return None
        if not 0 <= a < b <= len(toks):
            return None
        spans.append(Span(toks[a][0], toks[b - 1][1]))
    return spans[0] if len(spans) == 1 else None


def named_span(text: str, name: str, steps: list[Step]) -> Span | None:
    """Without annotations: the name's one occurrence as whole words, when no other step of the
    program names the same thing (then the words cannot be about another object of the program)."""
    if sum(1 for s in steps if split_reference(s.argument)[0].split(",")[0].strip() == name) != 1:
        return None
    found = [m for m in regex.finditer(rf"(?<!\w){regex.escape(name)}(?!\w)", text, flags=regex.IGNORECASE)]
    return Span(found[0].start(), found[0].end()) if len(found) == 1 else None


def dependents(steps: list[Step], index: int) -> set[int]:
    """Steps that read `index`'s value, directly or through others."""
    out: set[int] = set()
    for i, s in enumerate(steps):
        if i > index and any(d == index or d in out for d in s.dependencies):
            out.add(i)
    return out


def _bare(step: dict[str, Any]) -> dict[str, Any]:
    """A step whose reference names objects by name, not by GQA's ids (they are the old ones)."""
    name, ids = split_reference(step["argument"])
    return step if ids is None else {**step, "argument": name}


def _with_ids(step: dict[str, Any], ids: tuple[str, ...] | None) -> dict[str, Any]:
    name, old = split_reference(step["argument"])
    if old is None and ids is None:
        return step
    return {**step, "argument": f"{name} ({','.join(ids) if ids else '-'})"}


def semantic_str(steps: list[dict[str, Any]]) -> str:
    return "->".join(f"{s['operation']}: {s['argument']}" + (f" [{', '.join(map(str, s['dependencies']))}]"
                                                             if s["dependencies"] else "") for s in steps)


@dataclass
class ProgramEditor:
    """The program edits of one image's questions."""

    scene: SceneIndex
    graph: dict[str, Any]
    lex: Lexicon

    def executor(self) -> GqaExecutor:
        return GqaExecutor(self.scene, self.lex, self.graph)

    def perturb(self, question_id: str, question: dict[str, Any], *, max_k: int, seed: int,
                existing: set[str], normalize: Any) -> list[dict[str, Any]]:
        """Up to `max_k` proven perturbations, ranked; EditRefusal when there is none."""
        semantic = question.get("semantic")
        text = str(question.get("question", ""))
        gold = str(question.get("answer", "")).strip().lower()
        try:
            steps = parse_program(semantic)
            original = self.executor().run(semantic)
            got = original.answer
        except ProgramRefusal as exc:
            raise EditRefusal("program_mismatch" if exc.reason in ("program_mismatch", "malformed_program")
                              else "not_executable") from None
        if got != gold:
            raise EditRefusal("answer_mismatch")
        rng = random.Random(f"{seed}/{question_id}/{PROGRAM_PATH}")
        found: list[dict[str, Any]] = []
        seen_questions: set[str] = set()
        aligned = False
        for index, step in enumerate(steps):
            if step.operation in ("relate", "verify rel"):
                p = self._relation_edit(question, steps, semantic, index, gold)
                if p is not None:
                    aligned = True
                    key = normalize(p["question"])
                    if key not in existing and key not in seen_questions:
                        seen_questions.add(key)
                        found.append(p)
                if len(found) >= max_k:
                    break
                continue
            if step.head != "select":
                continue
            name, ids = split_reference(step.argument)
            span = aligned_span(question, text, ids or ()) or named_span(text, name, steps)
            if span is None or text[span.start:span.end].lower() != name.lower():
                continue  # the words for this object are not the program's name for it
            if self.lex.is_plural(name):
                continue  # "are the cabinets": the verb and the number would have to change too
            aligned = True
            relational = any(steps[i].operation in ("relate", "verify rel", "choose rel")
                             for i in dependents(steps, index))
            for cand, invariance in self._with_invariants(
                    name, ids or (), self._candidates(name, steps, rng, same_category=relational)):
                p = self._try(question, steps, semantic, index, span, name, cand, gold, invariance=invariance)
                if p is None:
                    continue
                key = normalize(p["question"])
                if key in existing or key in seen_questions:
                    continue
                seen_questions.add(key)
                found.append(p)
                if len(found) >= max_k:
                    break
            if len(found) >= max_k:
                break
        if not found:
            raise EditRefusal("no_distractor" if aligned else "unaligned")
        for rank, p in enumerate(found, 1):
            p["rank"] = rank
            p["question_id"] = f"{question_id}_{ID_SUFFIX}{rank}"
        return [{"question_id": p["question_id"], "question": p["question"], "answer": p["answer"],
                 "rank": p["rank"], "change": p["change"], "evidence": p["evidence"],
                 "semantic": p["semantic"], "kind": p.get("kind", "contrast")} for p in found]

    def _candidates(self, name: str, steps: list[Step], rng: random.Random, *,
                    same_category: bool) -> Iterator[str]:
        """Names of the graph's objects that may replace `name`. Where the object stands in a
        relation the question asks about, only names of its category ("What is the man wearing?"
        asks it of a person, not of a table); elsewhere any known noun: the executor then refuses
        a candidate that lacks what the question asks of it (a colour, a pose)."""
        lex, scene = self.lex, self.scene
        category = lex.category(name)
        if same_category and category is None:
            return
        named = [split_reference(s.argument)[0].split(",")[0] for s in steps
                 if s.head in _REFERENCE_OPS or s.operation in ("verify rel", "choose rel")]
        pool = sorted({o.name for o in scene.objects.values()
                       if (not same_category or lex.category(o.name) == category) and lex.is_known(o.name)
                       and not lex.is_plural(o.name) and not lex.is_unannotated_prone(o.name)
                       and all(not same_kind(o.name, n, lex) for n in named if n not in ("_", ""))})
        rng.shuffle(pool)
        yield from pool

    def _try(self, question: dict[str, Any], steps: list[Step], semantic: list[dict[str, Any]], index: int,
             span: Span, name: str, cand: str, gold: str, *, invariance: bool = False) -> dict[str, Any] | None:
        lex = self.lex
        ids = denoted_ids(cand, self.scene, lex)
        if len(ids) != 1:
            return None  # "the <cand>" must be one object
        done = self._execute_edit(steps, semantic, index, cand, gold)
        if done is None:
            return None
        edited, run, downstream = done
        answer = run.answer
        if (answer == gold) != invariance or run.refs.get(index) != tuple(ids):
            return None
        if not invariance and (lex.is_a(answer, cand) or answer in {f.lower() for f in lex.forms(cand)}):
            return None  # "What kind of clock is it? clock": the new words give the answer away
        facts = [{"fact": "only", "names": self._kind_names(cand), "ids": [ids[0]]}]
        return self._perturbation(edited, run, index, downstream, self._rewrite(str(question["question"]), span, cand),
                                  {"kind": "object", "slot": f"step{index}", "from": name, "to": cand},
                                  facts, "invariance" if invariance else "contrast")

    def _execute_edit(self, steps: list[Step], semantic: list[dict[str, Any]], index: int, argument: str,
                      gold: str) -> tuple[list[dict[str, Any]], Execution, set[int]] | None:
        """The program with step `index`'s argument replaced and the steps that read it by name,
        executed; None where the result cannot be proven (a refusal, or a presupposition the
        verifier would not grant)."""
        downstream = dependents(steps, index)
        if any(steps[i].operation == "choose rel" for i in downstream):
            return None  # its argument's ids cannot be recomputed from the trace
        edited = [dict(s) for s in semantic]
        edited[index] = {**edited[index], "argument": argument}
        for i in downstream:
            edited[i] = _bare(edited[i])
        try:
            run = self.executor().run(edited)
            answer = run.answer
        except ProgramRefusal:
            return None
        if answer == "no" and not self._absence_decidable(steps, downstream):
            return None
        if (not self._absences_provable(edited, run) or not self._relations_decided(edited, run)
                or not self._words_agree(edited, run)):
            return None
        return edited, run, downstream

    def _perturbation(self, edited: list[dict[str, Any]], run: Execution, index: int, downstream: set[int],
                      words: str, change: dict[str, str], facts: list[dict[str, Any]],
                      kind: str) -> dict[str, Any]:
        """The perturbation of an executed edit: its program with every reference's ids from the
        execution, and evidence listing every object the program touched."""
        out = [_with_ids(s, run.refs.get(i)) if i == index or i in downstream else s
               for i, s in enumerate(edited)]
        objects = [{"fact": "object", "id": o, "name": self.scene.objects[o].name}
                   for o in sorted({o for ids in run.refs.values() for o in ids})]
        return {"question": words, "answer": run.answer, "semantic": out, "change": change,
                "evidence": {"version": EVIDENCE_VERSION, "query": {"op": "program", "step": index},
                             "facts": objects + facts, "answer": run.answer},
                "kind": kind}

    def _with_invariants(self, name: str, ids: tuple[str, ...],
                         contrasts: Iterator[str]) -> Iterator[tuple[str, bool]]:
        """First the names that denote the same one object in other words (a synonym, or a kind
        it is, when it is the only one: "the man" -> "the person"), whose answer must not change;
        then the contrast candidates."""
        lex = self.lex
        if len(ids) == 1:
            same = sorted((set(lex.synonyms(name)) | set(lex.kinds(name))) - {name, lex.canonical(name)})
            for cand in same:
                if (lex.is_known(cand) and not lex.is_plural(cand) and not lex.is_unannotated_prone(cand)
                        and denoted_ids(cand, self.scene, lex) == list(ids)):
                    yield cand, True
        for cand in contrasts:
            yield cand, False

    def _relation_edit(self, question: dict[str, Any], steps: list[Step], semantic: list[dict[str, Any]],
                       index: int, gold: str) -> dict[str, Any] | None:
        """The relation of a `relate` or `verify rel` step replaced by its opposite, where the
        question says the relation once in the program's words ("to the left of")."""
        text = str(question["question"])
        body, _ = split_reference(steps[index].argument)
        parts = [x.strip() for x in body.split(",")]
        if len(parts) < 3:
            return None
        name, rel, role = parts[0], ",".join(parts[1:-1]).strip(), parts[-1]
        opp = self.lex.opposite_relation(rel)
        found = list(regex.finditer(rf"(?<!\w){regex.escape(rel)}(?!\w)", text, flags=regex.IGNORECASE))
        if opp is None or len(found) != 1 or any(
                i != index and rel in s.argument for i, s in enumerate(steps)):
            return None
        ids_part = "" if steps[index].operation == "relate" else semantic[index]["argument"].strip()[len(body):]
        done = self._execute_edit(steps, semantic, index, f"{name},{opp},{role}{ids_part}", gold)
        if done is None:
            return None
        edited, run, downstream = done
        if run.answer == gold:
            return None
        if steps[index].operation == "relate" and len(run.refs.get(index, ())) != 1:
            return None  # "the cup to the right of the table" must be one cup
        m = found[0]
        return self._perturbation(edited, run, index, downstream, text[:m.start()] + opp + text[m.end():],
                                  {"kind": "relation", "slot": f"step{index}", "from": rel, "to": opp},
                                  [], "contrast")

    def _words_agree(self, edited: list[dict[str, Any]], run: Any) -> bool:
        """The program's ids must be what the words pick out: executed with every relation step
        by name ("the person the umbrella is above": every person it is above), the program
        must select the same objects and give the same answer. Two people under the umbrella
        make the words ambiguous, whichever one GQA's ids name."""
        by_words = [_bare(s) if s["operation"] in ("relate", "verify rel") else s for s in edited]
        try:
            again = self.executor().run(by_words)
        except ProgramRefusal:
            return False
        return again.answer == run.answer and all(again.refs.get(i) == ids for i, ids in run.refs.items()
                                                   if edited[i]["operation"] == "relate")

    def _kind_names(self, word: str) -> list[str]:
        """Every surface name of the kinds `word` denotes, and no name of another kind ("glasses"
        is a form of "glass" but names spectacles): what an `only` fact must list."""
        lex = self.lex
        kinds = {lex.canonical(word)} | set(lex.hyponyms(word))
        names = {n.lower() for k in kinds for n in lex.forms(k) if lex.canonical(n) in kinds}
        names |= {o.name for o in self.scene.objects.values() if o.canonical in kinds}
        return sorted(names)

    def _absences_provable(self, edited: list[dict[str, Any]], run: Any) -> bool:
        """Every reference that came out empty is a claim of absence: only for names whose
        absence a graph can show, and with no object that may be one of them."""
        lex = self.lex
        for i, ids in run.refs.items():
            if ids or edited[i]["operation"] == "verify rel":  # its "no" is the relation check's
                continue
            name = split_reference(edited[i]["argument"])[0].split(",")[0].strip()
            if name in ("_", ""):
                continue
            if lex.is_unannotated_prone(name) or not lex.absence_decidable(name):
                return False
            maybe = lex.may_denote(name)
            if any(o.canonical in maybe for o in self.scene.objects.values()):
                return False
        return True

    def _relations_decided(self, edited: list[dict[str, Any]], run: Any) -> bool:
        """A `verify rel` answers no only on the opposite relation's edge, never on a missing one."""
        for step in edited:
            if step["operation"] != "verify rel":
                continue
            name, rel, role = [p.strip() for p in split_reference(step["argument"])[0].split(",")][:3]
            sources = run.values[step["dependencies"][0]] if step["dependencies"] else ()
            named = denoted_ids(name, self.scene, self.lex)
            if len(sources) != 1 or len(named) != 1:
                return False
            subject, obj = (named[0], sources[0]) if role == "s" else (sources[0], named[0])
            opp = self.lex.opposite_relation(rel)
            edges = self.scene.edges
            yes = (subject, rel, obj) in edges
            no = opp is not None and ((subject, opp, obj) in edges or (obj, rel, subject) in edges)
            if yes == no:
                return False
        return True

    def _absence_decidable(self, steps: list[Step], downstream: set[int]) -> bool:
        """A "no" downstream of the edit says some named object is absent: only where it may."""
        for i in downstream:
            s = steps[i]
            if s.head in _RELATION_ARGUMENT_OPS and s.operation not in ("verify rel", "relate"):
                continue
            if s.operation in ("relate", "verify rel"):
                other = split_reference(s.argument)[0].split(",")[0].strip()
                if other in ("_", "") or self.lex.is_unannotated_prone(other) or not self.lex.absence_decidable(other):
                    return False
        return True

    def _rewrite(self, text: str, span: Span, cand: str) -> str:
        before, old, after = text[:span.start], text[span.start:span.end], text[span.end:]
        new = cand.capitalize() if old[:1].isupper() else cand
        m = regex.search(r"\b(a|an|A|An)\s+$", before)
        if m:
            art = article(cand)
            art = art.capitalize() if m.group(1)[0].isupper() else art
            before = before[:m.start(1)] + art + before[m.end(1):]
        return before + new + after
