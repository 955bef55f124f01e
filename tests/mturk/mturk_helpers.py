"""Hand-built fixtures for the mturk tests: contrast-set records and MTurk results CSVs.

Records follow the `contrast_sets.jsonl` schema of docs/output-formats.md; results CSVs follow the column
layout of MTurk's requester-site "Download CSV" (written here independently of
`contrastgen.mturk.simulate`, so a mistake there cannot hide one in ingest).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

# The requester site's results columns, in its order.
MTURK_RESULT_COLUMNS = [
    "HITId", "HITTypeId", "Title", "Description", "Keywords", "Reward", "CreationTime", "MaxAssignments",
    "RequesterAnnotation", "AssignmentDurationInSeconds", "AutoApprovalDelayInSeconds", "Expiration",
    "NumberOfSimilarHITs", "LifetimeInSeconds", "AssignmentId", "WorkerId", "AssignmentStatus", "AcceptTime",
    "SubmitTime", "AutoApprovalTime", "ApprovalTime", "RejectionTime", "RequesterFeedback",
    "WorkTimeInSeconds", "LifetimeApprovalRate", "Last30DaysApprovalRate", "Last7DaysApprovalRate",
]

TEMPLATE_ANSWERS = {
    "are_there_x_near_the_y": ("yes", "no"),
    "on_which_side_is_the_x": ("left", "right"),
    "what_color_is_the_x": ("red", "blue"),
}


def record(qid: str, image_id: str, template: str, *, answer: str | None = None,
           perturbed_answer: str | None = None, n_perturbations: int = 1) -> dict[str, Any]:
    """One contrast-set line. Originals are typeset like GQA; perturbations deliberately not
    (lower case, no question mark) so that blinding must normalise them."""
    a, b = TEMPLATE_ANSWERS[template]
    answer = answer or a
    perturbed_answer = perturbed_answer or b
    perts = []
    for rank in range(1, n_perturbations + 1):
        perts.append({
            "question_id": f"{qid}_c{rank}",
            "question": f"is there a wall{rank} near the puddle in image {image_id}",
            "answer": perturbed_answer,
            "rank": rank,
            "change": {"kind": "object", "slot": "x", "from": "fence", "to": f"wall{rank}"},
            "evidence": {"query": {"op": "exists_related", "names": ["wall"], "rel": "near", "object": "1",
                                   "symmetric": True},
                         "facts": [{"fact": "absent", "names": ["wall"]}], "answer": perturbed_answer},
        })
    return {
        "question_id": qid, "image_id": image_id, "template": template,
        "question": f"Is there a fence near the puddle in image {image_id}?", "answer": answer,
        "slots": {"x": "a fence"}, "grounding": {"via": "program"}, "perturbations": perts,
    }


def make_records(sizes: dict[str, int], *, shared_images: int = 0) -> list[dict[str, Any]]:
    """`sizes[template]` images per template; the first `shared_images` images of every
    template are the same images (an image with questions of several templates)."""
    out = []
    for t_index, (template, n) in enumerate(sorted(sizes.items())):
        for i in range(n):
            image = f"{9000 + i}" if i < shared_images else f"{(t_index + 1) * 1000 + i}"
            out.append(record(f"{template[:4]}{i}", image, template))
    return out


def write_results(path: Path, manifest: dict[str, Any], answers: dict[tuple[str, str], list[str]], *,
                  workers: list[str], extra_rows: list[dict[str, str]] | None = None,
                  statuses: dict[str, str] | None = None, gold_answers: dict[str, list[str]] | None = None,
                  json_answers: bool = False) -> None:
    """Write a results CSV in MTurk's layout.

    `answers[(pair_id, role)]` lists each worker's answer to that item, in `workers` order;
    the answer "?" means the worker ticked "cannot tell". Every HIT gets one assignment per
    worker, rows in worker order. `gold_answers[worker]` gives that worker's answers to gold
    items in order of appearance.
    """
    items = manifest["items"]
    n_slots = manifest["params"]["items_per_hit"]
    inputs = [f"Input.{c}" for c in manifest["columns"]]
    if json_answers:
        answer_cols = ["Answer.taskAnswers"]
    else:
        answer_cols = [c for s in range(1, n_slots + 1)
                       for c in (f"Answer.item{s}_answer", f"Answer.item{s}_cannot_tell.on")]
    header = MTURK_RESULT_COLUMNS + inputs + answer_cols + ["Approve", "Reject"]
    gold_pos = dict.fromkeys(workers, 0)
    rows = []
    for h, hit in enumerate(manifest["hits"]):
        for w, worker in enumerate(workers):
            aid = f"ASSIGN{h:03d}{w:02d}"
            row = dict.fromkeys(header, "")
            row.update({"HITId": f"HIT{h:04d}", "HITTypeId": "TYPE1", "AssignmentId": aid, "WorkerId": worker,
                        "AssignmentStatus": (statuses or {}).get(aid, "Submitted"), "Reward": "$0.10"})
            row["Input.hit_token"] = hit["hit_token"]
            task: dict[str, Any] = {}
            for s, tok in enumerate(hit["items"], 1):
                item = items[tok]
                row[f"Input.item{s}_token"] = tok
                row[f"Input.item{s}_image_url"] = item["image_url"]
                row[f"Input.item{s}_question"] = item["question"]
                if item["role"] == "gold":
                    given = (gold_answers or {}).get(worker)
                    ans = given[gold_pos[worker]] if given else item["answers"][0]
                    gold_pos[worker] += 1
                elif item["role"] == "padding":
                    ans = "whatever"
                else:
                    ans = answers[(item["pair_id"], item["role"])][w]
                unsure = ans == "?"
                task[f"item{s}_answer"] = "" if unsure else ans
                task[f"item{s}_cannot_tell"] = {"on": unsure}
                if not json_answers:
                    row[f"Answer.item{s}_answer"] = "" if unsure else ans
                    row[f"Answer.item{s}_cannot_tell.on"] = "true" if unsure else "false"
            if json_answers:
                row["Answer.taskAnswers"] = json.dumps([task])
            rows.append(row)
    rows.extend(extra_rows or [])
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, quoting=csv.QUOTE_ALL)
        writer.writeheader()
        writer.writerows(rows)
