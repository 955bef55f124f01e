"""`contrastgen view` served for real on loopback: it says the port it bound (`--port 0` included)
and answers only loopback `Host` names, so a page that rebinds its own name to 127.0.0.1 (DNS
rebinding) cannot read the sets."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from processes import interrupt

_SERVING = re.compile(r"contrastgen view: (http://127\.0\.0\.1:(\d+)/)")


@pytest.fixture(scope="module")
def viewer(sample_output) -> Iterator[tuple[str, int]]:
    """`contrastgen view OUT --port 0`, its printed URL and port."""
    proc = subprocess.Popen([sys.executable, "-m", "contrastgen", "view", str(sample_output["out"]), "--port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        said, deadline = b"", time.monotonic() + 90
        found = None
        while found is None and time.monotonic() < deadline and proc.poll() is None:
            if select.select([proc.stderr], [], [], 1)[0]:
                said += os.read(proc.stderr.fileno(), 4096)
                found = _SERVING.search(said.decode(errors="replace"))
        assert found, f"no URL printed: {said.decode(errors='replace')}"
        url, port = found.group(1), int(found.group(2))
        while time.monotonic() < deadline:
            try:
                httpx.get(url, timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        yield url, port
    finally:
        interrupt(proc)


def test_port_0_prints_the_port_the_system_chose(viewer):
    url, port = viewer
    assert port != 0
    assert httpx.get(url, timeout=10).status_code == 200


@pytest.mark.parametrize("host", ["attacker.example", "192.168.1.5:8765", "localhost.evil.com"])
def test_a_foreign_host_name_is_refused(viewer, host):
    url, _ = viewer
    for path in ("", "data/manifest.js"):
        response = httpx.get(url + path, headers={"host": host}, timeout=10)
        assert response.status_code == 400, (path, response.text[:200])
        assert response.json()["error"] == "bad_host"


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_loopback_host_names_are_served(viewer, host):
    url, port = viewer
    response = httpx.get(url + "data/manifest.js", headers={"host": f"{host}:{port}"}, timeout=10)
    assert response.status_code == 200
    assert response.text.startswith("cgData('manifest'")
