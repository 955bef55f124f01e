"""Regenerate `examples.json` (the OpenAPI page's request examples) from the bundled sample.

    python -m contrastgen.api.make_examples

Why generated rather than hand-written: an example that the server would reject teaches a user
the wrong thing. These are cut from `contrastgen/data/sample` and the engine's own output, and
`tests/api` posts every one of them to a real server and expects a 200.
"""

from __future__ import annotations

from typing import Any

from contrastgen.datasets.gqa import load_questions, load_scene_graphs
from contrastgen.engine import Engine
from contrastgen.jsonio import write_json
from contrastgen.resources import api_file, sample_dir
from contrastgen.run.generate import generate

SAMPLE = sample_dir()
ABOUT = ("Request examples shown on the OpenAPI page (/docs), keyed by request model. Generated "
         "from contrastgen/data/sample by `python -m contrastgen.api.make_examples`; do not edit.")
SEED = 0


def _alone(engine: Engine, record: dict[str, Any], questions: dict, graphs: dict) -> bool:
    """Whether the record's question still has perturbations when posted alone to /v1/perturb
    (distractor statistics from its own graph only), so the example shows some."""
    q = questions[record["question_id"]]
    graph = graphs[q["imageId"]]
    corpus = engine.build_corpus({q["imageId"]: graph})
    return bool(engine.perturb(record["question_id"], q, graph, corpus=corpus).perturbations)


def build() -> dict[str, Any]:
    questions = load_questions(SAMPLE / "questions.json")
    graphs = load_scene_graphs(SAMPLE / "scene_graphs.json")
    questions = {q: v for q, v in questions.items() if v["imageId"] in graphs}
    engine = Engine.load()
    records = generate(questions, graphs, engine=engine, seed=SEED, workers=1).records
    near = next(r for r in records if _alone(engine, r, questions, graphs))
    color = next(r for r in records if r["template"] != near["template"])
    q = questions[near["question_id"]]
    unmatched = next(v for v in questions.values()
                     if v["imageId"] == q["imageId"] and not engine.perturb("x", v, None).template)
    image = q["imageId"]
    graph = graphs[image]
    same_image = {k: v for k, v in questions.items() if v["imageId"] == image}
    perturb = {
        "question": q["question"], "answer": q["answer"], "semantic": q.get("semantic"),
        "scene_graph": graph, "question_id": near["question_id"], "image_id": image,
        "max_k": 3, "seed": SEED,
    }
    no_match = {"question": unmatched["question"], "answer": unmatched["answer"],
                "scene_graph": graph, "image_id": image}
    first = near["perturbations"][0]
    return {
        "_about": ABOUT,
        "PerturbRequest": {
            "perturbed": {"summary": "a question with its GQA program", "value": perturb},
            "no_match": {"summary": "a question no template matches (200, reason no_match)",
                         "value": no_match},
        },
        "BatchRequest": {
            "one_image": {"summary": "every sample question about one image",
                          "value": {"questions": same_image, "scene_graphs": {image: graph},
                                    "max_k": 5, "seed": SEED}},
        },
        "VerifyRequest": {
            "records": {"summary": "two generated records and their graphs",
                        "value": {"records": [near, color],
                                  "scene_graphs": {near["image_id"]: graphs[near["image_id"]],
                                                   color["image_id"]: graphs[color["image_id"]]}}},
        },
        "EvaluateRequest": {
            "two_models": {"summary": "a model that always says yes, and one that is right",
                           "value": {
                               "records": [near],
                               "predictions": {
                                   "always_yes": {near["question_id"]: "yes",
                                                  first["question_id"]: "yes"},
                                   "right": [{"questionId": near["question_id"],
                                              "prediction": near["answer"]},
                                             {"questionId": first["question_id"],
                                              "prediction": first["answer"]}],
                               },
                               "n_boot": 200, "seed": SEED}},
        },
    }


def main() -> None:
    write_json(api_file("examples.json"), build(), indent=True)


if __name__ == "__main__":
    main()
