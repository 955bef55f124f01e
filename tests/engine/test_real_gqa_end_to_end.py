"""The whole pipeline on GQA's own wording: real questions, over graphs built from their programs
(`benchmarks/graphs_from_programs.py`; GQA's scene graphs are not in ../shared). Every
perturbation must pass the verifier, the word and program checks included."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from graphs_from_programs import _answered, build  # benchmarks/, on pytest's pythonpath

from contrastgen.run.generate import generate
from contrastgen.verify.checker import verify_contrast_sets


def test_real_questions_are_perturbed_and_every_perturbation_verifies(real_gqa_questions, engine):
    graphs = build(real_gqa_questions)
    gen = generate(real_gqa_questions, graphs, engine=engine, max_k=5, seed=0, workers=1)
    report = verify_contrast_sets(gen.records, graphs)
    assert report.ok, report.failures[:5]
    by_template = Counter(r["template"] for r in gen.records)
    n = sum(len(r["perturbations"]) for r in gen.records)
    with_program = sum("semantic" in p for r in gen.records for p in r["perturbations"])
    print(f"\nreal GQA over graphs from programs: {n} perturbations of {len(gen.records)} questions, "
          f"{with_program} with their edited program; per template {dict(by_template)}; "
          f"refusals {gen.stats['reasons']}")
    assert n >= 300 and with_program == n
    assert {"what_color_is_the_x", "do_you_see_x_or_y", "is_the_x_rel_the_y__relation"} <= set(by_template)


def test_graphs_filled_to_gqa_density_keep_every_answer_and_every_perturbation_verifies(
        real_gqa_questions, engine):
    """`--density`: other images' program objects fill each graph; a donor that would change what
    one of the image's questions answers is not taken, and the denser graphs are still proofs'
    ground (half the sample, to keep the suite fast)."""
    qids = sorted(real_gqa_questions)[::2]
    questions = {q: real_gqa_questions[q] for q in qids}
    thin, dense = build(questions), build(questions, density=16)
    assert sum(len(g["objects"]) for g in dense.values()) >= 15 * len(dense)
    assert all(set(thin[image]["objects"]) - {"d0", "d1", "d2"} <= set(g["objects"]) for image, g in dense.items())
    by_image: dict[str, list[dict]] = {}
    for q in questions.values():
        by_image.setdefault(str(q["imageId"]), []).append(q)
    for image, asked in by_image.items():
        before, after = _answered(image, thin[image], asked), _answered(image, dense[image], asked)
        assert all(a for a, b in zip(after, before, strict=True) if b), image
    gen = generate(questions, dense, engine=engine, max_k=5, seed=0, workers=1, mode="both")
    report = verify_contrast_sets(gen.records, dense)
    assert report.ok, report.failures[:5]
    assert sum(len(r["perturbations"]) for r in gen.records) >= 300


def test_gqa_style_relation_and_near_questions_are_perturbed_and_verify(engine):
    """The written GQA-style corpus has the relation and near questions the real sample lacks."""
    import json

    path = Path(__file__).resolve().parents[1] / "data" / "gqa_style_questions.json"
    questions = json.loads(path.read_text())["questions"]
    graphs = build(questions)
    gen = generate(questions, graphs, engine=engine, max_k=5, seed=0, workers=1)
    report = verify_contrast_sets(gen.records, graphs)
    assert report.ok, report.failures[:5]
    by_template = Counter(r["template"] for r in gen.records)
    assert by_template["is_the_x_rel_the_y__relation"] >= 20 and by_template["are_there_x_near_the_y"] >= 8
    # the look-alikes ("Is the man near the catcher wearing jeans?") are never perturbed
    relational = [r for r in gen.records if r["template"] != "what_color_is_the_x"]
    assert not any(w in r["question"] for r in relational for w in ("wearing", "parked", "'s ", " that is "))


def test_gqa_style_questions_over_graphs_at_gqa_density_verify(engine):
    """The written corpus's position questions ("Is the car on the left of the photo?") over
    denser graphs: a renamed object may land in the middle band, where no side is shown."""
    import json

    path = Path(__file__).resolve().parents[1] / "data" / "gqa_style_questions.json"
    questions = json.loads(path.read_text())["questions"]
    graphs = build(questions, density=16, seed=5)
    gen = generate(questions, graphs, engine=engine, max_k=5, seed=0, workers=1, mode="both")
    report = verify_contrast_sets(gen.records, graphs)
    assert report.ok, report.failures[:5]
    assert sum(len(r["perturbations"]) for r in gen.records) >= 500
