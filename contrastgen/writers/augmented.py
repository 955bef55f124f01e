"""The training file of `contrastgen augment`: every training question plus its perturbations.

It is one GQA-format file, not a directory, so it is not one of the registered writers. The
perturbations' records are the workers' bytes; only the originals that got no perturbation are
serialised here.
"""

from __future__ import annotations

import random
from pathlib import Path

from contrastgen.datasets.gqa import gqa_json
from contrastgen.jsonio import atomic_file, no_gc
from contrastgen.run.entries import ViewEntry
from contrastgen.run.generate import Generation
from contrastgen.writers.base import json_object


def write_augmented_training(gen: Generation, questions: dict[str, dict], out_file: str | Path, *,
                             replace: bool, seed: int) -> dict[str, int]:
    """Training questions plus perturbations in GQA format (the paper's augmentation).

    `replace` drops as many originals as perturbations are added, chosen by the seed among the
    questions that were not perturbed (then, if those run out, among the perturbed ones), so the
    size stays the same (the paper's control run).
    """
    with no_gc():
        entries = {e.key: e for e in gen.views}
        added = sum(1 for e in gen.views if e.rank)
        for qid, q in questions.items():
            if qid not in entries:
                entries[qid] = ViewEntry(qid, 0, gqa_json(q), b"")
        dropped = 0
        if replace:
            perturbed = set(gen.perturbed)
            rng = random.Random(seed)
            pool: list[str] = []
            for group in (sorted(q for q in questions if q not in perturbed), sorted(perturbed)):
                rng.shuffle(group)
                pool.extend(group)
            for qid in pool[:added]:
                del entries[qid]
                dropped += 1
        kept = [entries[k] for k in sorted(entries)]
        with atomic_file(Path(out_file)) as fh:
            for chunk in json_object(kept):
                fh.write(chunk)
    return {"original": len(questions), "added": added, "dropped": dropped, "total": len(kept)}
