"""Starting Ray: an address where nothing answers, a start that fails and the session folder a run
leaves are each one sentence (exit 2) or nothing left behind.

These run against a stand-in `ray` module (a real start costs seconds and is covered by
`tests/run/test_ray_backend.py`): what is tested is what contrastgen does around `ray.init`.
"""

from __future__ import annotations

import os
import socket
import sys
import time
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from contrastgen.cli import cli
from contrastgen.parallel import ray_address, ray_temp
from contrastgen.parallel.ray_address import RayUnavailable, check_reachable, host_and_port
from contrastgen.parallel.ray_session import ray_session
from contrastgen.resources import sample_dir


class FakeRay(types.ModuleType):
    """`ray` as far as `ray_session` uses it. `on_init` runs inside `init` (make a session folder,
    fail); the calls are recorded."""

    def __init__(self, temp_root: Path, on_init=None):
        super().__init__("ray")
        self.calls: list[str] = []
        self._on_init = on_init
        self._up = False

        class RayError(Exception):
            pass

        self.exceptions = types.SimpleNamespace(RayError=RayError)
        self._temp_root = temp_root

    def is_initialized(self) -> bool:
        return self._up

    def init(self, **kwargs) -> None:
        self.calls.append(f"init {kwargs.get('address')}")
        if self._on_init:
            self._on_init(self._temp_root)
        self._up = True

    def shutdown(self) -> None:
        self.calls.append("shutdown")
        self._up = False


