"""Loading VQA v2 and GQA data as one kind of record, the `Sample`, for the VQA-VS construction.

VQA-VS was released for VQA v2 only; users want it on GQA too. Both formats reduce to the same
fields (question, image, the answer used for grouping, the human answers used for scoring, an
optional question type), so the construction and the metric never look at a file format. VQA v2
comes as the official `{"questions": [...]}` / `{"annotations": [...]}` files or as the bare lists of
the VQA-VS release (`Val-Ques.json`, `Val-Ans.json`); both are accepted.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contrastgen.datasets.clevr import whole_field
from contrastgen.datasets.gqa import gqa_json, stream_questions
from contrastgen.errors import InputError, duplicate_id
from contrastgen.jsonio import read_json


@dataclass
class Sample:
    """One question with its gold answers, whatever file format it came from."""

    question_id: str
    image_id: str
    question: str
    answer: str  # the single answer groups are built on (VQA: multiple_choice_answer)
    answers: list[str]  # the human answers VQA accuracy is scored against (GQA: [answer])
    question_type: str | None = None
    answer_type: str | None = None
    # the original record: VQA's as parsed; GQA's serialised as the output writes it (sorted keys),
    # a sixth of its parsed size, which a million-question GQA file could not otherwise hold
    question_record: dict[str, Any] | bytes = field(default_factory=dict, repr=False)
    annotation_record: dict[str, Any] | None = field(default=None, repr=False)


def _records(data: Any, key: str, path: Path) -> list[Any]:
    if isinstance(data, Mapping):
        if key not in data:
            raise InputError(f"expected a list or an object with a {key!r} list", path=str(path))
        data = data[key]
    if not isinstance(data, list):
        raise InputError(f"expected a list of {key}", path=str(path))
    if not data:
        raise InputError(f"no {key} found", path=str(path))
    return data


def _id(record: Mapping[str, Any], field_name: str, path: Path, index: int) -> str:
    """A VQA v2 id (`question_id`, `image_id`): VQA numbers its questions and images, so an id
    is a whole number from 0, as its files and API write it. A numeral string or a negative
    number is not what VQA's own writer could have written; read as text, it would join nothing
    (a string id finds no annotation, whose ids are numbers) and be reported at the wrong file."""
    where = f"item {index}"
    if field_name not in record:
        raise InputError(f"missing field {field_name!r}", path=str(path), record=where)
    whole_field(record, field_name, path=str(path), where=where)
    return str(record[field_name])


def _majority(answers: list[str]) -> str:
    """VQA's `multiple_choice_answer` when a file lacks it: the most common answer, ties alphabetical."""
    counts = Counter(answers)
    return min(counts, key=lambda a: (-counts[a], a))


def load_vqa(questions_path: str | os.PathLike[str],
             annotations_path: str | os.PathLike[str]) -> list[Sample]:
    """VQA v2 questions joined with their annotations, in question-file order."""
    qpath, apath = Path(questions_path), Path(annotations_path)
    annotations: dict[str, dict[str, Any]] = {}
    annotation_item: dict[str, int] = {}
    for i, ann in enumerate(_records(read_json(apath), "annotations", apath)):
        if not isinstance(ann, Mapping):
            raise InputError("annotation is not an object", path=str(apath), record=f"item {i}")
        qid = _id(ann, "question_id", apath, i)
        rec = f"question {qid}"
        if qid in annotations:
            raise InputError(duplicate_id("question", qid, f"annotation {annotation_item[qid]}", f"annotation {i}"),
                             path=str(apath), record=rec)
        annotation_item[qid] = i
        answers = ann.get("answers")
        if not isinstance(answers, list) or not answers:
            raise InputError("missing or empty field 'answers'", path=str(apath), record=rec)
        texts = []
        for a in answers:
            text = a.get("answer") if isinstance(a, Mapping) else a
            if not isinstance(text, str):
                raise InputError("an answer is not a string", path=str(apath), record=rec)
            texts.append(text)
        mc = ann.get("multiple_choice_answer", _majority(texts))
        if not isinstance(mc, str):
            raise InputError("field 'multiple_choice_answer' is not a string", path=str(apath), record=rec)
        annotations[qid] = {"record": dict(ann), "answers": texts, "answer": mc}
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for i, q in enumerate(_records(read_json(qpath), "questions", qpath)):
        if not isinstance(q, Mapping):
            raise InputError("question is not an object", path=str(qpath), record=f"item {i}")
        qid = _id(q, "question_id", qpath, i)
        rec = f"question {qid}"
        if qid in seen:
            raise InputError(duplicate_id("question", qid, f"item {seen[qid]}", f"item {i}"), path=str(qpath),
                             record=rec)
        seen[qid] = i
        image_id = _id(q, "image_id", qpath, i)
        text = q.get("question")
        if not isinstance(text, str) or not text.strip():
            raise InputError("missing or invalid field 'question'", path=str(qpath), record=rec)
        ann = annotations.get(qid)
        if ann is None:
            raise InputError("question has no annotation", path=str(apath), record=rec)
        qt = ann["record"].get("question_type")
        at = ann["record"].get("answer_type")
        samples.append(Sample(qid, image_id, text, ann["answer"], ann["answers"],
                              qt if isinstance(qt, str) else None, at if isinstance(at, str) else None,
                              dict(q), ann["record"]))
    extra = sorted(set(annotations) - set(seen))
    if extra:
        raise InputError(f"{len(extra)} annotations have no question", path=str(apath),
                         record=f"question {extra[0]}")
    return samples


def iter_gqa_samples(questions_path: str | os.PathLike[str], *, records: bool = True
                     ) -> Iterator[tuple[int, Path, Sample]]:
    """(file number, file, sample) for each GQA question, streamed and checked, in file order; ids
    given twice are the caller's to find. With `records`, each sample carries its record
    serialised as the output writes it (sorted keys)."""
    for n, file, qid, q in stream_questions(Path(questions_path), answered=True):
        types = q.get("types") if isinstance(q.get("types"), Mapping) else {}
        qt = types.get("detailed")
        # copied to its own size: orjson's result keeps the 4 KiB block it was written into
        record = memoryview(gqa_json(q)).tobytes() if records else b""
        yield n, file, Sample(qid, q["imageId"], q["question"], q["answer"], [q["answer"]],
                              qt if isinstance(qt, str) else None, None, record, None)


def load_gqa_samples(questions_path: str | os.PathLike[str]) -> list[Sample]:
    """GQA questions as samples: one gold answer; the question type is GQA's detailed type.

    Streamed (one file's records a few at a time), and each record kept serialised: the parsed
    records of a million questions take about 6 GiB."""
    samples = []
    seen: dict[str, Path] = {}
    for _, file, sample in iter_gqa_samples(questions_path):
        if sample.question_id in seen:
            raise InputError(duplicate_id("question", sample.question_id, f"in {seen[sample.question_id]}",
                                          f"in {file}"), path=str(file), record=f"question {sample.question_id}")
        seen[sample.question_id] = file
        samples.append(sample)
    if not samples:
        raise InputError("no questions found", path=str(questions_path))
    return samples
