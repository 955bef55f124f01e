"""Write a GQA-shaped synthetic dataset (questions.json, scene_graphs.json) of any size.

A thin command-line wrapper around `synth.write_dataset`, which streams image by image,
so 75k images / 1M questions (GQA's scale) never sit in memory twice.

    .venv/bin/python benchmarks/make_gqa_like.py --images 75000 --questions 1000000 --seed 0 --out DIR
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from synth import write_dataset


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, required=True, help="number of images (scene graphs)")
    ap.add_argument("--questions", type=int, required=True, help="number of questions, spread evenly")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True, help="directory to write the two files into")
    args = ap.parse_args(argv)
    if args.images <= 0 or args.questions < 0:
        ap.error("--images must be positive and --questions non-negative")
    start = time.perf_counter()
    qpath, gpath = write_dataset(args.out, args.images, args.questions, args.seed)
    took = time.perf_counter() - start
    size = (qpath.stat().st_size + gpath.stat().st_size) / 2**20
    print(f"wrote {args.questions:,} questions on {args.images:,} images to {args.out} "
          f"({size:,.0f} MiB) in {took:.1f} s")


if __name__ == "__main__":
    main()
