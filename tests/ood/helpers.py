"""Small hand-built datasets for the OOD tests (GQA and VQA v2 formats)."""

from __future__ import annotations

import json
from pathlib import Path


def gqa_question(qid: str, group: str | None, answer: str, image: str = "1") -> tuple[str, dict]:
    q = {"question": f"Question {qid}?", "imageId": image, "answer": answer,
         "types": {"detailed": "typeA", "semantic": "attr", "structural": "query"}}
    if group is not None:
        q["groups"] = {"global": None, "local": group}
    return qid, q


def gqa_questions() -> dict[str, dict]:
    """g1: red x8, blue, green (imbalanced, tail blue/green); g2: yes x5 / no x5 (balanced);
    g3: a single answer; g4: dog x3, cat x1 (normalised entropy 0.811, tail cat); one ungrouped."""
    rows = []
    n = 0

    def add(group, answer, times):
        nonlocal n
        for _ in range(times):
            n += 1
            rows.append(gqa_question(f"q{n:03d}", group, answer))

    add("g1", "red", 8)
    add("g1", "blue", 1)
    add("g1", "green", 1)
    add("g2", "yes", 5)
    add("g2", "no", 5)
    add("g3", "cat", 4)
    add("g4", "dog", 3)
    add("g4", "cat", 1)
    add(None, "left", 1)
    return dict(rows)


def write_json(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj))
    return path


def vqa_files(tmp_path: Path, rows: list[tuple[str, str, str, list[str]]], *, official: bool = False):
    """rows: (question, image id, multiple-choice answer, ten answers) -> (questions, annotations) paths."""
    ques, anns = [], []
    for i, (question, image, mc, answers) in enumerate(rows):
        qid = 1000 + i
        ques.append({"image_id": int(image), "question": question, "question_id": qid})
        answer_type = "yes/no" if mc in ("yes", "no") else "number" if mc.isdigit() else "other"
        anns.append({"question_id": qid, "image_id": int(image), "multiple_choice_answer": mc,
                     "answer_type": answer_type,
                     "answers": [{"answer": a, "answer_confidence": "yes", "answer_id": j + 1}
                                 for j, a in enumerate(answers)]})
    if official:
        return (write_json(tmp_path / "q.json", {"questions": ques}),
                write_json(tmp_path / "a.json", {"annotations": anns}))
    return write_json(tmp_path / "q.json", ques), write_json(tmp_path / "a.json", anns)


def refuse_an_id_given_twice(build, tmp_path: Path) -> None:
    """`build(questions, out_dir)` on two shards that both hold q007: refused, naming the second
    shard and the id, and nothing written. What every streamed build must do."""
    import pytest

    from contrastgen.errors import InputError

    (tmp_path / "shards").mkdir()
    write_json(tmp_path / "shards" / "a.json", gqa_questions())
    write_json(tmp_path / "shards" / "b.json", dict([gqa_question("q100", "g1", "red"), gqa_question("q007", "g1", "red")]))
    with pytest.raises(InputError, match=r"question id 'q007' is given twice \(in .*a\.json, and in .*b\.json\)") as err:
        build(tmp_path / "shards", tmp_path / "out")
    assert err.value.path == str(tmp_path / "shards" / "b.json") and "q007" in str(err.value)
    assert not (tmp_path / "out").exists()


def refuse_an_empty_file_and_a_broken_record(build, tmp_path: Path, breaks) -> None:
    """`build(questions, out_dir)` on an empty file, then on the hand-built questions with q003
    broken by `breaks(record)`: each refused with the file (and the record) named, nothing written.
    What every streamed build must do."""
    import pytest

    from contrastgen.errors import InputError

    (tmp_path / "empty.json").write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        build(tmp_path / "empty.json", tmp_path / "out")
    questions = gqa_questions()
    breaks(questions["q003"])
    write_json(tmp_path / "broken.json", questions)
    with pytest.raises(InputError, match="q003") as err:
        build(tmp_path / "broken.json", tmp_path / "out")
    assert err.value.path == str(tmp_path / "broken.json")
    # in a directory of shards, the shard that holds it
    (tmp_path / "shards").mkdir()
    write_json(tmp_path / "shards" / "a.json", dict([gqa_question("q100", "g1", "red")]))
    write_json(tmp_path / "shards" / "b.json", questions)
    with pytest.raises(InputError, match="q003") as err:
        build(tmp_path / "shards", tmp_path / "out")
    assert err.value.path == str(tmp_path / "shards" / "b.json")
    assert not (tmp_path / "out").exists()
