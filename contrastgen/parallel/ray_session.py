"""Connecting to Ray once per run, and what every Ray task shares: retries, the window of tasks in
flight, and the tests' fault injection.

Ray is an optional dependency (`pip install 'contrastgen[ray]'`); it is imported only when a run
asks for it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from contrastgen.errors import ContrastgenError
from contrastgen.parallel import ray_temp
from contrastgen.parallel.ray_address import RayUnavailable, check_reachable

MAX_RETRIES = 3
# A fault injection for the tests: the first attempt of the task of this index (a shard of
# `generate`, a batch of an OOD pass) kills its worker process (the retry runs normally). Read in the worker, so the driver's environment must
# reach it (Ray passes the driver's through `runtime_env`).
CRASH_ENV = "CONTRASTGEN_TEST_CRASH_SHARD"
CRASH_MARKER_ENV = "CONTRASTGEN_TEST_CRASH_MARKER"


IN_FLIGHT_ENV = "CONTRASTGEN_RAY_IN_FLIGHT"


def in_flight_limit(cluster_cpus: float) -> int:
    """Tasks kept submitted at once: enough that every CPU of the cluster has a next task (a
    shard, a batch) waiting when one ends, few enough that the object store holds a few tasks'
    input, not all. CONTRASTGEN_RAY_IN_FLIGHT sets it (for tasks too large to hold two per CPU)."""
    given = os.environ.get(IN_FLIGHT_ENV, "").strip()
    if given:
        if not given.isdigit() or int(given) < 1:
            raise ContrastgenError(f"{IN_FLIGHT_ENV} must be a whole number >= 1, not {given!r}")
        return int(given)
    return max(2, 2 * int(cluster_cpus))


class RayFailed(ContrastgenError):
    """The cluster failed during a run (a raylet, the GCS, a node)."""


@contextlib.contextmanager
def ray_session(address: str | None) -> Iterator[Any]:
    """The `ray` module, connected to the cluster at `address` (None: a new instance on this
    machine) unless this process already is; disconnected after, if it connected here, and the
    session folder of an instance it started removed (`ray_temp`), also when the run fails."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("the ray backend needs Ray: pip install 'contrastgen[ray]'") from None
    if ray.is_initialized():
        yield from _guarded(ray)
        return
    check_reachable(address)
    sessions = ray_temp.before_start()
    try:
        _start(ray, address)
        try:
            yield from _guarded(ray)
        finally:
            ray.shutdown()
    finally:
        ray_temp.remove_own(sessions)


def _start(ray: Any, address: str | None) -> None:
    """`ray.init`, any failure of which is one sentence: a Ray process killed or stuck while a
    local instance starts raises a bare Exception from deep inside Ray, with a traceback."""
    env = {k: v for k, v in os.environ.items() if k in (CRASH_ENV, CRASH_MARKER_ENV)}
    try:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False,
                 runtime_env={"env_vars": env} if env else None)
    except Exception as exc:  # noqa: BLE001 - whatever Ray raised, the run cannot go on
        ray.shutdown()  # the processes a half-made start left
        first = _first_line(exc)
        if address:
            raise RayUnavailable(f"--address {address}: cannot connect to the Ray cluster there ({first}); "
                                 "nothing was written") from None
        raise RayUnavailable(f"--backend ray: Ray failed to start on this machine ({first}); nothing was written; "
                             "rerun, or use --backend local") from None


def _guarded(ray: Any) -> Iterator[Any]:
    try:
        yield ray
    except ray.exceptions.RayError as exc:
        # a raylet, the GCS or a node that died mid-run: one sentence, not Ray's traceback
        raise RayFailed(f"the Ray cluster failed during the run ({_first_line(exc)}); nothing was "
                        "written; rerun when the cluster is back, or use --backend local") from None


def _first_line(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0].strip().rstrip(":.")[:300]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def crash_on_first_attempt(index: int) -> None:
    """The tests' fault injection: the first attempt of task `index` kills its worker process."""
    marker = os.environ.get(CRASH_MARKER_ENV)
    if os.environ.get(CRASH_ENV) == str(index) and marker and not os.path.exists(marker):
        with open(marker, "w") as fh:  # only the first attempt dies
            fh.write(str(os.getpid()))
        os._exit(1)
