"""A fixed matrix of contrastgen commands, run into one directory, for proving a change of
structure changes no output.

Run it on the code before the change into one directory and on the code after into another; the
two must be the same bytes (`diff -r`). Every command runs in one fixed working directory (some
outputs name their own absolute path: the harness exports' READMEs) and writes there by relative
path; the finished directory is then moved to `--out`. Each command's terminal output is kept (as
`logs/<name>.txt`) with the seconds it took taken out, so the logs compare too.

    .venv/bin/python benchmarks/identity_check.py --out /tmp/me/before   # in a checkout of the old code
    .venv/bin/python benchmarks/identity_check.py --out /tmp/me/after
    diff -r /tmp/me/before /tmp/me/after

A checkout elsewhere than beside `shared/` names it: CONTRASTGEN_SHARED=/path/to/shared.

The matrix: the bundled GQA sample (`generate` in every mode with one and two workers, `augment`
plain and `--replace`, `export` as Parquet, JSONL and a Hugging Face dataset, `demo`), a synthetic GQA-shaped set of 30,000
questions (`generate` in every mode, `ood vqavs`, `ood gqa`), on both of these `generate --groups`,
`ood gqa-redundancy` and `captions generate` (with every caption export), the Super-CLEVR
variants drawn from a small synthetic pool, the bundled Super-CLEVR sample and
`../shared/data/super-clevr` (`generate`, `augment`, `ood superclevr`; the sample's images make
its lmms-eval and VLMEvalKit exports), `ood vqavs` on the shared
VQA-VS files and `ood gqa` on the shared GQA questions, and `verify --json` on every generated
set. What `../shared` lacks is left out, and said.

`--parallel DIR` also runs CLEVR-family input with `--workers 2` and `--backend ray` (and the GQA
sample with `--backend ray`) into DIR and compares each with the matrix's `--workers 1` run.
"""

from __future__ import annotations

import argparse
import fcntl
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CONTRASTGEN_SHARED", REPO.parent / "shared")) / "data"  # ../shared, or another
# Every run works here (some outputs name absolute paths: the harness exports' READMEs, records'
# `image_file`), with the bundled samples copied in, so checkouts in other places compare; so one
# run at a time, which a lock file beside it holds.
WORK = Path(tempfile.gettempdir()) / f"contrastgen-identity-{os.getuid()}"
SAMPLE = WORK / "inputs" / "sample"
CLEVR_SAMPLE = WORK / "inputs" / "sample_clevr"
MODES = ("templates", "programs", "both")
SYNTH_IMAGES, SYNTH_QUESTIONS, SYNTH_SEED = 2000, 30_000, 0
# Lines whose figures are the host's, not the output's.
_TIMING = re.compile(r"^seconds: |took \d|\d+(\.\d+)? ?s\b.*(elapsed|wall)", re.IGNORECASE)


@dataclass(frozen=True)
class Command:
    name: str  # the log's name, and what a reader of the matrix sees
    args: tuple[str, ...]  # contrastgen's arguments


def _gqa(name: str, questions: Path, graphs: Path, out: str, *extra: str) -> Command:
    return Command(name, ("generate", "--questions", str(questions), "--scene-graphs", str(graphs),
                          "--out", out, "--no-progress", *extra))


def _verify(out: str, graphs: Path) -> Command:
    return Command(f"verify-{Path(out).name}", ("verify", out, "--scene-graphs", str(graphs), "--json"))


