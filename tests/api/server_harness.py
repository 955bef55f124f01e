"""Start `contrastgen serve` as a real uvicorn process on a free loopback port, for tests.

Why a subprocess and not FastAPI's TestClient: the things that break in production (uvicorn's
lifespan, the body limit before reading, streaming, worker threads, logs, the CLI options) only
exist in a real server. `--port 0` lets the kernel pick a free port, which uvicorn logs; no
fixed ports, so parallel test workers never collide.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import httpx
import orjson

# Servers and CLI runs in these tests share one hash seed: at the time of writing the engine's
# output still depends on PYTHONHASHSEED (set iteration order; reported to the engine's owner),
# and the parity tests compare two processes. The API adds no hash dependence of its own.
HASH_SEED = "0"
TOKEN = "test-token-7f3a"
CORS_ORIGIN = "https://lab.example"
_LISTENING = re.compile(r"Uvicorn running on (http://127\.0\.0\.1:\d+)")
TOKEN_ENV = "CONTRASTGEN_API_TOKEN"


@dataclass
class Server:
    url: str
    proc: subprocess.Popen
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
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_server(log_dir: Path, *args: str, token: str | None = None, timeout: float = 90) -> Server:
    """Run `contrastgen serve --port 0 ARGS` and wait until it answers /readyz."""
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    env["PYTHONHASHSEED"] = HASH_SEED
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
                    return Server(url=url, proc=proc, log_path=log_path)
            except httpx.TransportError:
                pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"server did not become ready in {timeout} s:\n{log_path.read_text()}")


def auth(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def sample_dir() -> Path:
    return Path(str(files("contrastgen.data"))) / "sample"


def examples() -> dict:
    """The OpenAPI request examples, by model name."""
    return orjson.loads((Path(str(files("contrastgen.api"))) / "examples.json").read_bytes())
