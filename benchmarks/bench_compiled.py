"""What compiling the hot modules with mypyc would save: the same run, interpreted and compiled.

Why a measurement and not a build step: the profile of `generate` is flat (no function above 10%),
so no hand-written C kernel pays; compiling whole modules is the candidate. Before the package
build compiles anything (and an editable install would then shadow edited sources with stale
binaries), this answers what it is worth: it copies the committed tree (`git archive HEAD`) to a
temporary directory, compiles MODULES there with mypyc, checks that the compiled tree writes the
same bytes as the interpreted one, then alternates timed runs of both, each `contrastgen generate
--workers 1` in a child process, and prints the CPU seconds of each.

Needs mypyc in this environment (`pip install 'mypy[mypyc]'`; not a project dependency) and gcc.
The program editor's mixin classes (multiple inheritance) and `programs/proofs.py` (a mypyc
crash on a starred tuple in `in`) are not compilable as they stand, so they stay interpreted.

    .venv/bin/python benchmarks/bench_compiled.py --data DIR [--mode both] [--repeat 5]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_generate import ensure_data

ROOT = Path(__file__).resolve().parents[1]
MODULES = [
    "contrastgen/engine/*.py", "contrastgen/families/gqa_image_work.py",
    "contrastgen/language/lexicon.py", "contrastgen/language/nounphrase.py",
    "contrastgen/scene/*.py", "contrastgen/templates/*.py",
    "contrastgen/programs/executor.py", "contrastgen/programs/wording.py",
    "contrastgen/programs/name_words.py", "contrastgen/programs/edits/base.py",
]
# mypyc type-checks what it compiles; the project is typed for readers, not for mypy --strict
MYPY_CONFIG = """[mypy]
ignore_missing_imports = True
follow_imports = silent
disable_error_code = assignment, arg-type, return-value, union-attr, attr-defined, misc, index, operator, call-overload, var-annotated, override, has-type
"""


def committed_tree(dest: Path) -> Path:
    """The committed tree (`git archive HEAD`) unpacked at `dest`."""
    dest.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def compiled_tree(dest: Path) -> Path:
    """The committed tree at `dest`, MODULES compiled in place by mypyc."""
    committed_tree(dest)
    (dest / "mypy.ini").write_text(MYPY_CONFIG)
    files = sorted(str(p.relative_to(dest)) for pattern in MODULES for p in dest.glob(pattern))
    mypyc = Path(sys.executable).with_name("mypyc")
    done = subprocess.run([str(mypyc), *files], cwd=dest, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"mypyc failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    check = subprocess.run([sys.executable, "-c", "import contrastgen.engine as m; print(m.__file__)"], cwd=dest,
                           env={**os.environ, "PYTHONPATH": str(dest)}, check=True, capture_output=True, text=True)
    if not check.stdout.strip().endswith(".so"):
        sys.exit(f"the compiled tree imports {check.stdout.strip()}, not the compiled module")
    print(f"compiled {len(files)} modules in {dest}", flush=True)
    return dest


def run(tree: Path, data: Path, out: Path, mode: str) -> float:
    """CPU seconds (user + system) of one `contrastgen generate --workers 1` from `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "contrastgen", "generate", "--questions", str(data / "questions.json"),
                    "--scene-graphs", str(data / "scene_graphs.json"), "--out", str(out), "--workers", "1",
                    "--no-progress", "--mode", mode], cwd=tree, env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def same_bytes(a: Path, b: Path) -> bool:
    """Do two output directories hold the same files with the same bytes, at every depth? (Read
    whole: filecmp's default trusts equal sizes and times.)"""
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    return files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()) and all(
        filecmp.cmp(a / f, b / f, shallow=False) for f in files)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="directory with questions.json and scene_graphs.json")
    ap.add_argument("--images", type=int, default=7_500)
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--mode", choices=("templates", "programs", "both"), default="templates")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    try:
        import mypyc  # noqa: F401
    except ImportError:
        sys.exit("needs mypyc: pip install 'mypy[mypyc]' (in this environment; it is not a project dependency)")
    data = (args.data or ensure_data(args.images, args.questions, 0)).resolve()
    with tempfile.TemporaryDirectory(prefix="bench-compiled-") as tmp:
        work = Path(tmp)
        plain = committed_tree(work / "plain")
        start = time.perf_counter()
        compiled = compiled_tree(work / "compiled")
        print(f"  ({time.perf_counter() - start:.0f} s to compile)")
        times: dict[str, list[float]] = {"interpreted": [], "compiled": []}
        for i in range(args.repeat):
            for name, tree in (("interpreted", plain), ("compiled", compiled)):
                out = work / f"out-{name}-{i}"
                times[name].append(run(tree, data, out, args.mode))
                print(f"[{name} {i + 1}] {times[name][-1]:.1f} CPU-s", flush=True)
        identical = all(same_bytes(work / "out-interpreted-0", work / f"out-{name}-{i}")
                        for name in times for i in range(args.repeat))
        a, b = statistics.median(times["interpreted"]), statistics.median(times["compiled"])
        print(f"{data.name}, --mode {args.mode}, one worker: CPU median {a:.1f} s interpreted, {b:.1f} s compiled "
              f"({100 * (b - a) / a:+.1f}%); outputs {'identical' if identical else 'DIFFER'}")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
