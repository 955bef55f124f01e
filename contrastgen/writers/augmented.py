"""The training file of `contrastgen augment`: every training question plus its perturbations.

It is one GQA-format file, not a directory, so it is not one of the registered writers. The
perturbations' records are the workers' bytes; only the originals that got no perturbation are
serialised here.
"""

from __future__ import annotations

import random
from pathlib import Path

import orjson

from contrastgen.collector import no_gc
from contrastgen.datasets.gqa import gqa_json
from contrastgen.datasets.lxmert import lxmert_item
from contrastgen.jsonio import atomic_file
from contrastgen.run.entries import ViewEntry
from contrastgen.run.generate import Generation
from contrastgen.writers.base import json_list, json_object


def lxmert_path(out_file: str | Path) -> Path:
    """Where the LXMERT copy of an augmented file goes: `train_aug.json` -> `train_aug.lxmert.json`."""
    path = Path(out_file)
    return path.with_name(f"{path.stem}.lxmert{path.suffix or '.json'}")


def write_augmented_training(gen: Generation, questions: dict[str, dict], out_file: str | Path, *,
                             replace: bool, seed: int, lxmert_file: str | Path | None = None) -> dict[str, int]:
    """Training questions plus perturbations in GQA format (the paper's augmentation), and the
    same questions in LXMERT's input format in `lxmert_file` when given (the order is the GQA
    file's, by question id).

    `replace` drops as many originals as perturbations are added, chosen by the seed among the
    questions that were not perturbed (then, if those run out, among the perturbed ones), so the
    size stays the same (the paper's control run).
    """
    with no_gc():
        entries = {e.key: e for e in gen.views}
        added = sum(1 for e in gen.views if e.rank)
        for qid, q in questions.items():
            if qid not in entries:
                lxmert = orjson.dumps(lxmert_item(qid, q), option=orjson.OPT_SORT_KEYS) if lxmert_file else b""
                entries[qid] = ViewEntry(qid, 0, gqa_json(q), lxmert)
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
        if lxmert_file is not None:
            with atomic_file(Path(lxmert_file)) as fh:
                for chunk in json_list(kept):
                    fh.write(chunk)
    return {"original": len(questions), "added": added, "dropped": dropped, "total": len(kept)}
