"""The data model every stage after reading sees, and what a dataset reader provides.

Why one model: the scene index, the corpus, grounding and the verifier all read the same shape,
so they never learn which dataset a record came from. The model is GQA's, because GQA is the
richest of the formats contrastgen reads (objects with names, attributes, boxes and relations;
questions with functional programs): a reader for another family converts its files into it.
A dataset family's readers (`families.base.Family.load_questions`, `load_scenes`) return these
shapes, validated, with errors that name the file and the record.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Protocol, TypedDict


class Relation(TypedDict):
    name: str  # "to the left of", "wearing", ...
    object: str  # the target object's id


class _Box(TypedDict):
    name: str
    x: float  # box, in pixels
    y: float
    w: float
    h: float


class SceneObject(_Box, total=False):
    attributes: list[str]
    relations: list[Relation]


class _Graph(TypedDict):
    width: float
    objects: dict[str, SceneObject]  # by object id


class SceneGraph(_Graph, total=False):
    height: float


class _Asked(TypedDict):
    question: str
    imageId: str


class Question(_Asked, total=False):
    answer: str
    semantic: list[dict[str, Any]]  # GQA's program: steps {operation, argument, dependencies}
    annotations: dict[str, Any]  # token spans -> object ids


Questions = dict[str, Question]  # by question id, in input order
SceneGraphs = dict[str, SceneGraph]  # by image id

# (question id, question text, the record: a dict, its sorted-key JSON, or None when the
# loader's screen found that no template can match it)
QuestionItem = tuple[str, str, "dict[str, Any] | bytes | None"]


class QuestionSource(Protocol):
    """Questions as a run consumes them: grouped by image, in input order.

    Two implementations: `DictQuestions` over loaded records (the library call, the API) and
    `spilled.SpilledQuestions`, streamed into a file for runs from files.
    """

    order: list[str]  # every question id, in input order

    def __len__(self) -> int: ...

    @property
    def image_ids(self) -> list[str]: ...  # in order of first appearance

    def questions_of(self, image_id: str) -> list[QuestionItem]: ...


class DictQuestions:
    """Loaded questions seen as a QuestionSource."""

    def __init__(self, questions: dict[str, dict[str, Any]]):
        self.questions = questions
        self.order = list(questions)
        self.by_image: dict[str, list[str]] = defaultdict(list)
        for qid, q in questions.items():
            self.by_image[str(q["imageId"])].append(qid)

    def __len__(self) -> int:
        return len(self.order)

    @property
    def image_ids(self) -> list[str]:
        return list(self.by_image)

    def questions_of(self, image_id: str) -> list[QuestionItem]:
        qs = self.questions
        return [(qid, qs[qid]["question"], qs[qid]) for qid in self.by_image[image_id]]
