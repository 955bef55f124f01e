"""Whether anything answers at a Ray address, asked with a deadline before Ray is asked.

Why our own probe: `ray.init(address=...)` (Ray 2.60) has no connect timeout of its own. Against
an address where nothing listens it retries the GCS connection 20 times
(`RAY_NUM_REDIS_GET_RETRIES`, or `RAY_gcs_server_port_wait_time_s`), each attempt a gRPC connect
that waits 5 s and then 30 s for the cluster's id, printing three warnings an attempt: 822 s
(measured, 60 warnings) before it gives up. The knobs that would shorten it are process-wide
settings of Ray's core, which would also shorten how long a run that did connect waits out a GCS
that restarts.
A TCP connect to the same host and port, with a deadline, tells "nothing there" apart at once
(refused) or within the deadline (no answer), and touches nothing of Ray's.
"""

from __future__ import annotations

import os
import socket

from contrastgen.errors import ContrastgenError

CONNECT_TIMEOUT_S = 10.0
RAY_ADDRESS_ENV = "RAY_ADDRESS"  # Ray's own: the cluster when ray.init is given none, or "auto"
RAY_CLIENT_PORT = 10001  # Ray Client's (ray://HOST) port when the address names none


class RayUnavailable(ContrastgenError):
    """Ray is not installed, or the cluster cannot be reached or started."""


def host_and_port(address: str, source: str = "--address") -> tuple[str, int] | None:
    """The host and port `address` names (HOST:PORT, [IPv6]:PORT, ray://HOST[:PORT]), or None
    for an address Ray itself resolves ("auto", "local")."""
    client = address.startswith("ray://")
    rest = address[len("ray://"):] if client else address
    if not client and rest in ("auto", "local"):
        return None
    if rest.startswith("["):  # [IPv6]:PORT
        host, _, after = rest[1:].partition("]")
        port = after[1:] if after.startswith(":") else ""
    elif rest.count(":") == 1:
        host, _, port = rest.partition(":")
    else:  # no port (or a bare IPv6 address, which cannot carry one)
        host, port = rest, ""
    if not port and client and host:
        return host, RAY_CLIENT_PORT
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise RayUnavailable(f"{_named(source, address)}: give the Ray cluster as HOST:PORT (a port from 1 to 65535), "
                             "ray://HOST[:PORT] or auto")
    return host, int(port)


def check_reachable(address: str | None, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raise RayUnavailable, in one sentence naming where the address came from, unless something
    accepts a TCP connection there within `timeout` seconds. Without an address (or with "auto")
    Ray takes RAY_ADDRESS when it is set, so that is what is asked; otherwise Ray finds a cluster
    itself, or starts one, and fails at once when it finds none."""
    source = "--address"
    if address in (None, "auto") and os.environ.get(RAY_ADDRESS_ENV):
        address, source = os.environ[RAY_ADDRESS_ENV], RAY_ADDRESS_ENV
    if address is None:
        return
    target = host_and_port(address, source)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=timeout):
            pass
    except TimeoutError:
        reason = f"no answer within {timeout:g} s"
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
    else:
        return
    raise RayUnavailable(f"{_named(source, address)}: no Ray cluster answers there ({reason.lower()}); start one "
                         f"with 'ray start --head' and give the address it prints, or {_unset(source)} to start "
                         "Ray on this machine")


def _named(source: str, address: str) -> str:
    return f"--address {address}" if source == "--address" else f"{source}={address}"


def _unset(source: str) -> str:
    return "leave out --address" if source == "--address" else f"unset {source} and leave out --address"
