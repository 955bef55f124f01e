"""Start `contrastgen serve` as a real uvicorn process on a free loopback port, for tests.

Why a subprocess and not FastAPI's TestClient: the things that break in production (uvicorn's
lifespan, the body limit before reading, streaming, worker threads, logs, the CLI options) only
exist in a real server. `--port 0` lets the kernel pick a free port, which uvicorn logs; no
fixed ports, so parallel test workers never collide.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import httpx
import orjson
from processes import interrupt

# Servers run with one fixed hash seed and the CLI runs of the parity test with another, so
# "same results as the CLI" also covers set-iteration order across processes, reproducibly.
SERVER_HASH_SEED = "1"
CLI_HASH_SEED = "2"
TOKEN = "test-token-7f3a"
CORS_ORIGIN = "https://lab.example"
_LISTENING = re.compile(r"Uvicorn running on (http://127\.0\.0\.1:\d+)")
TOKEN_ENV = "CONTRASTGEN_API_TOKEN"


@dataclass
class Server:
    url: str
    pid: int
    log_path: Path

    def log_lines(self) -> list[dict]:
        """The server's JSON log lines so far."""
        out = []
        for line in self.log_path.read_text().splitlines():
            if line.startswith("{"):
                out.append(orjson.loads(line))
        return out

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, **kwargs)

    def stop(self) -> None:
        """Ask the server to shut down (SIGINT, as Ctrl-C would); kill it if it does not."""
        proc = _CHILDREN.pop(self.pid, None)
        if proc is not None:  # started by this process: wait on it, which also reaps it
            interrupt(proc)
            return
        # started by another test worker, which reaps it; here "gone" includes "zombie"
        _signal(self.pid, signal.SIGINT)
        deadline = time.monotonic() + 15
        while _alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _alive(self.pid):
            _signal(self.pid, signal.SIGKILL)


_CHILDREN: dict[int, subprocess.Popen] = {}


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


def start_server(log_dir: Path, *args: str, token: str | None = None, timeout: float = 90) -> Server:
    """Run `contrastgen serve --port 0 ARGS` and wait until it answers /readyz."""
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    env["PYTHONHASHSEED"] = SERVER_HASH_SEED
    if token is not None:
        env[TOKEN_ENV] = token
    log_path = log_dir / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "contrastgen", "serve", "--port", "0", *args],
            stdout=log, stderr=subprocess.STDOUT, env=env, stdin=subprocess.DEVNULL,
        )
    deadline = time.monotonic() + timeout
    url = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log_path.read_text()}")
        found = _LISTENING.search(log_path.read_text())
        if found:
            url = found.group(1)
            try:
                if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                    _CHILDREN[proc.pid] = proc
                    return Server(url=url, pid=proc.pid, log_path=log_path)
            except httpx.TransportError:
                pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"server did not become ready in {timeout} s:\n{log_path.read_text()}")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def shared_server(root: Path, name: str, *args: str, token: str | None = None) -> Iterator[Server]:
    """One server per configuration for all test workers of a run, stopped by the last user.

    Why: starting a server loads the engine (seconds of CPU); with `-n 2` each worker would
    otherwise start its own copy of every configuration. Workers coordinate through a small
    JSON file under the run's shared temporary directory, guarded by an exclusive file lock.
    """
    state, lock = root / f"{name}.json", root / f"{name}.lock"
    with _locked(lock):
        if state.exists():
            info = orjson.loads(state.read_bytes())
            info["users"] += 1
        else:
            log_dir = root / name
            log_dir.mkdir(exist_ok=True)
            started = start_server(log_dir, *args, token=token)
            info = {"url": started.url, "pid": started.pid, "log": str(started.log_path), "users": 1}
        state.write_bytes(orjson.dumps(info))
    server = Server(url=info["url"], pid=info["pid"], log_path=Path(info["log"]))
    try:
        yield server
    finally:
        with _locked(lock):
            info = orjson.loads(state.read_bytes())
            info["users"] -= 1
            if info["users"] == 0:
                server.stop()
                state.unlink()
            else:
                state.write_bytes(orjson.dumps(info))


def auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def sample_dir() -> Path:
    return Path(str(files("contrastgen.data"))) / "sample"


def examples() -> dict:
    """The OpenAPI request examples, by model name."""
    return orjson.loads((Path(str(files("contrastgen.api"))) / "examples.json").read_bytes())


def posted_in_process(app: Any, bodies: list[bytes], headers: dict[str, str]) -> list[tuple[int, list, bytes]]:
    """Each body POSTed to `/v1/perturb` of an ASGI app in this process (starlette's TestClient,
    which runs the lifespan): status, headers and bytes, to compare two ways of answering."""
    from starlette.testclient import TestClient

    with TestClient(app, base_url="http://127.0.0.1") as client:
        out = []
        for body in bodies:
            r = client.post("/v1/perturb", content=body, headers=headers)
            out.append((r.status_code, r.headers.multi_items(), r.content))
        return out

