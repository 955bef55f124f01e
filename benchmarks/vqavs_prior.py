"""A question-type prior trained on VQA-VS's IID training set: each question type's most frequent
answer in `iid/train-Ans.json` (ties alphabetical; a type never seen gets the most frequent answer
overall), written as predictions for the IID test, IID validation and OOD sets of the directory.

Why: the IID-minus-OOD gap needs a model trained on the IID training set; a question-type prior is
the shortcut the QT OOD set is built against, so its gap is the benchmark's own sanity check.
Usage (after `contrastgen ood vqavs --iid-split --out DIR ...` on VQA v2 files):
    python benchmarks/vqavs_prior.py DIR OUT.json
then `contrastgen evaluate --ood DIR -p prior=OUT.json`.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from script_inputs import require

from contrastgen.jsonio import read_json, write_json


def train_prior(root: Path) -> tuple[dict[str, str], str]:
    by_type: dict[str, Counter[str]] = {}
    overall: Counter[str] = Counter()
    for a in read_json(root / "iid" / "train-Ans.json"):
        by_type.setdefault(str(a.get("question_type")), Counter())[a["multiple_choice_answer"]] += 1
        overall[a["multiple_choice_answer"]] += 1
    top = {t: min(c, key=lambda x: (-c[x], x)) for t, c in by_type.items()}
    return top, min(overall, key=lambda x: (-overall[x], x))


def main(ood_dir: str, out: str) -> None:
    root = Path(ood_dir)
    top, fallback = train_prior(root)
    preds = {}
    for part in ("test", "val"):
        for a in read_json(root / "iid" / f"{part}-Ans.json"):
            preds[str(a["question_id"])] = top.get(str(a.get("question_type")), fallback)
    write_json(out, preds)
    print(f"{len(preds)} predictions of the question-type prior -> {out}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ood_dir", metavar="DIR", help="a contrastgen ood vqavs --iid-split output")
    ap.add_argument("out", metavar="OUT.json")
    args = ap.parse_args()
    require("vqavs_prior.py", args.ood_dir, "a contrastgen ood vqavs --iid-split output (docs/ood.md)",
            holding=("iid/train-Ans.json",))
    main(args.ood_dir, args.out)
