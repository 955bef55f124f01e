"""A writer killed between any two of its file-system steps leaves the old result or the new
one whole, and nothing the next run does not remove.

The writer runs in its own process with `CONTRASTGEN_FAULT_STEP=N`, which makes it SIGKILL
itself just before its Nth step (`contrastgen.files.atomic`): no `finally`, no `atexit`, exactly
what `kill -9` does. N goes up until a run finishes, so every gap between two steps is tried.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from contrastgen.files.atomic import FAULT_ENV, store_of

# Writes with `atomic_file` (not `jsonio`), so each process starts in a tenth of a second.
WRITER = """
import os, sys
from pathlib import Path
from contrastgen.files import atomic
from contrastgen.files.atomic import atomic_dir, atomic_group, atomic_file

if os.environ.get("NO_EXCHANGE"):  # a system where two paths cannot be swapped in one step
    atomic._exchange = lambda a, b: False

def write(path, version):
    with atomic_file(path) as fh:
        fh.write(('{"version": "%s"}' % version).encode())

mode, dest, version = sys.argv[1:]
if mode == "dir":
    with atomic_dir(dest) as d:
        (d / "sub").mkdir()
        for name in ("a.json", "sub/c.json"):
            write(d / name, version)
elif mode == "group":
    gqa, lxmert = Path(dest) / "aug.json", Path(dest) / "other" / "aug.lxmert.json"
    with atomic_group([gqa, lxmert]) as paths:
        for path in paths:
            write(path, version)
else:
    write(dest, version)
"""
SWEEP = "from contrastgen.files import scratch; scratch.sweep()"


def _run(code: str, args: list[str], tmpdir: Path, fault: int | None = None, **extra: str) -> int:
    env = {**os.environ, "TMPDIR": str(tmpdir), **extra}
    env.pop(FAULT_ENV, None)
    if fault is not None:
        env[FAULT_ENV] = str(fault)
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True).returncode


def _versions(paths: list[Path]) -> set[str | None]:
    """The version each path shows (None: absent)."""
    out = set()
    for path in paths:
        out.add(json.loads(path.read_bytes())["version"] if path.exists() else None)
    return out


def _outputs(mode: str, dest: Path) -> list[Path]:
    if mode == "dir":
        return [dest / "a.json", dest / "sub" / "c.json"]
    if mode == "group":
        return [dest / "aug.json", dest / "other" / "aug.lxmert.json"]
    return [dest]


def _leftovers(mode: str, dest: Path, tmpdir: Path) -> list[str]:
    """What is there beyond the output itself: in TMPDIR, beside the output, in a group's store."""
    found = [f"TMPDIR/{p.name}" for p in tmpdir.iterdir()]
    if mode == "group":
        for folder in (dest, dest / "other"):
            found += [p.name for p in folder.iterdir() if p.name not in ("aug.json", "aug.lxmert.json", "other")
                      and not p.name.endswith(".versions")]
        store = store_of(dest / "aug.json")
        if store.exists():
            found += [f"store/{p.name}" for p in store.iterdir() if p.name not in ("current", os.readlink(store / "current"))]
    else:
        found += [p.name for p in dest.parent.iterdir() if p != dest]
    return found


@pytest.mark.parametrize("mode", ["dir", "group", "file"])
@pytest.mark.parametrize("had_old", [True, False], ids=["over-an-old-result", "first-write"])
def test_a_kill_between_any_two_steps_leaves_old_or_new_whole(tmp_path, mode, had_old):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    dest = tmp_path / "out" / ("result" if mode != "file" else "result.json")
    dest.parent.mkdir()
    if mode == "group":
        dest.mkdir()
    outputs = _outputs(mode, dest)
    if had_old:
        assert _run(WRITER, [mode, str(dest), "old"], tmpdir) == 0
        assert _versions(outputs) == {"old"}
    old = {"old"} if had_old else {None}
    kills = 0
    for step in range(1, 200):
        code = _run(WRITER, [mode, str(dest), f"new{step}"], tmpdir, fault=step)
        shown = _versions(outputs)
        if code == 0:
            assert shown == {f"new{step}"}
            break
        assert code == -signal.SIGKILL
        kills += 1
        # at the instant of the kill, the path shows one version, whole
        assert shown in (old, {f"new{step}"}), (step, shown)
        if shown != old:  # the kill came after the swap: this is the result to keep
            old = shown
        # the next run of any command removes what the killed one left
        assert _run(SWEEP, [], tmpdir) == 0
        assert _leftovers(mode, dest, tmpdir) == [], step
        assert _versions(outputs) == old
    else:
        pytest.fail("the writer never finished")
    assert kills >= 3  # the hook really stopped the writer between its steps
    assert _leftovers(mode, dest, tmpdir) == []


