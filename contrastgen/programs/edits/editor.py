"""Perturbing a question of any GQA type by editing one argument of one step of its program.

Why through the program: the program says what the question asks, whatever its type (GQA has over
100), and executing the edited program on the graph gives the new answer. The words follow the
edit exactly: only the words that say the changed argument change (and an article before a noun).

The edits, each at one step:
- an object's name, in a `select`, or in the reference of a `relate`, `verify rel` or `choose rel`
  (the words: the span GQA's annotations give the object's ids, or the name's one occurrence,
  read by `name_words`: a synonym, a plural or "piece of" before the name are words for it too);
- a relation of a `relate` or `verify rel`: its opposite (rules/relations.tsv), or, for a spatial
  relation of that list, another one (the words: the relation's one occurrence in the program's
  words);
- an attribute value of a `filter`, `verify` or `choose` of a known type (colour, material, pose,
  position...): another value of that type that some object of the graph has;
- a redundant attribute of a `filter` dropped (Super-CLEVR's rd-: "the white car" -> "the car"
  where the car is the only one), or every attribute of a selected object added (rd+: "the car"
  -> "the large white metal car").
An edit whose answer changes is a `contrast`; one whose answer provably stays is an `invariance`:
a synonym or kind naming the same one object ("the man" -> "the person"), a `choose` whose
rejected option is replaced by another the graph excludes ("gray or yellow" -> "green or yellow"),
or a dropped or added redundant attribute. Contrasts take the first ranks; invariances fill the
ranks left (`contrastgen.perturb.Ranking`). Each kind of edit is one object behind one protocol
(`ProgramEdit`, below: `applies(step)`, `propose(...)`), in its own module (`objects`, `relations`,
`attributes`, `redundancy`); `EDITS` lists them in the order they are tried, and this module runs
them over the question's steps.

A candidate is kept only if:
- the original program, executed with GQA's ids, gives the gold answer (else the graph and the
  annotation disagree, and nothing built on it is proven);
- a new name is a noun the lexicon knows, of another kind than every object the program names,
  and it denotes exactly one object of the graph (the new words say "the X'");
- the edited program executes without refusal, and every claim its answer rests on is shown by
  the graph (`programs.proofs`: absences, relations, attributes, ids the words pick out, new
  objects said as "the" ones);
- the words around a new name say nothing of it the program does not check: no adjective no
  filter says ("the black purse" annotated as "purse"), no possessive ("her racket");
- the new words do not give the answer away (a category word above the answer, or the answer's own
  noun: "What is behind the bag the man is behind? man"), and the new question is not one of the
  image's.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from contrastgen.datasets.gqa_program import Step
from contrastgen.language.lexicon import Lexicon
from contrastgen.perturb import PROGRAM_SUFFIX, Perturbation, Proposal, Ranking, Refusal, seeded_rng
from contrastgen.programs.edits.attributes import AttributeEdit
from contrastgen.programs.edits.image import ImageTools
from contrastgen.programs.edits.objects import NameEdit
from contrastgen.programs.edits.question import EditedQuestion
from contrastgen.programs.edits.redundancy import DropRedundantAttribute, SayEveryAttribute
from contrastgen.programs.edits.relations import RelationEdit
from contrastgen.programs.executor import Execution, ProgramRefusal, parse_program
from contrastgen.scene.index import SceneIndex

# The program path's seed string (`perturb.seeded_rng`): fixed, since changing it changes every output.
PROGRAM_SEED = "{seed}/{question}/program"


class ProgramEdit(Protocol):
    """One kind of edit of one step's argument (`EDITS` lists them in the order they are tried).

    `applies(step)`: whether the step has an argument this edit changes. `propose(q, index, rng,
    ranking)`: the proven proposals for step `index` of the question `q` (its program, words,
    and the image's graph, lexicon and executor: `EditedQuestion`), in an order drawn from `rng`;
    `ranking` is the driver's, read only to skip work it would not keep
    (`ranking.wants_invariance`). An edit with `last` set is tried only after every other edit
    has been tried at every step (the redundancy edits, which only give invariances).

    Declared here, by the driver that runs the edits: an edit needs only the question it is
    given, never this module."""

    name: str
    last: bool

    def applies(self, step: Step) -> bool: ...

    def propose(self, q: EditedQuestion, index: int, rng: random.Random,
                ranking: Ranking) -> Iterator[Proposal]: ...


# The edits, in the order they are tried at each step: the order decides which takes a rank when
# more are found than `max_k`, and the seeded order each draws its candidates in.
EDITS: tuple[ProgramEdit, ...] = (RelationEdit(), NameEdit(), AttributeEdit(), DropRedundantAttribute(),
                                  SayEveryAttribute())


@dataclass
class ProgramEditor:
    """The program edits of one question, on its image's shared scene index."""

    scene: SceneIndex
    graph: dict[str, Any]
    lex: Lexicon
    # read when an editor is made, so a new edit listed in EDITS is tried by every editor after
    edits: tuple[ProgramEdit, ...] = field(default_factory=lambda: EDITS)
    image: ImageTools = field(init=False, repr=False)  # what the edits read of the image

    def __post_init__(self) -> None:
        self.image = ImageTools(self.scene, self.graph, self.lex)

    def perturb(self, question_id: str, question: dict[str, Any], *, max_k: int | None, seed: int,
                existing: set[str], steps: list[Step] | None = None,
                original: Execution | None = None) -> list[Perturbation]:
        """Up to `max_k` proven perturbations (None: every one), ranked; Refusal when there is none.

        `steps`: the question's program already parsed; `original`: its run on this image's graph
        (the template path's, in `--mode both`), else parsed and run here."""
        semantic = question.get("semantic")
        gold = str(question.get("answer", "")).strip().lower()
        try:
            if steps is None:
                steps = parse_program(semantic)
            if original is None:
                original = self.image.executor().run_steps(steps)
            got = original.answer
        except ProgramRefusal as exc:
            raise Refusal("program_mismatch" if exc.reason in ("program_mismatch", "malformed_program")
                          else "not_executable") from None
        if got != gold:
            raise Refusal("answer_mismatch")
        rng = seeded_rng(PROGRAM_SEED, seed, question_id)
        ranking = Ranking(existing, max_k)
        q = EditedQuestion(self.image, question, steps, semantic, gold, original)
        if q.presupposition_fails():
            raise Refusal("original_presupposition")
        said_nothing = [False]
        said_answer = [False]

        def informative(proposals: Iterable[Proposal]) -> Iterator[Proposal]:
            for p in proposals:
                if q.says_nothing(p):
                    said_nothing[0] = True  # "What animal is black? animal"
                    continue
                if q.repeats_question(p):
                    said_answer[0] = True  # "What is behind the bag the man is behind? man"
                    continue
                yield p

        for last in (False, True):
            edits = [e for e in self.edits if e.last == last]
            for index, step in enumerate(steps):
                if ranking.full:
                    break
                if last and not ranking.wants_invariance:
                    continue  # the last edits only give invariances, and none has a rank left
                ranking.take(informative(p for e in edits if e.applies(step)
                                         for p in e.propose(q, index, rng, ranking)))
        if not ranking.kept:
            if not any(e.applies(step) for e in self.edits if not e.last for step in steps):
                raise Refusal("no_argument")  # "Which place is it?": nothing the words could change
            if not q.aligned:
                raise Refusal("unaligned")
            q.settle()  # what the set-aside runs' proofs note is read only by the reasons below
            if q.prone_refused:
                raise Refusal("unannotated_prone")
            raise Refusal("uninformative_answer" if said_nothing[0] else
                          "answer_in_question" if said_answer[0] else
                          "attribute_kind" if q.unfit_refused else
                          "several_colors" if self.image.proofs.several_colored_refused else "no_distractor")
        return ranking.numbered(question_id, PROGRAM_SUFFIX)
