"""How often a text-only model picks the true caption, per kind, with and without the balancing.

Two blind models (`contrastgen.evaluation.caption_baselines`): a TF-IDF + logistic regression
classifier cross-validated over images on the pairs themselves, and the corpus n-gram
plausibility scorer. Chance is 50%; the target is at most 60% per kind after balancing. The same
candidates are generated both ways (`--unbalanced` draws each image's pair at random from them),
so the two columns differ only in the choice, and in the form of the add kinds: SugarCrepe's
(the caption is the base, the negative the base plus a false addition) without balancing, the
matched form (the caption the base plus a true addition) with it. `--add-form` gives both
columns one form, to see what each of the two buys.

    .venv/bin/python benchmarks/make_gqa_like.py --images 2000 --questions 30000 --seed 0 --out /tmp/synth30k
    .venv/bin/python benchmarks/caption_balance.py --scene-graphs /tmp/synth30k/scene_graphs.json

Needs scikit-learn (`pip install 'contrastgen[captions]'`).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from contrastgen.captions.candidates import ADD_FORMS, KINDS
from contrastgen.captions.generate import CaptionOptions, generate_captions
from contrastgen.evaluation.caption_baselines import blind_baselines, pairs_of
from contrastgen.records import read_caption_records

TARGET = 0.60


def figures(scene_graphs: Path, out: Path, *, balanced: bool, add_form: str | None, seed: int,
            workers: int) -> dict:
    options = CaptionOptions(balanced=balanced, seed=seed, add_form=add_form)
    generate_captions(scene_graphs, out, options, workers=workers)
    return blind_baselines(pairs_of(read_caption_records(out)), seed=seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scene-graphs", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--add-form", choices=ADD_FORMS,
                        help="one form of the add kinds for both columns [default: each mode's own]")
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="caption-balance-") as tmp:
        before = figures(args.scene_graphs, Path(tmp) / "unbalanced", balanced=False, add_form=args.add_form,
                         seed=args.seed, workers=args.workers)
        after = figures(args.scene_graphs, Path(tmp) / "balanced", balanced=True, add_form=args.add_form,
                        seed=args.seed, workers=args.workers)

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}"

    print(f"{args.scene_graphs}: % of pairs where the blind model picks the true caption (chance 50, "
          f"target <= {100 * TARGET:.0f} after balancing; add kinds: "
          f"{_form(args.add_form, False)} unbalanced, {_form(args.add_form, True)} balanced)")
    print(f"{'kind':<14} {'pairs':>6} | {'classifier':>10} {'plausibility':>12} | {'classifier':>10} "
          f"{'plausibility':>12} | target")
    print(f"{'':<14} {'':>6} | {'unbalanced':^23} | {'balanced':^23} |")
    for kind in KINDS:
        b, a = before.get(kind), after.get(kind)
        if a is None:
            continue
        met = all(v is not None and v <= TARGET for v in (a["classifier"], a["plausibility"]))
        print(f"{kind:<14} {a['pairs']:>6} | {pct(b and b['classifier']):>10} {pct(b and b['plausibility']):>12} | "
              f"{pct(a['classifier']):>10} {pct(a['plausibility']):>12} | {'met' if met else 'NOT met'}")
    print(f"({time.perf_counter() - start:.1f} s)")


def _form(add_form: str | None, balanced: bool) -> str:
    return CaptionOptions(balanced=balanced, add_form=add_form).adds


if __name__ == "__main__":
    main()
