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
from contrastgen.jsonio import atomic_dir, atomic_file, dumps, write_chunks, write_json, write_text
from contrastgen.stats_report import stats_markdown
from contrastgen.views import json_list, json_object, perturbation_as_gqa, select, view_names


def write_outputs(gen: Generation, out_dir: str | Path) -> Path:
    """Write the whole output directory; nothing appears at `out_dir` unless all of it succeeded."""
    with no_gc(), atomic_dir(out_dir) as tmp:
        write_chunks(tmp / "contrast_sets.jsonl", gen.lines)
        for name, max_rank in view_names(gen.max_k).items():
            entries = select(gen.views, max_rank)
            write_chunks(tmp / f"{name}.json", json_object(entries))
            write_chunks(tmp / "lxmert" / f"{name}.json", json_list(entries))
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
