"""Programs as found in the wild: corrupted steps, dangling or forward dependencies, dead steps,
arguments that name nothing. The engine must never crash on them and never emit a perturbation
the verifier rejects (it refuses the question instead)."""

from __future__ import annotations

import copy
import random

from contrastgen.cli.engine_cmds import sample_paths
from contrastgen.datasets.gqa import load_questions, load_scene_graphs
from contrastgen.verify.checker import verify_contrast_sets

ARGUMENTS = ["", "(", "x (", "a,b (1)", "cat (99999)", "cat,near,q (1)", ")", "white", "red",
             "man (3100034)", "car,to the left of,s (3100033)"]
OPERATIONS = ["select", "relate", "verify rel", "exist", "or", "query", "filter color"]


def _corrupt(semantic: list[dict], rng: random.Random) -> None:
    for _ in range(rng.randrange(1, 3)):
        i = rng.randrange(len(semantic))
        kind = rng.randrange(7)
        if kind == 0:
            semantic[i]["dependencies"] = [rng.randrange(-2, len(semantic) + 2)]
        elif kind == 1:
            semantic[i]["argument"] = rng.choice(ARGUMENTS)
        elif kind == 2:
            semantic[i]["operation"] = rng.choice(OPERATIONS)
        elif kind == 3:
            semantic.insert(rng.randrange(len(semantic) + 1),
                            {"operation": "relate", "argument": "dog,near,s (1)", "dependencies": [0]})
        elif kind == 4:
            semantic[i]["dependencies"] = []
        elif kind == 5 and len(semantic) > 1:
            del semantic[i]
        else:
            semantic[i]["dependencies"] = [0, 0]


def test_corrupted_programs_are_refused_never_crashed_on_or_mis_proven(engine):
    questions_path, graphs_path = sample_paths()
    questions = load_questions(questions_path)
    graphs = load_scene_graphs(graphs_path)
    corpus = engine.build_corpus(graphs)
    items = sorted((qid, q) for qid, q in questions.items() if q.get("semantic") and q["imageId"] in graphs)
    rng = random.Random(0)
    records = []
    for trial in range(3000):
        qid, original = rng.choice(items)
        q = copy.deepcopy(original)
        _corrupt(q["semantic"], rng)
        for r in engine.perturb_question(f"{qid}x{trial}", q, graphs[q["imageId"]], corpus=corpus):
            if r.perturbations:
                records.append(r.to_record())
    assert len(records) > 60  # corruptions that leave the program readable still perturb
    report = verify_contrast_sets(records, graphs)
    assert report.ok, report.failures[:3]
