"""Simulated MTurk results for an exported batch: a dry run of the loop before paying for it.

Why: a requester should be able to check the whole pipeline (export, upload files, ingest,
report) on their own data before spending money, and the tests need results files in MTurk's
real column layout. The simulated crowd answers each item correctly with a chosen probability
(separately for originals, perturbations and gold) and otherwise gives another answer seen in
the batch or ticks "cannot tell". The CSV has the columns, quoting and ordering of the
requester site's "Download CSV"; nothing here is a claim about real workers.
"""

from __future__ import annotations

import csv
import io
import os
import random
from dataclasses import dataclass
from pathlib import Path

from contrastgen.errors import InputError
from contrastgen.files.csv_cells import neutral_row
from contrastgen.jsonio import write_text

from .export import BATCH_CSV, HIT_PROPERTIES, MANIFEST, UPLOAD_DIR
from .manifest import load_manifest

# The requester site's results CSV: MTurk's own columns, then Input.*, then Answer.*, then
# the Approve/Reject columns a requester may fill and upload back.
MTURK_COLUMNS = [
    "HITId", "HITTypeId", "Title", "Description", "Keywords", "Reward", "CreationTime", "MaxAssignments",
    "RequesterAnnotation", "AssignmentDurationInSeconds", "AutoApprovalDelayInSeconds", "Expiration",
    "NumberOfSimilarHITs", "LifetimeInSeconds", "AssignmentId", "WorkerId", "AssignmentStatus", "AcceptTime",
    "SubmitTime", "AutoApprovalTime", "ApprovalTime", "RejectionTime", "RequesterFeedback",
    "WorkTimeInSeconds", "LifetimeApprovalRate", "Last30DaysApprovalRate", "Last7DaysApprovalRate",
]
FALLBACK_ANSWERS = ("yes", "no", "left", "right")


@dataclass(frozen=True)
class CrowdModel:
    """How the simulated crowd behaves."""

    accuracy_original: float = 0.85
    accuracy_perturbed: float = 0.8
    accuracy_gold: float = 0.95
    cannot_tell_rate: float = 0.03
    rejected_rate: float = 0.0
    workers: int = 12


def _token(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(n))


def results_csv_text(header: list[str], rows: list[dict[str, str]]) -> str:
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=header, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(neutral_row(row) for row in rows)  # no cell a spreadsheet would run as a formula
    return buf.getvalue()


def simulate_results(hit_dir: str | os.PathLike[str], *, out: str | os.PathLike[str], seed: int = 0,
                     model: CrowdModel | None = None) -> Path:
    """Write a results CSV for the batch in `hit_dir` as a simulated crowd would produce it."""
    model = model or CrowdModel()
    base = Path(hit_dir)
    manifest = load_manifest(base / MANIFEST)
    props_path = base / UPLOAD_DIR / HIT_PROPERTIES
    if not (base / UPLOAD_DIR / BATCH_CSV).is_file() or not props_path.is_file():
        raise InputError("not an export directory (upload/ files missing)", path=str(base))
    assignments = int(manifest["params"]["assignments"])
    if model.workers < assignments:
        raise InputError(f"need at least {assignments} simulated workers for {assignments} assignments per HIT")
    rng = random.Random(seed)
    items = manifest["items"]
    pool = sorted({a for it in items.values() for a in it["answers"]} | set(FALLBACK_ANSWERS))
    workers = [f"A{_token(rng, 13)}" for _ in range(model.workers)]
    n_slots = manifest["params"]["items_per_hit"]
    columns = manifest["columns"]
    answer_cols = [c for s in range(1, n_slots + 1) for c in (f"Answer.item{s}_answer", f"Answer.item{s}_cannot_tell.on")]
    header = MTURK_COLUMNS + [f"Input.{c}" for c in columns] + answer_cols + ["Approve", "Reject"]
    accuracy = {"original": model.accuracy_original, "perturbed": model.accuracy_perturbed,
                "gold": model.accuracy_gold, "padding": model.accuracy_original}
    rows: list[dict[str, str]] = []
    title = manifest["params"]["title"]
    for hit in manifest["hits"]:
        hit_id = _token(rng, 30)
        tokens = hit["items"]
        inputs = {"Input.hit_token": hit["hit_token"]}
        for s, tok in enumerate(tokens, 1):
            inputs[f"Input.item{s}_token"] = tok
            inputs[f"Input.item{s}_image_url"] = items[tok]["image_url"]
            inputs[f"Input.item{s}_question"] = items[tok]["question"]
        for worker in rng.sample(workers, assignments):
            row = dict.fromkeys(header, "")
            row.update({
                "HITId": hit_id, "HITTypeId": "SIMULATED", "Title": title, "Reward": f"${manifest['params']['reward']}",
                "MaxAssignments": str(assignments), "AssignmentId": _token(rng, 30), "WorkerId": worker,
                "AssignmentStatus": "Rejected" if rng.random() < model.rejected_rate else "Submitted",
                "SubmitTime": "Sun Jan 01 00:00:00 PST 2023", "WorkTimeInSeconds": str(rng.randint(60, 600)),
                "LifetimeApprovalRate": "0% (0/0)",
            })
            row.update(inputs)
            for s, tok in enumerate(tokens, 1):
                item = items[tok]
                unsure = rng.random() < model.cannot_tell_rate
                if unsure:
                    answer = ""
                elif rng.random() < accuracy[item["role"]]:
                    answer = item["answers"][0]
                else:
                    wrong = [a for a in pool if a not in item["answers"]]
                    answer = rng.choice(wrong)
                row[f"Answer.item{s}_answer"] = answer.capitalize()
                row[f"Answer.item{s}_cannot_tell.on"] = "true" if unsure else "false"
            rows.append(row)
    dest = Path(out)
    write_text(dest, results_csv_text(header, rows))
    return dest
