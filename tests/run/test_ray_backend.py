"""`--backend ray` on a real local Ray cluster: the same output as the local pool (`generate` on the
sample, on synthetic data and on the Super-CLEVR sample, `ood vqavs` and `augment` on synthetic data), even when a worker is
killed mid-run; a run that starts its own Ray instance leaves no session folder, one that connects
to a cluster leaves the cluster's.

The cluster (`ray start --head`, two worker processes) and the driver run inside network and
process namespaces of their own: the network has only the loopback interface, so Ray binds
127.0.0.1 and nothing reaches any other address; the processes see only each other, so `ray stop`
ends this test's Ray and no one else's, and the kernel ends whatever is left when the script does.
Skips with a reason where Ray is not installed (`pip install 'contrastgen[ray]'`; the Makefile's
set-up installs it) or no namespace can be made.
"""

from __future__ import annotations

import filecmp
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import synth
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.parallel.ray_session import (
    CRASH_ENV,
    CRASH_MARKER_ENV,
    IN_FLIGHT_ENV,
    in_flight_limit,
)
from contrastgen.resources import clevr_sample_dir, sample_dir

BIN = Path(sys.executable).parent


# a network namespace with only loopback, and a process namespace with its own /proc
NAMESPACE = ["unshare", "--net", "--pid", "--fork", "--mount-proc"]


def _namespace_works() -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = subprocess.run([*NAMESPACE, "ip", "link", "set", "lo", "up"], capture_output=True)
    return probe.returncode == 0


pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (pip install 'contrastgen[ray]')"),
    pytest.mark.skipif(not _namespace_works(), reason="cannot make loopback-only network and process namespaces "
                                                      "(unshare --net --pid --mount-proc)"),
    pytest.mark.slow,
]


def _local(questions: Path, graphs: Path, out: Path, *extra: str) -> None:
    result = CliRunner().invoke(cli, ["generate", "--questions", str(questions), "--scene-graphs", str(graphs),
                                      "--out", str(out), "--no-progress", "--mode", "both", "--workers", "2",
                                      *extra])
    assert result.exit_code == 0, result.output