def gqa_sample() -> list[Command]:
    q, g = SAMPLE / "questions.json", SAMPLE / "scene_graphs.json"
    out: list[Command] = []
    for mode in MODES:
        for workers in (1, 2):
            dest = f"gen/sample-{mode}-w{workers}"
            out += [_gqa(f"generate-sample-{mode}-w{workers}", q, g, dest, "--mode", mode,
                         "--workers", str(workers)), _verify(dest, g)]
    out.append(Command("augment-sample", ("augment", "--questions", str(q), "--scene-graphs", str(g),
                                          "--out", "aug/sample.json", "--workers", "1")))
    out.append(Command("augment-sample-replace-both", (
        "augment", "--questions", str(q), "--scene-graphs", str(g), "--out", "aug/sample-replace-both.json",
        "--replace", "--mode", "both", "--workers", "2")))
    for fmt in ("parquet", "jsonl", "hf"):  # the harness formats need images: the CLEVR sample's
        out.append(Command(f"export-sample-{fmt}", ("export", "gen/sample-both-w1", "--format", fmt,
                                                    "--out", f"export/sample-{fmt}")))
    out.append(Command("demo", ("demo", "--out", "demo")))
    out.append(Command("ood-gqa-sample", ("ood", "gqa", "--questions", str(q), "--out", "ood/gqa-sample")))
    return out + newer_capabilities("sample", q, g)


def newer_capabilities(label: str, q: Path, g: Path) -> list[Command]:
    """Two-image groups, caption negatives and the redundancy ladder on one GQA-shaped input, each
    with its own `verify` (and the caption set's exports)."""
    groups, ladder, captions = f"gen/{label}-groups", f"ood/{label}-ladder", f"captions/{label}"
    out = [_gqa(f"generate-{label}-groups", q, g, groups, "--mode", "both", "--groups", "--workers", "2"),
           _verify(groups, g),
           Command(f"ladder-{label}", ("ood", "gqa-redundancy", "--questions", str(q), "--scene-graphs", str(g),
                                       "--out", ladder)),
           _verify(ladder, g),
           Command(f"captions-{label}", ("captions", "generate", "--scene-graphs", str(g), "--out", captions,
                                         "--no-progress")),
           _verify(captions, g)]
    for fmt in ("sugarcrepe", "aro", "hf", "negclip"):
        out.append(Command(f"captions-export-{label}-{fmt}", ("captions", "export", captions, "--format", fmt,
                                                              "--out", f"export/captions-{label}-{fmt}")))
    return out


def synthetic(data: Path) -> list[Command]:
    q, g = data / "questions.json", data / "scene_graphs.json"
    out: list[Command] = []
    for mode in MODES:
        dest = f"gen/synth-{mode}"
        out += [_gqa(f"generate-synth-{mode}", q, g, dest, "--mode", mode, "--workers", "2"), _verify(dest, g)]
    out.append(Command("ood-vqavs-synth", ("ood", "vqavs", "--questions", str(q), "--objects", str(g),
                                           "--out", "ood/vqavs-synth", "--workers", "2")))
    out.append(Command("ood-gqa-synth", ("ood", "gqa", "--questions", str(q), "--out", "ood/gqa-synth")))
    return out + newer_capabilities("synth", q, g)


def clevr(label: str, questions: list[Path], scenes: Path, images: Path | None) -> list[Command]:
    qargs = tuple(a for f in questions for a in ("--questions", str(f)))
    # `ood superclevr` reads question files, not a folder of them
    files = [f for q in questions for f in (sorted(q.glob("*.json")) if q.is_dir() else [q])]
    fargs = tuple(a for f in files for a in ("--questions", str(f)))
    dest = f"gen/{label}-w1"
    extra = ("--images", str(images)) if images is not None else ()
    out = [Command(f"generate-{label}-w1", ("generate", *qargs, "--scene-graphs", str(scenes), "--out", dest,
                                            "--no-progress", "--workers", "1", *extra)),
           _verify(dest, scenes),
           Command(f"augment-{label}", ("augment", *qargs, "--scene-graphs", str(scenes),
                                        "--out", f"aug/{label}.json")),
           Command(f"augment-{label}-replace", ("augment", *qargs, "--scene-graphs", str(scenes),
                                                "--out", f"aug/{label}-replace.json", "--replace")),
           Command(f"ood-superclevr-{label}", ("ood", "superclevr", "--scenes", str(scenes), *fargs,
                                               "--out", f"ood/superclevr-{label}"))]
    if images is not None:
        for fmt in ("lmms-eval", "vlmevalkit", "parquet"):
            out.append(Command(f"export-{label}-{fmt}", ("export", dest, "--format", fmt,
                                                         "--out", f"export/{label}-{fmt}")))
    return out


