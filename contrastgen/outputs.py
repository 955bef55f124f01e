"""Writing a generation run: contrast sets, GQA- and LXMERT-format views, statistics. Atomically.

Why several views of one result: evaluation scripts and model loaders already read GQA's
question format and LXMERT's input format; giving them `augmented.json` (and k = 1, 3 views)
means nobody writes a converter. Perturbed GQA records carry their proof under `contrast`, so
tools downstream (the oracle baseline, crowd export) need only these files.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from contrastgen.engine import Generation
from contrastgen.gcutil import no_gc
from contrastgen.jsonio import atomic_dir, atomic_file, dumps, write_json, write_jsonl, write_text
from contrastgen.stats_report import stats_markdown


def perturbation_as_gqa(record: dict[str, Any], p: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """A perturbation in GQA's question format; programs are not rewritten, so `semantic` is empty."""
    return {
        "imageId": record["image_id"], "question": p["question"], "answer": p["answer"],
        "fullAnswer": p["answer"], "isBalanced": bool(original.get("isBalanced", True)),
        "types": original.get("types", {}), "groups": {"global": None, "local": None},
        "semantic": [], "semanticStr": "", "annotations": {}, "entailed": [], "equivalent": [],
        "contrast": {"original_question_id": record["question_id"], "template": record["template"],
                     "rank": p["rank"], "change": p["change"], "evidence": p["evidence"]},
    }


def augmented_views(gen: Generation, questions: dict[str, dict]) -> dict[str, dict[str, Any]]:
    """{'original': ..., 'augmented': ..., 'augmented_k1': ..., 'augmented_k3': ...} in GQA format."""
    original: dict[str, Any] = {}
    views: dict[str, dict[str, Any]] = {"augmented": {}}
    for k in (1, 3):
        if k < gen.max_k:
            views[f"augmented_k{k}"] = {}
    for rec in gen.records:
        q = questions[rec["question_id"]]
        original[rec["question_id"]] = q
        for p in rec["perturbations"]:
            gqa = perturbation_as_gqa(rec, p, q)
            views["augmented"][p["question_id"]] = gqa
            for k in (1, 3):
                if f"augmented_k{k}" in views and p["rank"] <= k:
                    views[f"augmented_k{k}"][p["question_id"]] = gqa
    for view in views.values():
        view.update(original)
    return {"original": original, **views}


def as_lxmert(gqa: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"img_id": q["imageId"], "label": {q["answer"]: 1.0}, "question_id": qid, "sent": q["question"]}
            for qid, q in sorted(gqa.items())]


def write_outputs(gen: Generation, questions: dict[str, dict], out_dir: str | Path) -> Path:
    """Write the whole output directory; nothing appears at `out_dir` unless all of it succeeded."""
    with no_gc(), atomic_dir(out_dir) as tmp:
        write_jsonl(tmp / "contrast_sets.jsonl", gen.records)
        for name, view in augmented_views(gen, questions).items():
            write_json(tmp / f"{name}.json", view)
            write_json(tmp / "lxmert" / f"{name}.json", as_lxmert(view))
        write_json(tmp / "stats.json", gen.stats, indent=True)
        write_text(tmp / "stats.md", stats_markdown(gen.stats))
    return Path(out_dir)


def write_augmented_training(gen: Generation, questions: dict[str, dict], out_file: str | Path, *,
                             replace: bool, seed: int) -> dict[str, int]:
    """Training questions plus perturbations in GQA format (the paper's augmentation).

    `replace` drops as many originals as perturbations are added, chosen by the seed among the
    questions that were not perturbed (then, if those run out, among the perturbed ones), so the
    size stays the same (the paper's control run).
    """
    out: dict[str, Any] = dict(questions)
    added = 0
    perturbed_ids = set()
    for rec in gen.records:
        perturbed_ids.add(rec["question_id"])
        for p in rec["perturbations"]:
            out[p["question_id"]] = perturbation_as_gqa(rec, p, questions[rec["question_id"]])
            added += 1
    dropped = 0
    if replace:
        rng = random.Random(seed)
        pool = []
        for group in (sorted(q for q in questions if q not in perturbed_ids), sorted(perturbed_ids)):
            rng.shuffle(group)
            pool.extend(group)
        for qid in pool[:added]:
            del out[qid]
            dropped += 1
    with atomic_file(Path(out_file)) as fh:
        fh.write(dumps(out))
    return {"original": len(questions), "added": added, "dropped": dropped, "total": len(out)}