def _generate(questions: Path, graphs: Path, out: Path, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    return ["generate", "--questions", str(questions), "--scene-graphs", str(graphs), "--out", str(out),
            "--no-progress", "--mode", "both"], env


def _on_cluster(runs: list[tuple[list[str], dict[str, str]]]) -> subprocess.CompletedProcess:
    """Start a two-worker cluster on 127.0.0.1 in fresh namespaces, run each `contrastgen` command
    (with its extra env) with `--backend ray --address`, check that the cluster's session folder
    is still there, stop the cluster."""
    temp = tempfile.mkdtemp(prefix="cgray", dir="/tmp")  # Ray's socket paths must stay short
    # no token: the cluster lives in a namespace of its own that only this script can reach
    # TMPDIR private: a pid in the namespace means nothing outside it, so a `contrastgen` outside
    # would take this run's scratch folders for a dead process's and sweep them, and this run theirs
    lines = ["set -e", "ip link set lo up", f"export RAY_USAGE_STATS_ENABLED=0 RAY_AUTH_MODE=disabled TMPDIR={temp}",
             f"{BIN}/ray start --head --port=6390 --num-cpus=2 --include-dashboard=false "
             f"--disable-usage-stats --temp-dir={temp} >/dev/null",
             "trap '" + f"{BIN}/ray stop --force >/dev/null 2>&1" + "' EXIT"]
    for args, env in runs:
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        lines.append(f"{exports} {BIN}/contrastgen {' '.join(args)} --backend ray --address 127.0.0.1:6390")
    # the runs connected to the cluster: its files are the cluster's, not theirs to remove
    lines.append(f"ls -d {temp}/session_2* >/dev/null || {{ echo 'the cluster lost its session folder' >&2; exit 1; }}")
    try:
        return subprocess.run([*NAMESPACE, "bash", "-c", "\n".join(lines)], capture_output=True, text=True,
                              timeout=600)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _same(a: Path, b: Path) -> None:
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    match, mismatch, errors = filecmp.cmpfiles(a, b, [str(f) for f in files], shallow=False)
    assert not mismatch and not errors, mismatch + errors


def _vqavs(questions: Path, graphs: Path, out: Path) -> list[str]:
    return ["ood", "vqavs", "--questions", str(questions), "--objects", str(graphs), "--out", str(out),
            "--batch", "450"]  # 7 batches of 3000 questions: each pass has several tasks in flight


def _augment(questions: Path, graphs: Path, out: Path) -> list[str]:
    return ["augment", "--questions", str(questions), "--scene-graphs", str(graphs), "--out", str(out / "train.json"),
            "--replace", "--max-k", "1"]


def test_a_ray_cluster_writes_what_the_local_pool_writes_even_when_a_worker_dies(tmp_path):
    # one cluster for every run (a cluster costs seconds to start)
    sample = sample_dir()
    data = tmp_path / "synth"
    questions, graphs = synth.write_dataset(data, 600, 3000, seed=3, workers=1)  # 3 shards of images
    _local(sample / "questions.json", sample / "scene_graphs.json", tmp_path / "local-sample")
    _local(questions, graphs, tmp_path / "local-synth")
    _local(questions, graphs, tmp_path / "local-groups", "--groups")  # the index travels with the options
    local_ood = CliRunner().invoke(cli, [*_vqavs(questions, graphs, tmp_path / "local-ood"), "--workers", "2"])
    assert local_ood.exit_code == 0, local_ood.output
    local_aug = CliRunner().invoke(cli, [*_augment(questions, graphs, tmp_path / "local-aug"), "--workers", "2"])
    assert local_aug.exit_code == 0, local_aug.output
    clevr = clevr_sample_dir()
    clevr_args = ["generate", "--questions", str(clevr / "questions"), "--scene-graphs", str(clevr / "scenes"),
                  "--no-progress"]
    local_clevr = CliRunner().invoke(cli, [*clevr_args, "--out", str(tmp_path / "local-clevr"), "--workers", "1"])
    assert local_clevr.exit_code == 0, local_clevr.output
    marker, ood_marker = tmp_path / "crashed", tmp_path / "ood-crashed"
    done = _on_cluster([
        _generate(sample / "questions.json", sample / "scene_graphs.json", tmp_path / "ray-sample", {}),
        _generate(questions, graphs, tmp_path / "ray-synth", {IN_FLIGHT_ENV: "1"}),  # one shard at a time
        _generate(questions, graphs, tmp_path / "ray-crash", {CRASH_ENV: "1", CRASH_MARKER_ENV: str(marker),
                                                               IN_FLIGHT_ENV: "2"}),
        (_vqavs(questions, graphs, tmp_path / "ray-ood"), {}),
        (_vqavs(questions, graphs, tmp_path / "ray-ood-crash"),
         {CRASH_ENV: "3", CRASH_MARKER_ENV: str(ood_marker), IN_FLIGHT_ENV: "2"}),
        (_augment(questions, graphs, tmp_path / "ray-aug"), {}),
        ([*_generate(questions, graphs, tmp_path / "ray-groups", {})[0], "--groups"], {}),
        ([*clevr_args, "--out", str(tmp_path / "ray-clevr")], {}),
    ])
    assert done.returncode == 0, done.stderr[-3000:]
    _same(tmp_path / "local-sample", tmp_path / "ray-sample")
    _same(tmp_path / "local-synth", tmp_path / "ray-synth")
    _same(tmp_path / "local-ood", tmp_path / "ray-ood")
    assert marker.exists() and ood_marker.exists(), "an injected crash did not happen"
    # retried: nothing lost, nothing doubled
    _same(tmp_path / "local-synth", tmp_path / "ray-crash")
    _same(tmp_path / "local-ood", tmp_path / "ray-ood-crash")
    _same(tmp_path / "local-aug", tmp_path / "ray-aug")
    _same(tmp_path / "local-groups", tmp_path / "ray-groups")
    assert b'"group"' in (tmp_path / "ray-groups" / "contrast_sets.jsonl").read_bytes()
    _same(tmp_path / "local-clevr", tmp_path / "ray-clevr")  # CLEVR-family input runs on Ray too


def test_a_run_that_starts_its_own_ray_instance_leaves_no_session_folder(tmp_path):
    sample = sample_dir()
    _local(sample / "questions.json", sample / "scene_graphs.json", tmp_path / "local")
    temp = Path(tempfile.mkdtemp(prefix="cgray", dir="/tmp"))  # Ray's socket paths must stay short
    try:
        other = temp / "ray" / "session_2026-01-01_00-00-00_000001_1"  # another instance's, there before
        other.mkdir(parents=True)
        (temp / "ray" / "session_latest").symlink_to(other)
        script = "\n".join([  # TMPDIR private, as in `_on_cluster`
            "set -e", "ip link set lo up", "export RAY_USAGE_STATS_ENABLED=0",
            f"TMPDIR={temp} {BIN}/contrastgen generate --questions {sample / 'questions.json'} --scene-graphs "
            f"{sample / 'scene_graphs.json'} --out {tmp_path / 'ray'} --no-progress --mode both --backend ray",
        ])
        done = subprocess.run([*NAMESPACE, "bash", "-c", script], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        assert sorted(p.name for p in (temp / "ray").iterdir()) == [other.name, "session_latest"]
        assert (temp / "ray" / "session_latest").resolve() == other
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    _same(tmp_path / "local", tmp_path / "ray")


def test_the_window_of_tasks_in_flight(monkeypatch):
    monkeypatch.delenv(IN_FLIGHT_ENV, raising=False)
    assert [in_flight_limit(c) for c in (0, 1, 2, 16)] == [2, 2, 4, 32]
    monkeypatch.setenv(IN_FLIGHT_ENV, "3")
    assert in_flight_limit(16) == 3
    monkeypatch.setenv(IN_FLIGHT_ENV, "0")
    with pytest.raises(Exception, match="whole number"):
        in_flight_limit(16)