def shared_sets() -> tuple[list[Command], list[str]]:
    out: list[Command] = []
    missing: list[str] = []
    sc = SHARED / "super-clevr"
    if (sc / "scenes").is_dir():
        out += clevr("superclevr-shared", [sc / "superCLEVR_questions_5.json",
                                           sc / "superCLEVR_questions_part_5.json"], sc / "scenes", None)
    else:
        missing.append(str(sc))
    vqavs = SHARED / "vqa-vs"
    if (vqavs / "Val-Ques.json").is_file():
        out.append(Command("ood-vqavs-shared", ("ood", "vqavs", "--questions", str(vqavs / "Val-Ques.json"),
                                                "--annotations", str(vqavs / "Val-Ans.json"),
                                                "--out", "ood/vqavs-shared")))
    else:
        missing.append(str(vqavs))
    gqa = SHARED / "gqa" / "val_balanced_questions_sample.json"
    if gqa.is_file():
        out.append(Command("ood-gqa-shared", ("ood", "gqa", "--questions", str(gqa), "--out", "ood/gqa-shared")))
    else:
        missing.append(str(gqa))
    return out, missing


def variants(pool: Path) -> list[Command]:
    """The paper's Super-CLEVR variants drawn from a synthetic pool: those a pool this small reaches
    within the tolerance (the long-tail and compositional ones need the docs' 20,000 scenes)."""
    return [Command("ood-superclevr-variants", (
        "ood", "superclevr", "--scenes", str(pool / "scenes.json"), "--questions", str(pool / "questions.json"),
        "--variant", "bal,long,slt,rd-,rd,rd+", "--test-share", "0.3", "--tolerance", "0.15",
        "--out", "ood/superclevr-variants"))]


def make_pool(dest: Path) -> Path:
    """A small skewed Super-CLEVR-format pool, as docs/ood.md makes the large one."""
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "synth_superclevr.py"), "--scenes", "1500",
                    "--seed", "0", "--skew", "0.1", "--out", str(dest)], check=True, cwd=REPO,
                   stdout=subprocess.DEVNULL)
    return dest


def make_synthetic(dest: Path) -> Path:
    """The 30k-question set, as `benchmarks/bench_generate.py` makes it (the generator's own output
    is part of the matrix: moving the generator must not change it)."""
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "make_gqa_like.py"), "--images", str(SYNTH_IMAGES),
                    "--questions", str(SYNTH_QUESTIONS), "--seed", str(SYNTH_SEED), "--out", str(dest)],
                   check=True, cwd=REPO, stdout=subprocess.DEVNULL)
    return dest


def run(cmd: Command, root: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "contrastgen", *cmd.args], cwd=root, capture_output=True,
                          text=True, env=_env())
    took = time.perf_counter() - start
    log = (done.stdout + done.stderr).replace(str(root), "<out>")
    lines = [line for line in log.splitlines() if not _TIMING.search(line)]
    (root / "logs").mkdir(exist_ok=True)
    (root / "logs" / f"{cmd.name}.txt").write_text("\n".join(lines) + f"\nexit {done.returncode}\n")
    status = "ok" if done.returncode == 0 else f"EXIT {done.returncode}"
    print(f"{status:>7}  {took:6.1f} s  contrastgen {' '.join(cmd.args)}", flush=True)
    return took


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("NLTK_DATA", str(SHARED.parent / "nltk_data"))
    env["COLUMNS"] = "120"  # the terminal tables' width, the same for every run
    return env


