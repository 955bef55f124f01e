"""Load benchmark of `POST /v1/perturb`: requests/s and latency percentiles at a fixed rate.

    .venv/bin/python benchmarks/bench_api.py [--rate 200] [--concurrency 8] [--requests 3000]

Starts `contrastgen serve` on a free loopback port (a second process), then sends the bundled
sample's questions with their scene graphs at a fixed arrival rate from `--concurrency`
keep-alive connections, and prints achieved requests/s and p50/p95/p99/max latency.

Why a fixed arrival rate (open loop): a closed loop that waits for each answer before sending
the next slows down with the server and hides queueing. Here request i is due at t0 + i/rate,
and its latency is counted from that due time, so a stall shows up in the tail instead of
lowering the load ("coordinated omission"). Bounded: at most `--requests` requests and
`--max-seconds` seconds, to 127.0.0.1 only; the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import httpx
import numpy as np
import orjson
import uvloop

LISTENING = re.compile(r"Uvicorn running on (http://127\.0\.0\.1:\d+)")


def sample_bodies() -> list[bytes]:
    """One /v1/perturb body per sample question that has a scene graph."""
    base = Path(str(files("contrastgen.data"))) / "sample"
    questions = orjson.loads((base / "questions.json").read_bytes())
    graphs = orjson.loads((base / "scene_graphs.json").read_bytes())
    bodies = []
    for qid, q in questions.items():
        image = str(q["imageId"])
        if image not in graphs:
            continue
        req = {"question": q["question"], "answer": q["answer"], "scene_graph": graphs[image],
               "question_id": qid, "image_id": image}
        if q.get("semantic"):
            req["semantic"] = q["semantic"]
        bodies.append(orjson.dumps(req))
    return bodies


def start_server(args: argparse.Namespace, log_path: Path) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "contrastgen", "serve", "--host", "127.0.0.1", "--port", "0",
           "--workers", str(args.workers), "--log-level", "info"]  # as deployed: access logs on
    if args.server_corpus:
        cmd += ["--scene-graphs",
                str(Path(str(files("contrastgen.data"))) / "sample" / "scene_graphs.json")]
    env = {k: v for k, v in os.environ.items() if k != "CONTRASTGEN_API_TOKEN"}
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited:\n{log_path.read_text()}")
        found = LISTENING.search(log_path.read_text())
        if found:
            url = found.group(1)
            try:
                if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                    return proc, url
            except httpx.TransportError:
                pass
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("server did not start in 120 s")


@dataclass
class Outcome:
    latencies_ms: list[float]
    errors: dict[str, int]
    elapsed_s: float
    sent: int


class Connection:
    """A minimal HTTP/1.1 keep-alive client connection for one request at a time.

    Why not httpx: on this 2-core machine the load generator shares the CPU with the server,
    and httpx spends more CPU per request (~3 ms) than the server does, so it measured itself.
    For the same reason it runs on uvloop (as the server does), which costs it less CPU per
    request than asyncio's own loop.
    The server's responses here always carry Content-Length, which is all this reader handles.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, host: str, port: int) -> Connection:
        return cls(*await asyncio.open_connection(host, port))

    async def request(self, raw: bytes) -> tuple[int, bytes]:
        self.writer.write(raw)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        body = await self.reader.readexactly(length) if length else b""
        return status, body

    def close(self) -> None:
        self.writer.close()


def raw_requests(host: str, port: int, bodies: list[bytes], path: str) -> list[bytes]:
    head = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n")
    return [head.format(len(b)).encode() + b for b in bodies]


async def run_load(url: str, bodies: list[bytes], *, rate: float, concurrency: int,
                   requests: int, max_seconds: float, path: str = "/v1/perturb") -> Outcome:
    """Send `requests` POSTs due at a fixed rate through `concurrency` connections."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    raws = raw_requests(host, int(port), bodies, path)
    latencies: list[float] = []
    errors: dict[str, int] = {}
    next_index = 0
    conns = [await Connection.open(host, int(port)) for _ in range(concurrency)]
    t0 = time.perf_counter() + 0.05
    stop_at = t0 + max_seconds

    async def worker(conn: Connection) -> None:
        nonlocal next_index
        while True:
            i = next_index
            if i >= requests:
                return
            next_index += 1
            due = t0 + i / rate
            if due > stop_at:
                return
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            try:
                status, _ = await asyncio.wait_for(conn.request(raws[i % len(raws)]), 30)
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as exc:
                key = type(exc).__name__
                errors[key] = errors.get(key, 0) + 1
                return  # the connection is unusable now
            if status != 200:
                errors[f"HTTP {status}"] = errors.get(f"HTTP {status}", 0) + 1
                continue
            latencies.append((time.perf_counter() - due) * 1000)

    try:
        await asyncio.gather(*(worker(c) for c in conns))
    finally:
        for c in conns:
            c.close()
    return Outcome(latencies, errors, time.perf_counter() - t0, min(next_index, requests))


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its children so far (Linux /proc)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for p in pids:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def report(name: str, out: Outcome, rate: float, concurrency: int, server_cpu_s: float,
           client_cpu_s: float) -> str:
    lat = np.array(out.latencies_ms) if out.latencies_ms else np.array([float("nan")])
    p50, p95, p99 = np.percentile(lat, [50, 95, 99])
    ok = len(out.latencies_ms)
    return (f"{name}: target {rate:g} req/s, concurrency {concurrency}: {out.sent} sent, {ok} ok, "
            f"errors {out.errors or 0}; achieved {ok / out.elapsed_s:.1f} req/s over "
            f"{out.elapsed_s:.1f} s; latency ms p50 {p50:.2f} p95 {p95:.2f} p99 {p99:.2f} "
            f"max {lat.max():.2f}; CPU per request: server {server_cpu_s / max(out.sent, 1) * 1000:.2f} ms, "
            f"client {client_cpu_s / max(out.sent, 1) * 1000:.2f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=float, default=200.0, help="requests per second to offer")
    ap.add_argument("--concurrency", type=int, default=8, help="keep-alive connections")
    ap.add_argument("--requests", type=int, default=3000, help="measured requests (at most)")
    ap.add_argument("--warmup", type=int, default=300, help="requests sent first, not measured")
    ap.add_argument("--max-seconds", type=float, default=60.0, help="bound on the measured run")
    ap.add_argument("--workers", type=int, default=1, help="server worker processes")
    ap.add_argument("--server-corpus", action="store_true",
                    help="start the server with the sample graphs as its distractor corpus")
    args = ap.parse_args()
    if args.requests > 100_000 or args.max_seconds > 600:
        raise SystemExit("refusing: a benchmark run is bounded to 100k requests and 600 s")
    bodies = sample_bodies()
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(args, Path(tmp) / "server.log")
        try:
            print(f"server {url} (workers {args.workers}, server corpus {args.server_corpus}); "
                  f"{len(bodies)} distinct sample questions", flush=True)
            print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs", flush=True)
            for name, count in (("warm-up", args.warmup), ("measured", args.requests)):
                cpu0, own0 = process_cpu_seconds(proc.pid), time.process_time()
                out = uvloop.run(run_load(url, bodies, rate=args.rate,
                                           concurrency=args.concurrency, requests=count,
                                           max_seconds=args.max_seconds))
                cpu, own = process_cpu_seconds(proc.pid) - cpu0, time.process_time() - own0
                print(report(name, out, args.rate, args.concurrency, cpu, own), flush=True)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    main()
