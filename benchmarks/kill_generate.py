"""What `kill -9` of `contrastgen generate` leaves behind, and what the next run cleans.

Runs `contrastgen generate` on a synthetic GQA-shaped dataset (cached like `bench_generate`'s)
with a private TMPDIR, kills it with SIGKILL at spread-out moments of its run (loading,
generating, writing), counts what each kill left in TMPDIR and beside the output, then does one
clean run and counts again. The output directory holds a previous result throughout, which must
still be there, whole, after every kill.

    .venv/bin/python benchmarks/kill_generate.py                       # 10 kills, 600 images, 20,000 questions
    .venv/bin/python benchmarks/kill_generate.py --kills 10 --images 2000 --questions 60000

Prints, per kill, when it came and what was left; then what the clean run left (the target:
nothing) and whether the previous result was whole after every kill.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from synth import write_dataset

CACHE = Path(__file__).resolve().parent / ".cache"


def _size(path: Path) -> int:
    if path.is_file() or path.is_symlink():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*"))


def _listing(folder: Path, keep: set[str]) -> list[tuple[str, int]]:
    return [(p.name, _size(p)) for p in sorted(folder.iterdir()) if p.name not in keep]


def _group_members(pgid: int) -> int:
    """Processes still in the killed command's process group (its workers, if they outlived it)."""
    count = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            count += 1
    return count


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def _generate(data: Path, out: Path, env: dict[str, str]) -> list[str]:
    return [sys.executable, "-m", "contrastgen", "generate", "--questions", str(data / "questions.json"),
            "--scene-graphs", str(data / "scene_graphs.json"), "--out", str(out), "--no-progress"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--images", type=int, default=600)
    parser.add_argument("--questions", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    data = CACHE / f"kill-{args.images}-{args.questions}"
    if not (data / "questions.json").exists():
        write_dataset(data, args.images, args.questions, seed=0)
    work = Path(tempfile.mkdtemp(prefix="kill-generate-"))
    tmpdir = work / "tmp"
    tmpdir.mkdir()
    out = work / "out" / "contrast"
    out.parent.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    command = [*_generate(data, out, env), "--workers", str(args.workers)]
    try:
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        full = time.perf_counter() - start
        previous = _digest(out)
        print(f"data: {args.images} images, {args.questions} questions; a whole run takes {full:.1f} s")
        whole_after_every_kill = True
        for k in range(args.kills):
            at = full * (0.1 + 0.85 * k / max(1, args.kills - 1))  # from loading to writing
            proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
            time.sleep(at)
            os.kill(proc.pid, signal.SIGKILL)  # `kill -9` of the command's process
            proc.wait()
            time.sleep(0.5)
            orphans = _group_members(proc.pid)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # whatever outlived it, so the next kill starts clean
            left = _listing(tmpdir, set()) + _listing(out.parent, {"contrast"})
            whole = out.is_dir() and _digest(out) == previous
            whole_after_every_kill &= whole
            total = sum(size for _, size in left)
            print(f"kill {k + 1} at {at:.1f} s: {len(left)} left ({total / 2**20:.1f} MiB): "
                  f"{', '.join(name for name, _ in left) or 'nothing'}; worker processes outliving it: "
                  f"{orphans}; previous result whole: {whole}")
        before_clean = sum(size for _, size in _listing(tmpdir, set()) + _listing(out.parent, {"contrast"}))
        subprocess.run(command, env=env, check=True, capture_output=True)
        left = _listing(tmpdir, set()) + _listing(out.parent, {"contrast"})
        print(f"after {args.kills} kills: {before_clean / 2**20:.1f} MiB left; after one clean run: "
              f"{len(left)} entries ({sum(s for _, s in left)} bytes) in TMPDIR and beside the output")
        print(f"previous result whole after every kill: {whole_after_every_kill}; "
              f"clean run's result equals the first: {_digest(out) == previous}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