def parallel_check(out: Path, dest: Path) -> bool:
    """CLEVR-family input with two workers and on Ray, and the GQA sample on Ray, against the
    one-worker runs of `out`."""
    dest.mkdir(parents=True, exist_ok=True)
    same = True
    cases = []
    sc = SHARED / "super-clevr"
    sources = [("superclevr-sample", [CLEVR_SAMPLE / "questions"], CLEVR_SAMPLE / "scenes",
                ("--images", str(CLEVR_SAMPLE / "images")))]
    if (sc / "scenes").is_dir():
        sources.append(("superclevr-shared", [sc / "superCLEVR_questions_5.json",
                                              sc / "superCLEVR_questions_part_5.json"], sc / "scenes", ()))
    for label, questions, scenes, extra in sources:
        qargs = tuple(a for f in questions for a in ("--questions", str(f)))
        for how, args in (("w2", ("--workers", "2")), ("ray", ("--backend", "ray"))):
            cases.append((f"gen/{label}-{how}", f"gen/{label}-w1",
                          Command(f"generate-{label}-{how}", ("generate", *qargs, "--scene-graphs", str(scenes),
                                                              "--out", f"gen/{label}-{how}", "--no-progress",
                                                              *args, *extra))))
    q, g = SAMPLE / "questions.json", SAMPLE / "scene_graphs.json"
    cases.append(("gen/sample-both-ray", "gen/sample-both-w1",
                  _gqa("generate-sample-both-ray", q, g, "gen/sample-both-ray", "--mode", "both",
                       "--backend", "ray")))
    for made, reference, cmd in cases:
        run(cmd, dest)
        diff = _differ(dest / made, out / reference)
        same &= not diff
        print(f"{'same' if not diff else 'DIFFERENT'}: {made} against {out / reference}"
              + (f" ({', '.join(diff[:5])})" if diff else ""))
    return same


def _differ(a: Path, b: Path) -> list[str]:
    if not a.is_dir() or not b.is_dir():
        return [f"{a if not a.is_dir() else b} missing"]
    cmp = filecmp.dircmp(a, b)
    out: list[str] = []
    stack = [cmp]
    while stack:
        c = stack.pop()
        out += c.left_only + c.right_only + c.diff_files
        stack += list(c.subdirs.values())
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="A new directory for the matrix's outputs.")
    ap.add_argument("--only", default="", help="Run only the commands whose name contains this.")
    ap.add_argument("--parallel", type=Path, help="Also run the --workers 2 / --backend ray checks into this directory.")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    if out.exists() and any(out.iterdir()):
        ap.error(f"{out} is not empty")
    root = WORK
    WORK.parent.mkdir(parents=True, exist_ok=True)
    lock = open(WORK.parent / f"{WORK.name}.lock", "w")  # noqa: SIM115 - held until the process ends
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"another identity check holds {WORK}; waiting for it", flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    shutil.rmtree(root, ignore_errors=True)
    for name in ("sample", "sample_clevr"):
        shutil.copytree(REPO / "contrastgen" / "data" / name, root / "inputs" / name)
    start = time.perf_counter()
    data = root / "data" / "synth30k"
    if not (data / "questions.json").is_file():
        make_synthetic(data)
    pool = root / "data" / "sc-pool"
    if not (pool / "scenes.json").is_file():
        make_pool(pool)
    shared, missing = shared_sets()
    commands = (gqa_sample() + synthetic(data) + variants(pool)
                + clevr("superclevr-sample", [CLEVR_SAMPLE / "questions"], CLEVR_SAMPLE / "scenes",
                        CLEVR_SAMPLE / "images")
                + shared)
    for cmd in commands:
        if args.only in cmd.name:
            run(cmd, root)
    for m in missing:
        print(f"left out (absent): {m}")
    ok = True
    if args.parallel is not None:
        ok = parallel_check(root, args.parallel.resolve())
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        out.rmdir()
    shutil.move(root, out)
    print(f"{len(commands)} commands in {time.perf_counter() - start:.0f} s into {out}")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