def test_a_group_is_one_result_when_a_file_of_it_was_a_plain_file(tmp_path):
    """Plain files at the group's paths (an older run, a copy) keep showing their bytes until the
    one swap, however the run is cut short."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    dest = tmp_path / "out"
    (dest / "other").mkdir(parents=True)
    for step in range(1, 200):
        (dest / "aug.json").unlink(missing_ok=True)
        (dest / "aug.json").write_text('{"version": "plain"}')
        store = store_of(dest / "aug.json")
        if store.exists():
            import shutil
            shutil.rmtree(store)
        (dest / "other" / "aug.lxmert.json").unlink(missing_ok=True)
        code = _run(WRITER, ["group", str(dest), "new"], tmpdir, fault=step)
        shown = [json.loads(p.read_bytes())["version"] if p.exists() else None
                 for p in _outputs("group", dest)]
        if code == 0:
            assert shown == ["new", "new"]
            break
        assert shown in (["plain", None], ["new", "new"]), (step, shown)
        assert _run(SWEEP, [], tmpdir) == 0


def test_without_an_exchange_a_kill_leaves_at_worst_a_moment_without_output_that_the_next_run_undoes(tmp_path):
    """Where two paths cannot be swapped in one step, the old directory is renamed aside first:
    a kill between the two renames leaves the path empty, and the next command puts the old
    result back."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    dest = tmp_path / "out" / "result"
    dest.parent.mkdir()
    outputs = _outputs("dir", dest)
    assert _run(WRITER, ["dir", str(dest), "old"], tmpdir) == 0
    old, emptied = {"old"}, 0
    for step in range(1, 200):
        code = _run(WRITER, ["dir", str(dest), f"new{step}"], tmpdir, fault=step, NO_EXCHANGE="1")
        shown = _versions(outputs)
        if code == 0:
            assert shown == {f"new{step}"}
            break
        emptied += shown == {None}
        assert shown in (old, {f"new{step}"}, {None}), (step, shown)
        assert _run(SWEEP, [], tmpdir) == 0
        shown = _versions(outputs)
        assert shown in (old, {f"new{step}"}), (step, shown)  # put back, or the new one kept
        old = shown
        assert _leftovers("dir", dest, tmpdir) == [], step
    assert emptied == 1  # the one gap between the two renames


def test_the_sweep_keeps_what_live_processes_own_and_removes_the_rest(tmp_path):
    """A folder is removed only when the process named in it is gone, or its pid now belongs
    to a process that started at another time."""
    from contrastgen.files import scratch

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        start = scratch._start_time(sleeper.pid)
        live = tmp_path / f"contrastgen-{sleeper.pid}-{start}"
        reused = tmp_path / f"contrastgen-{sleeper.pid}-{int(start) + 1 if start != '0' else 1}"
        gone = tmp_path / "contrastgen-999999999-5"
        other = tmp_path / "contrastgen-input-abc"  # not ours to judge: no owner in its name
        for folder in (live, reused, gone, other):
            folder.mkdir()
            (folder / "spill.bin").write_bytes(b"x")
        beside = tmp_path / "out" / ".result.cg-999999999-5-abcd1234.tmp"
        beside.mkdir(parents=True)
        (gone / scratch.BESIDE_LIST).write_text(f"{beside}\n{tmp_path / 'out'}\n")
        removed = scratch.sweep(tmp_path)
        assert sorted(p.name for p in removed) == sorted([reused.name, gone.name] if start != "0" else [gone.name])
        assert live.exists() and other.exists() and not gone.exists() and not beside.exists()
        assert (tmp_path / "out").exists()  # a listed path without the dead owner's tag is no licence
    finally:
        sleeper.kill()
        sleeper.wait()
