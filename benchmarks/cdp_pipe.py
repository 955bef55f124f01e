"""A minimal Chrome DevTools Protocol client over `--remote-debugging-pipe`, for the browser tests
(the crowd preview, the viewer) and the viewer's first-paint benchmark.

Why a pipe: it needs no TCP port (nothing to collide between parallel tests, nothing listening
on the network) and no websocket library; Chromium reads NUL-terminated JSON commands on fd 3
and writes responses and events on fd 4.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

# Flags that keep the browser off the network and quiet; host resolution is mapped to nothing
# so that even a stray remote URL in a page cannot leave the machine.
OFFLINE_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
    "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-dev-shm-usage",
]


def find_chromium() -> str | None:
    for name in ("/usr/bin/chromium", "chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


class PipeBrowser:
    def __init__(self, chromium: str, user_data_dir: Path, *, timeout: float = 60.0):
        self.timeout = timeout
        to_child_r, self._to_child_w = os.pipe()
        self._from_child_r, from_child_w = os.pipe()

        def wire_fds() -> None:  # runs in the child: its fd 3 reads commands, fd 4 writes replies
            # move both ends above 4 first: a pipe that got fd 3 or 4 itself would be overwritten
            r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [chromium, *OFFLINE_FLAGS, "--remote-debugging-pipe", f"--user-data-dir={user_data_dir}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire_fds, close_fds=False,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self._replies: dict[int, dict[str, Any]] = {}

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.send("Browser.close", wait=False)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for fd in (self._to_child_w, self._from_child_r):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _read_messages(self, deadline: float) -> None:
        remaining = max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([self._from_child_r], [], [], remaining)
        if not ready:
            return
        chunk = os.read(self._from_child_r, 1 << 16)
        if not chunk:
            raise RuntimeError("chromium closed the debugging pipe")
        self._buf += chunk
        while b"\0" in self._buf:
            raw, self._buf = self._buf.split(b"\0", 1)
            msg = json.loads(raw)
            if "id" in msg:
                self._replies[msg["id"]] = msg
            else:
                self.events.append(msg)

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None,
             wait: bool = True) -> Any:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child_w, json.dumps(msg).encode() + b"\0")
        return self.reply(self._next_id) if wait else self._next_id

    def reply(self, msg_id: int) -> Any:
        deadline = time.monotonic() + self.timeout
        while msg_id not in self._replies:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no reply to CDP command {msg_id}")
            self._read_messages(deadline)
        msg = self._replies.pop(msg_id)
        if "error" in msg:
            raise RuntimeError(f"CDP error: {msg['error']}")
        return msg["result"]

    def wait_event(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while True:
            for i, ev in enumerate(self.events):
                if ev["method"] == method:
                    return self.events.pop(i)
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {method} event")
            self._read_messages(deadline)

    def open_page(self, url: str) -> str:
        """Open `url` in a new tab and wait for its load event; returns the session id."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable", session=session)
        self.send("Runtime.enable", session=session)
        self.send("Log.enable", session=session)  # resource errors (a missing script) arrive here
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired")
        return session

    def evaluate(self, session: str, expression: str) -> Any:
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                             "awaitPromise": True}, session=session)
        if "exceptionDetails" in res:
            raise RuntimeError(f"page script failed: {res['exceptionDetails']}")
        return res["result"].get("value")

    def screenshot(self, session: str) -> bytes:
        """The page as a PNG, at the window's size."""
        import base64

        return base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"}, session=session)["data"])

    def set_window(self, session: str, width: int, height: int) -> None:
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                          "deviceScaleFactor": 1, "mobile": False},
                  session=session)

    def errors(self) -> list[str]:
        """Console errors and uncaught exceptions the pages reported so far."""
        with contextlib.suppress(TimeoutError):
            self._read_messages(time.monotonic() + 0.2)
        out = []
        for ev in self.events:
            if ev["method"] == "Runtime.exceptionThrown":
                out.append(str(ev["params"]["exceptionDetails"].get("text")))
            elif ev["method"] == "Runtime.consoleAPICalled" and ev["params"].get("type") == "error":
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in ev["params"]["args"]))
            elif ev["method"] == "Log.entryAdded" and ev["params"]["entry"].get("level") == "error":
                out.append(str(ev["params"]["entry"].get("text")))
        return out
