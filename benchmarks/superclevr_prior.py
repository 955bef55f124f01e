"""A question-prior baseline trained on one Super-CLEVR variant: each question family's most
frequent answer in that variant's training part (ties alphabetical; a family never seen gets the
most frequent answer overall), written as predictions for every test part of the directory.

Why: Relative Degrade needs models trained on each variant; this is the simplest real one, and a
prior is exactly what a concept-distribution shift should hurt (trained on long, it answers
"gray" to colour questions, which oppo's scenes rarely are). Usage:
    python benchmarks/superclevr_prior.py OOD_DIR VARIANT OUT.json
then `contrastgen evaluate --ood OOD_DIR -p prior@VARIANT=OUT.json ...`.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from script_inputs import require

from contrastgen.jsonio import read_json, write_json
from contrastgen.ood.superclevr_eval import answer_words


def family(q: dict) -> str:
    return f"{q.get('template_filename')}#{q.get('question_family_index')}"


def train_prior(ood_dir: Path, variant: str) -> tuple[dict[str, str], str]:
    questions = read_json(ood_dir / "variants" / variant / "train.json")["questions"]
    by_family: dict[str, Counter[str]] = {}
    overall: Counter[str] = Counter()
    for q in questions:
        answer = answer_words(q["answer"])
        by_family.setdefault(family(q), Counter())[answer] += 1
        overall[answer] += 1
    top = {f: min(c, key=lambda a: (-c[a], a)) for f, c in by_family.items()}
    return top, min(overall, key=lambda a: (-overall[a], a))


def main(ood_dir: str, variant: str, out: str) -> None:
    root = Path(ood_dir)
    top, fallback = train_prior(root, variant)
    preds = {}
    for test in sorted((root / "variants").glob("*/test.json")):
        for q in read_json(test)["questions"]:
            preds[str(q["question_index"])] = top.get(family(q), fallback)
    write_json(out, preds)
    print(f"{len(preds)} predictions of the prior trained on {variant} -> {out}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ood_dir", metavar="OOD_DIR", help="a contrastgen ood superclevr --variant output")
    ap.add_argument("variant", metavar="VARIANT", help="the variant whose training part the prior is fitted on")
    ap.add_argument("out", metavar="OUT.json")
    args = ap.parse_args()
    require("superclevr_prior.py", args.ood_dir,
            "a contrastgen ood superclevr --variant output (docs/ood.md) with this variant",
            holding=(f"variants/{args.variant}/train.json",))
    main(args.ood_dir, args.variant, args.out)
