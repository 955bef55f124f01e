"""Optional bearer-token authentication for the `/v1` endpoints.

Why a single shared token rather than users and scopes: the service runs next to a team's
training pipeline, and its one risk is a stranger on the network using the CPU or probing the
engine. A secret in `CONTRASTGEN_API_TOKEN`, compared in constant time, covers that; anything
finer belongs in the reverse proxy in front. Health, readiness and version stay open so that
orchestrators can probe the service without holding the secret.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Annotated

from contrastgen.api.errors import Unauthorized
from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.requests import Request

_bearer = HTTPBearer(auto_error=False, description="the value of CONTRASTGEN_API_TOKEN")


def bearer_auth(token: str):
    """A FastAPI dependency that admits only requests carrying `Authorization: Bearer <token>`."""
    expected = token.encode("utf-8")

    async def check(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
        if credentials is None:
            raise Unauthorized("missing 'Authorization: Bearer <token>' header")
        if not secrets.compare_digest(credentials.credentials.encode("utf-8"), expected):
            raise Unauthorized("invalid bearer token")

    return check


def request_auth(token: str) -> Callable[[Request], Awaitable[None]]:
    """The same check made on a request itself, for `direct`, which runs no dependency solver."""
    check = bearer_auth(token)

    async def on(request: Request) -> None:
        await check(await _bearer(request))

    return on
