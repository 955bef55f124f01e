"""GQA-OOD from question files of any size, in two passes that never hold the questions parsed.

Why: `build_gqa_ood` takes every question parsed (about 6 KB each): 6.2 GiB for a million, well
over 100 GB for GQA's 22 million. The construction needs much less. The first pass needs only each
local group's answer counts, which decide the kept groups and their tail answers. The second pass
places each question in head or tail as it streams by. A kept question is written at once to a
spill file, serialised as the output holds it. The output files are then put together in
question-id order from an index: each id at a fixed width, an offset, a length and a split (about
40 bytes a question). That order is what the in-memory writer's sorted keys give, so the files are
byte-identical to `write_gqa_ood(build_gqa_ood(load_questions(...)))`.

The same index finds an id given twice: two equal ids are neighbours once the index is sorted. So a
duplicate is reported after the second pass, not as the file is read, naming the file of its second
occurrence as `load_questions` does.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from contrastgen.datasets.gqa import gqa_json, stream_questions
from contrastgen.datasets.inputs import json_files
from contrastgen.datasets.question_index import QuestionIndex, RecordSpill, keyed_records
from contrastgen.errors import InputError
from contrastgen.files.atomic import atomic_dir
from contrastgen.files.manifest import OOD_GQA, write_manifest
from contrastgen.jsonio import write_chunks, write_json
from contrastgen.ood.gqa_ood import (
    GROUPS_FILE,
    NOTHING_KEPT,
    STATS_FILE,
    GqaOodConfig,
    local_group,
    select_groups,
)
from contrastgen.terminal.progress import Advance, counted
from contrastgen.terminal.progress import progress as progress_bar

PathLike = str | os.PathLike[str]
_NONE, _HEAD, _TAIL = 0, 1, 2  # where a question goes
_SPLITS = (("all", (_HEAD, _TAIL)), ("head", (_HEAD,)), ("tail", (_TAIL,)))


def run_gqa_ood_streamed(questions: PathLike, out_dir: PathLike, config: GqaOodConfig | None = None, *,
                         progress: bool = False) -> dict[str, Any]:
    """Build GQA-OOD from a GQA question file (or directory of shards) into `out_dir`, atomically;
    return its stats. `progress`: a bar on a terminal for each pass, advanced per question."""
    config = config or GqaOodConfig()
    files = json_files(questions)
    with progress_bar("counting questions", None, enabled=progress) as advance:
        histograms, total, ungrouped = _count(Path(questions), advance)
    split = select_groups(histograms, config, total=total, ungrouped=ungrouped)
    tails = split.tails()
    with tempfile.TemporaryFile(prefix="contrastgen-gqa-ood-") as fh:
        spill = RecordSpill(fh)
        with progress_bar("placing questions", total, enabled=progress) as advance:
            index, places = _place(Path(questions), files, tails, spill, advance)
        index.no_id_twice()
        n_all, n_head, n_tail = (int(np.isin(places, wanted).sum()) for _, wanted in _SPLITS)
        if not n_all:
            raise InputError(NOTHING_KEPT)
        split.question_counts = (n_all, n_head, n_tail)
        with atomic_dir(out_dir) as tmp:
            for name, wanted in _SPLITS:
                rows = index.order[np.isin(places[index.order], wanted)]
                write_chunks(tmp / f"{name}.json", keyed_records(index, spill, rows))
            write_json(tmp / GROUPS_FILE, {k: g.to_json() for k, g in split.groups.items() if g.imbalanced},
                       indent=True)
            write_json(tmp / STATS_FILE, split.stats(), indent=True)
            write_manifest(tmp, OOD_GQA, "contrastgen ood gqa")
    return split.stats()


def _count(questions: Path, advance: Advance) -> tuple[dict[str, Counter], int, int]:
    """Pass one: each local group's answer counts, the questions, and those without a group."""
    histograms: dict[str, Counter] = {}
    total = ungrouped = 0
    for _, _, _, q in counted(stream_questions(questions, answered=True), advance):
        total += 1
        group = local_group(q)
        if group is None:
            ungrouped += 1
        else:
            histograms.setdefault(group, Counter())[q["answer"]] += 1
    if not total:
        raise InputError("no questions found", path=str(questions))
    return histograms, total, ungrouped


def _place(questions: Path, files: list[Path], tails: dict[str, set[str]], spill: RecordSpill,
           advance: Advance) -> tuple[QuestionIndex, np.ndarray]:
    """Pass two: each question's split, and each kept one's record written to `spill`."""
    index = QuestionIndex(files)
    places = array("b")
    for n, _, qid, q in counted(stream_questions(questions), advance):
        index.add(qid, n)
        group = local_group(q)
        if group not in tails:
            places.append(_NONE)
            spill.add(None)
            continue
        places.append(_TAIL if q["answer"] in tails[group] else _HEAD)
        spill.add(gqa_json(q))
    index.freeze()
    spill.freeze()
    return index, np.frombuffer(places, dtype=np.int8)
