"""Settings of the HTTP service: where it listens, who may call it, and how much it accepts.

Why one frozen record that round-trips through an environment variable: with `--workers N`
uvicorn starts N fresh processes that each build the app from an import string, so the only way
to hand them the command line's choices is the environment. The bearer token is never put in
that record; every process reads it from `CONTRASTGEN_API_TOKEN` itself, so it does not end up
in a second variable or in a log line.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import os
from dataclasses import dataclass, field

from contrastgen.errors import ContrastgenError

SETTINGS_ENV = "CONTRASTGEN_API_SETTINGS"
TOKEN_ENV = "CONTRASTGEN_API_TOKEN"

MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What one request may ask for. Defaults fit GQA: its largest graphs hold ~100 objects."""

    max_body_bytes: int = 16 * MIB
    max_objects_per_graph: int = 500
    max_graphs_per_request: int = 20_000
    max_questions_per_batch: int = 20_000
    max_records_per_request: int = 100_000
    max_k: int = 50
    max_n_boot: int = 10_000
    request_timeout_s: float = 30.0
    # A request's headers must be whole within this from its first byte (or from the connection's
    # opening), and its whole body within `body_timeout_s` after them: a client that trickles
    # bytes would otherwise hold a connection forever. Together they stay under 30 s, the time
    # within which a connection that misses either is closed. 15 s carries the 16 MiB body limit
    # at about 1.1 MB/s.
    header_timeout_s: float = 10.0
    body_timeout_s: float = 15.0
    # The longest question text: GQA's run to about 200 characters, and a question's cost grows
    # with its length (a 10 MB question took 12 s of CPU).
    max_question_chars: int = 1000
    # Requests waiting for a worker thread beyond this are refused with 503 at once, so a burst
    # degrades into fast refusals a client can retry instead of into ever-growing latency.
    max_pending: int = 64
    worker_threads: int = 2


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    # A server-side corpus for distractor statistics, named by the operator on the command line
    # and read once at start-up. No endpoint reads a path named by a client.
    scene_graphs: str | None = None
    # A contrast-set viewer built at start-up (`--viewer OUT_DIR`), mounted at /viewer, and the
    # folder its images are served from (`--viewer-images`).
    viewer_site: str | None = None
    viewer_images: str | None = None
    insecure: bool = False
    cors_origins: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    # Read from the environment by every process; excluded from `to_env`.
    token: str | None = field(default=None, repr=False, compare=False)

    def to_env(self) -> str:
        data = dataclasses.asdict(self)
        data.pop("token")
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Rebuild the settings a `contrastgen serve` process left in the environment."""
        env = os.environ if environ is None else environ
        raw = env.get(SETTINGS_ENV)
        data = json.loads(raw) if raw else {}
        limits = Limits(**data.pop("limits", {}))
        data["cors_origins"] = tuple(data.get("cors_origins", ()))
        token = env.get(TOKEN_ENV) or None
        return cls(**data, limits=limits, token=token)

    @property
    def auth_required(self) -> bool:
        return self.token is not None


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class UnsafeBindError(ContrastgenError):
    """Serving beyond loopback without a token would expose the engine to the network."""


def check_exposure(settings: Settings) -> None:
    """Refuse a non-loopback bind without a token unless the operator said `--insecure`."""
    if is_loopback(settings.host) or settings.token or settings.insecure:
        return
    raise UnsafeBindError(
        f"refusing to listen on {settings.host} without authentication: set {TOKEN_ENV} "
        "to a secret bearer token, or pass --insecure if the network is trusted"
    )
