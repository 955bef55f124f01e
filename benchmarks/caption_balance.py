"""How often a text-only model picks the true caption, per kind: unbalanced, balanced before the
blind check, and as written.

Three blind models: a TF-IDF + logistic regression classifier cross-validated over images on the
pairs themselves (`contrastgen.evaluation.caption_baselines`), the corpus n-gram plausibility
scorer, and the word-and-word-pair naive Bayes of the generator's blind check
(`contrastgen.captions.blind`), trained on one half of the images and asked of the other. Chance
is 50%; the target is at most 60% per kind as written. The columns:
- unbalanced: `--unbalanced`, each image's pair drawn at random from its candidates, the add kinds
  in SugarCrepe's form (`--add-form` gives both runs one form);
- balanced, before the check: the balanced choice as the shards wrote it (the check's own figures,
  from stats.json), what a balanced run wrote before the check existed;
- written: what the balanced run writes, each kind thinned or refused by the check where it was
  above the target (`refused`: no pair written).

    .venv/bin/python benchmarks/make_gqa_like.py --images 2000 --questions 30000 --seed 0 --out /tmp/synth30k
    .venv/bin/python benchmarks/caption_balance.py --scene-graphs /tmp/synth30k/scene_graphs.json
    .venv/bin/python benchmarks/graphs_from_programs.py ../shared/data/gqa/val_balanced_questions_sample.json /tmp/gqa16 --density 16
    .venv/bin/python benchmarks/caption_balance.py --scene-graphs /tmp/gqa16/scene_graphs.json

Needs scikit-learn (`pip install 'contrastgen[captions]'`).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from script_inputs import require

from contrastgen.captions import blind
from contrastgen.captions.candidates import ADD_FORMS, KINDS
from contrastgen.captions.generate import CaptionOptions, generate_captions
from contrastgen.evaluation.caption_baselines import blind_baselines, pairs_of
from contrastgen.records import read_caption_records

TARGET = 0.60


def figures(scene_graphs: Path, out: Path, *, balanced: bool, add_form: str | None, seed: int,
            workers: int) -> tuple[dict, dict]:
    """(the blind baselines of what was written, stats.json)."""
    options = CaptionOptions(balanced=balanced, seed=seed, add_form=add_form)
    generate_captions(scene_graphs, out, options, workers=workers)
    pairs = pairs_of(read_caption_records(out))
    found = blind_baselines(pairs, seed=seed)
    for kind in found:
        kept = [blind.BlindPair(p.kind, p.image_id, 0, p.negative_id, p.positive, p.negative,
                                p.positive_plausibility, p.negative_plausibility, "") for p in pairs if p.kind == kind]
        found[kind]["naive_bayes"] = round(blind.shares(kept)["naive_bayes"], 4)
    return found, json.loads((out / "stats.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scene-graphs", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--add-form", choices=ADD_FORMS,
                        help="one form of the add kinds for both runs [default: each mode's own]")
    args = parser.parse_args()
    require("caption_balance.py", args.scene_graphs,
            "GQA scene graphs, such as contrastgen/data/sample/scene_graphs.json, or a graph file "
            "benchmarks/make_gqa_like.py or graphs_from_programs.py writes")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="caption-balance-") as tmp:
        before, _ = figures(args.scene_graphs, Path(tmp) / "unbalanced", balanced=False, add_form=args.add_form,
                            seed=args.seed, workers=args.workers)
        after, stats = figures(args.scene_graphs, Path(tmp) / "balanced", balanced=True, add_form=args.add_form,
                               seed=args.seed, workers=args.workers)

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}"

    print(f"{args.scene_graphs}: % of pairs where the blind model picks the true caption (chance 50, target "
          f"<= {100 * TARGET:.0f} as written; add kinds: {_form(args.add_form, False)} unbalanced, "
          f"{_form(args.add_form, True)} balanced). clf: TF-IDF + logistic regression, 5 folds over images; "
          f"NB: naive Bayes trained on half the images; plaus: the corpus plausibility scorer")
    print(f"{'kind':<14} | {'unbalanced':^24} | {'balanced, before the check':^26} | {'written':^31} | verdict")
    print(f"{'':<14} | {'pairs':>6} {'clf':>5} {'NB':>5} {'plaus':>5} | {'pairs':>6} {'NB':>5} {'plaus':>5}"
          f" {'':>7} | {'pairs':>6} {'clf':>5} {'NB':>5} {'plaus':>5} {'':>6} |")
    for kind in KINDS:
        b = before.get(kind) or {}
        row = stats["kinds"].get(kind)
        if row is None:
            continue
        check = row["blind_check"] or {}
        checked = check.get("before") or {}
        a = after.get(kind) or {}
        verdict = ("refused" if check.get("refused") else
                   f"{check['left_out']} left out" if check.get("left_out") else "kept whole")
        met = all(v is not None and v <= TARGET for v in (a.get("classifier"), a.get("naive_bayes"), a.get("plausibility")))
        if check.get("refused"):
            met = True
        print(f"{kind:<14} | {b.get('pairs', 0):>6} {pct(b.get('classifier')):>5} {pct(b.get('naive_bayes')):>5} "
              f"{pct(b.get('plausibility')):>5} | {check.get('pairs_before', 0):>6} {pct(checked.get('naive_bayes')):>5} "
              f"{pct(checked.get('plausibility')):>5} {'':>7} | {a.get('pairs', 0):>6} {pct(a.get('classifier')):>5} "
              f"{pct(a.get('naive_bayes')):>5} {pct(a.get('plausibility')):>5} {'':>6} | {verdict}"
              f"{'' if met else ' (target NOT met)'}")
    for message in stats["blind_check"]["refused"]:
        print(message)
    print(f"({time.perf_counter() - start:.1f} s)")


def _form(add_form: str | None, balanced: bool) -> str:
    return CaptionOptions(balanced=balanced, add_form=add_form).adds


if __name__ == "__main__":
    main()