@pytest.fixture
def fake_ray(monkeypatch, tmp_path):
    """Install a FakeRay whose temporary folder is `tmp_path/ray`; returns a function that
    sets what its `init` does."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # Ray's own choice of cluster, from the caller's shell
    root = tmp_path / "ray"
    fake = FakeRay(root)
    utils = types.SimpleNamespace(get_default_ray_temp_dir=lambda: str(root))
    common = types.SimpleNamespace(utils=utils)
    fake._common = common
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray._common", common)
    monkeypatch.setitem(sys.modules, "ray._common.utils", utils)

    def configure(on_init=None) -> FakeRay:
        fake._on_init = on_init
        return fake

    return configure


def _own_session(root: Path, pid: int | None = None) -> Path:
    """What Ray's head node makes as it starts: a session named with the starting process's id,
    and `session_latest` pointing at it."""
    session = root / f"session_2026-11-28_12-00-00_000001_{pid or os.getpid()}"
    (session / "logs").mkdir(parents=True)
    (session / "logs" / "gcs_server.out").write_text("log")
    latest = root / "session_latest"
    if latest.is_symlink():
        latest.unlink()
    latest.symlink_to(session)
    return session


def _free_port() -> int:
    """A loopback port nothing listens on (bound for a moment to find it, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _generate(out: Path, *backend: str):
    sample = sample_dir()
    return CliRunner().invoke(cli, ["generate", "--questions", str(sample / "questions.json"), "--scene-graphs",
                                    str(sample / "scene_graphs.json"), "--out", str(out), "--no-progress",
                                    "--backend", "ray", *backend])


def _one_sentence(result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("contrastgen: error:")]
    assert len(errors) == 1, result.output
    return errors[0]


def test_an_address_where_nothing_listens_is_one_sentence_at_once(fake_ray, tmp_path):
    fake = fake_ray()
    port = _free_port()
    started = time.monotonic()
    result = _generate(tmp_path / "out", "--address", f"127.0.0.1:{port}")
    error = _one_sentence(result)
    assert time.monotonic() - started < 5
    assert f"--address 127.0.0.1:{port}: no Ray cluster answers there (connection refused)" in error
    assert fake.calls == []  # Ray was never asked: it would retry for minutes
    assert not (tmp_path / "out").exists()
    # a library caller (no CLI) is refused the same way
    with pytest.raises(RayUnavailable, match="no Ray cluster answers there"), ray_session(f"127.0.0.1:{port}"):
        pass
    assert fake.calls == []


def test_the_probe_lets_a_listening_address_through_and_bounds_a_silent_one(monkeypatch):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        check_reachable(f"127.0.0.1:{server.getsockname()[1]}")  # no error: something answers

    def silent(target, timeout):
        assert timeout == ray_address.CONNECT_TIMEOUT_S
        raise TimeoutError("timed out")

    monkeypatch.setattr(ray_address.socket, "create_connection", silent)
    with pytest.raises(RayUnavailable, match=r"--address 127\.0\.0\.1:6379: no Ray cluster answers there "
                                             r"\(no answer within 10 s\)"):
        check_reachable("127.0.0.1:6379")


@pytest.mark.parametrize(("address", "target"), [
    ("127.0.0.1:6379", ("127.0.0.1", 6379)),
    ("[::1]:6379", ("::1", 6379)),
    ("ray://head.example:10002", ("head.example", 10002)),
    ("ray://head.example", ("head.example", 10001)),
    ("auto", None),
])
def test_the_address_the_probe_reads(address, target):
    assert host_and_port(address) == target


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:99999", ":6379", "::1"])
def test_an_address_without_a_usable_port_is_one_sentence(address):
    with pytest.raises(RayUnavailable, match=rf"^--address {address}: give the Ray cluster as HOST:PORT"):
        check_reachable(address)


def test_a_ray_start_that_fails_is_one_sentence_and_leaves_no_session(fake_ray, tmp_path):
    root = tmp_path / "ray"
    foreign = _own_session(root, pid=1)  # another process's instance, there before this run

    def dies(temp_root: Path) -> None:  # a raylet killed while the instance starts
        _own_session(temp_root)
        raise Exception("The current node timed out during startup. This could happen because some of the "
                        "raylet failed to startup or the GCS has become overloaded.\n  (a long story)")

    fake = fake_ray(dies)
    result = _generate(tmp_path / "out")
    error = _one_sentence(result)
    assert error == ("contrastgen: error: --backend ray: Ray failed to start on this machine (Exception: The "
                     "current node timed out during startup. This could happen because some of the raylet failed "
                     "to startup or the GCS has become overloaded); nothing was written; rerun, or use "
                     "--backend local")
    assert fake.calls == ["init None", "shutdown"]
    assert not (tmp_path / "out").exists()
    # this run's session folder went, the other's stayed, and `session_latest` points back at it
    assert sorted(p.name for p in root.iterdir()) == [foreign.name, "session_latest"]
    assert (root / "session_latest").resolve() == foreign.resolve()


def test_a_connection_that_fails_after_the_probe_names_the_address(fake_ray, tmp_path):
    def refuses(_: Path) -> None:
        raise ConnectionError("Failed to connect to Ray cluster at 127.0.0.1:6379\nmore")

    fake_ray(refuses)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = f"127.0.0.1:{server.getsockname()[1]}"
        with pytest.raises(RayUnavailable, match=rf"^--address {address}: cannot connect to the Ray cluster there "
                                                 r"\(ConnectionError: Failed to connect to Ray cluster at "
                                                 r"127\.0\.0\.1:6379\); nothing was written$"), ray_session(address):
            pass


@pytest.mark.parametrize("fails", [False, True])
def test_a_run_removes_the_session_folder_of_the_instance_it_started_and_only_that(fake_ray, tmp_path, fails):
    root = tmp_path / "ray"
    foreign = _own_session(root, pid=1)
    made: list[Path] = []

    def starts(temp_root: Path) -> None:
        made.append(_own_session(temp_root))
        # a second instance another process starts meanwhile: not this run's
        made.append(_own_session(temp_root, pid=os.getpid() + 1))

    fake = fake_ray(starts)
    try:
        with ray_session(None):
            assert made[0].is_dir()
            if fails:
                raise fake.exceptions.RayError("the raylet died")
    except Exception as exc:  # noqa: BLE001 - the failure the run reports
        assert fails and "the Ray cluster failed during the run" in str(exc)
    assert fake.calls == ["init None", "shutdown"]
    assert not made[0].exists()
    assert made[1].is_dir() and foreign.is_dir()


def test_a_run_that_connected_to_a_cluster_leaves_its_files(fake_ray, tmp_path):
    root = tmp_path / "ray"
    cluster = _own_session(root)  # even one named with this process's id: it was there before the run
    fake_ray()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with ray_session(f"127.0.0.1:{server.getsockname()[1]}"):
            pass
    assert cluster.is_dir() and (root / "session_latest").resolve() == cluster.resolve()


def test_ray_folder_made_by_the_start_goes_when_empty(fake_ray, tmp_path):
    fake_ray(lambda temp_root: _own_session(temp_root))
    with ray_session(None):
        assert (tmp_path / "ray").is_dir()
    assert not (tmp_path / "ray").exists()
    assert ray_temp.remove_own(ray_temp.Sessions(None, False, frozenset())) == []


def test_ray_address_from_the_environment_is_asked_and_named(fake_ray, tmp_path, monkeypatch):
    """Without --address (or with auto) Ray connects to RAY_ADDRESS: that is what must answer."""
    fake = fake_ray()
    port = _free_port()
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    for backend in ([], ["--address", "auto"]):
        error = _one_sentence(_generate(tmp_path / "out", *backend))
        assert f"RAY_ADDRESS=127.0.0.1:{port}: no Ray cluster answers there (connection refused)" in error
        assert "unset RAY_ADDRESS" in error
    assert fake.calls == [] and not (tmp_path / "out").exists()
    # an --address of its own is what Ray uses, whatever RAY_ADDRESS says
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        check_reachable(f"127.0.0.1:{server.getsockname()[1]}")
