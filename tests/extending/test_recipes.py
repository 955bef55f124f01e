"""The README's recipes for extending contrastgen ("Extending it"), each done for real.

A recipe that breaks (a registry that misses a decorated handler, a writer
that is not written, a reader's records the engine cannot take) fails here, not in a user's
fork.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import synth

from contrastgen.datasets.base import Question, SceneGraph
from contrastgen.datasets.gqa_program import Step, relation_of, split_reference
from contrastgen.engine import Engine
from contrastgen.errors import InputError
from contrastgen.language.lexicon import Lexicon
from contrastgen.perturb import Proposal
from contrastgen.programs.edits import editor
from contrastgen.programs.edits.question import EditedQuestion
from contrastgen.programs.wording import replace, said_once
from contrastgen.resources import rules_file
from contrastgen.run.generate import generate
from contrastgen.templates import registry
from contrastgen.templates.patterns import load_templates_from
from contrastgen.templates.side import answer_side, perturb_side
from contrastgen.verify.checker import verify_contrast_sets
from contrastgen.writers import WRITERS, Writer, register, write_outputs

NEW_ID = "where_in_the_picture_is_the_x"


def _templates_with(tmp_path: Path, entry: dict | None):
    data = json.loads(rules_file("templates.json").read_text(encoding="utf-8"))
    if entry is not None:
        data["templates"].append(entry)
    path = tmp_path / "templates.json"
    path.write_text(json.dumps(data))
    return load_templates_from(path)


NEW_ENTRY = {
    "id": NEW_ID, "id_suffix": "w", "description": "Where in the picture is the X? (left or right)",
    "patterns": [r"^where\s+in\s+the\s+(?:picture|image)\s+(?P<cop>is|are)\s+(?P<x>{DEF}\s+{NP})$"],
    "slots": {"x": "simple"}, "program": {"kind": "side"}, "requires": ["where"],
    "examples": {"match": ["Where in the picture is the cat?"], "no_match": ["Where is the cat?"]},
}

SCENE: SceneGraph = {"width": 640, "height": 480, "objects": {
    "1": {"name": "cat", "x": 40, "y": 200, "w": 80, "h": 60, "attributes": ["white"], "relations": []},
    "2": {"name": "dog", "x": 500, "y": 210, "w": 90, "h": 70, "attributes": ["brown"], "relations": []},
}}


def test_a_template_is_a_rules_entry_plus_a_decorated_handler(tmp_path):
    templates = _templates_with(tmp_path, NEW_ENTRY)
    try:
        @registry.template(NEW_ID, answer=answer_side)
        def perturb_where(ctx):
            yield from perturb_side(ctx)  # the side template's proof, under new words

        engine = Engine(Lexicon.load(), templates)
        [result] = engine.perturb_question("q1", {"question": "Where in the picture is the cat?",
                                                  "answer": "left", "imageId": "img"}, SCENE)
    finally:
        if NEW_ID in registry.HANDLERS:
            registry.HANDLERS.remove(NEW_ID)
    assert result.template == NEW_ID and result.reason is None
    [p] = result.perturbations
    assert p.question == "Where in the picture is the dog?" and p.answer == "right"
    assert p.question_id == "q1_w1" and p.evidence["query"] == {"op": "side", "object": "2"}


def test_a_rules_entry_without_a_handler_fails_at_load(tmp_path):
    with pytest.raises(InputError, match=f"template '{NEW_ID}' has no handler") as err:
        Engine(Lexicon.load(), _templates_with(tmp_path, NEW_ENTRY))
    assert err.value.record == NEW_ID


def test_a_handler_is_found_by_importing_its_module():
    shipped = {t["id"] for t in json.loads(rules_file("templates.json").read_text())["templates"]}
    assert set(registry.registered()) == shipped
    assert registry.unbound_handlers(_templates_in_rules()) == []


def _templates_in_rules():
    return load_templates_from(rules_file("templates.json"))


class OppositeRelation:
    """A program edit written as the README's recipe says: a `relate` or `verify rel` turned to
    its opposite ("Is the post above the window?" -> "... below ...")."""

    name = "opposite_relation"
    last = False

    def applies(self, step: Step) -> bool:
        return step.operation in ("relate", "verify rel")

    def propose(self, q: EditedQuestion, index: int, rng: random.Random, ranking) -> Iterator[Proposal]:
        name, rel, role = relation_of(q.steps[index])
        opposite = q.image.lex.opposite_relation(rel) if rel else None
        span = said_once(q.text, rel) if rel else None
        if opposite is None or span is None or any(rel in s.argument for s in q.steps[index + 1:]):
            return
        # a `verify rel` keeps the ids its argument names after the reference
        ids = "" if q.steps[index].operation == "relate" else q.semantic[index]["argument"].strip()[
            len(split_reference(q.steps[index].argument)[0]):]
        done = q.execute(index, f"{name},{opposite},{role}{ids}")
        if done is None:
            return
        edited, run, rewritten = done
        if run.answer == q.gold or (q.steps[index].operation == "relate" and len(run.refs.get(index, ())) != 1):
            return
        yield q.perturbation(edited, run, index, rewritten, replace(q.text, span, opposite),
                             {"kind": "relation", "slot": f"step{index}", "from": rel, "to": opposite}, [],
                             "contrast")


def test_a_program_edit_is_one_object_listed_in_edits(monkeypatch):
    """Listed alone in EDITS, the new edit is the program path: the driver numbers what it
    proposes, and every output verifies."""
    monkeypatch.setattr(editor, "EDITS", (OppositeRelation(),))
    questions, graphs = synth.make_dataset(150, 2000, seed=4)
    gen = generate(questions, graphs, engine=Engine.load(), workers=1, mode="programs")
    edited = [r for r in gen.records if r["template"] == "program"]  # (a question without a program: templates)
    perturbations = [p for r in edited for p in r["perturbations"]]
    assert len(perturbations) > 5
    lex = Lexicon.load()
    assert all(p["change"]["kind"] == "relation" and p["change"]["to"] == lex.opposite_relation(p["change"]["from"])
               for p in perturbations)
    for r in edited:
        assert [p["question_id"] for p in r["perturbations"]] == [
            f"{r['question_id']}_p{rank}" for rank in range(1, len(r["perturbations"]) + 1)]
    report = verify_contrast_sets(gen.records, graphs)
    assert report.ok, report.failures[:5]


def test_a_writer_is_one_registered_class(tmp_path):
    @register
    class QuestionIds(Writer):
        name = "question_ids"
        files = "question_ids.txt"

        def write(self, gen, out):
            (out / self.files).write_text("".join(f"{e.key}\n" for e in gen.views))

    try:
        gen = generate({"q1": {"question": "What color is the cat?", "answer": "white",
                                              "imageId": "img"}}, {"img": SCENE}, engine=Engine.load(), workers=1)
        out = write_outputs(gen, tmp_path / "out")
    finally:
        WRITERS.remove("question_ids")
    assert (out / "question_ids.txt").read_text() == "q1\nq1_c1\n"
    assert (out / "contrast_sets.jsonl").is_file()  # the built-in writers still run


def test_every_view_file_is_written_in_one_pass_over_the_entries(tmp_path):
    """A spilled run's views are read from disk and decoded on every pass: the built-in view
    writers and a registered one must share a single pass."""
    import dataclasses

    from contrastgen.writers import ViewFile, ViewWriter

    @register
    class Keys(ViewWriter):
        name = "keys"
        files = "keys.json"

        def files_of(self, gen, out):
            return [ViewFile(out / self.files, None, lambda e: json.dumps(e.key).encode(), (b"[", b"]\n"))]

    try:
        gen = generate({"q1": {"question": "What color is the cat?", "answer": "white",
                                              "imageId": "img"}}, {"img": SCENE}, engine=Engine.load(), workers=1)

        class CountedPasses(list):
            passes = 0

            def __iter__(self):
                CountedPasses.passes += 1
                return super().__iter__()

        out = write_outputs(dataclasses.replace(gen, views=CountedPasses(gen.views)), tmp_path / "out")
    finally:
        WRITERS.remove("keys")
    assert CountedPasses.passes == 1
    assert json.loads((out / "keys.json").read_text()) == ["q1", "q1_c1"]
    assert set(json.loads((out / "augmented.json").read_text())) == {"q1", "q1_c1"}
    assert [r["question_id"] for r in json.loads((out / "lxmert" / "augmented.json").read_text())] == [
        "q1", "q1_c1"]
    assert set(json.loads((out / "original.json").read_text())) == {"q1"}


def _toy_reader(rows: list[str]) -> tuple[dict[str, Question], dict[str, SceneGraph]]:
    """A reader for a made-up format (`image|object|x|w|colour` and `image|?|question|answer`):
    all a dataset module has to do is return the data model of datasets/base.py."""
    graphs: dict[str, SceneGraph] = {}
    questions: dict[str, Question] = {}
    for i, row in enumerate(rows):
        image, what, *rest = row.split("|")
        if what == "?":
            questions[f"t{i}"] = {"question": rest[0], "answer": rest[1], "imageId": image}
        else:
            x, w, colour = rest
            graph = graphs.setdefault(image, {"width": 100, "height": 100, "objects": {}})
            graph["objects"][str(len(graph["objects"]) + 1)] = {
                "name": what, "x": float(x), "y": 10.0, "w": float(w), "h": 10.0,
                "attributes": [colour], "relations": []}
    return questions, graphs


def test_a_dataset_is_one_reader_into_the_data_model():
    questions, graphs = _toy_reader(["a|cup|5|10|red", "a|plate|70|20|white", "a|?|What color is the cup?|red"])
    gen = generate(questions, graphs, engine=Engine.load(), workers=1)
    [record] = gen.records
    assert record["perturbations"][0]["question"] == "What color is the plate?"
    assert record["perturbations"][0]["answer"] == "white"
    assert verify_contrast_sets(gen.records, graphs).ok


def test_every_endpoint_is_documented():
    """An endpoint's recipe ends with its row in the endpoint table of docs/http-service.md."""
    from contrastgen.api.app import create_app

    page = (Path(__file__).resolve().parents[2] / "docs" / "http-service.md").read_text(encoding="utf-8")
    app = create_app()
    for route in app.routes:
        path = getattr(route, "path", "")
        if path.startswith("/v1/"):
            for method in sorted(route.methods - {"HEAD"}):
                assert f"`{method} {path}`" in page, f"{method} {path} is not in docs/http-service.md"
