"""How failures become HTTP responses, with bodies a client can act on.

Why these codes: a caller's pipeline must tell "fix your request" (413, 422) from "try again"
(503, 504) from "you are not allowed" (401) without parsing prose. Invalid input keeps FastAPI's
422 shape (`detail` is a list of `{loc, msg, type}`) whether pydantic or the library found the
problem, so one parser handles both; every other error is `{"error": code, "detail": message}`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from contrastgen.api.offload import DeadlineExceeded, Overloaded
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from contrastgen.errors import InputError


class ErrorBody(BaseModel):
    """The body of every non-422 error."""

    error: str = Field(description="a stable machine-readable code", examples=["limit_exceeded"])
    detail: str = Field(description="what went wrong, for a person")


class FieldProblem(BaseModel):
    loc: list[str | int] = Field(description="where: `body`, then field names and indices")
    msg: str
    type: str
    ctx: dict[str, Any] | None = None


class ValidationErrorBody(BaseModel):
    """The body of a 422, in FastAPI's shape."""

    detail: list[FieldProblem]


class LimitExceeded(Exception):
    """A request asked for more than the server's configured limits allow (413)."""

    def __init__(self, what: str, value: int, limit: int, loc: Sequence[str | int] = ()):
        super().__init__(f"{what}: {value} exceeds the server's limit of {limit}")
        self.loc = tuple(loc)


class FieldError(Exception):
    """A request that is well-formed JSON but names things that do not exist (422)."""

    def __init__(self, loc: Sequence[str | int], msg: str, kind: str = "value_error"):
        super().__init__(msg)
        self.loc = tuple(loc)
        self.msg = msg
        self.kind = kind


class BodyValidationError(Exception):
    """The body is not valid JSON or does not fit its model; `errors` are FastAPI-shaped."""

    def __init__(self, errors: list[dict[str, Any]]):
        super().__init__(f"{len(errors)} validation error(s)")
        self.errors = errors


def _validation_body(loc: Sequence[str | int], msg: str, kind: str) -> dict[str, Any]:
    return {"detail": [{"loc": list(loc), "msg": msg, "type": kind}]}


def error_response(status: int, code: str, detail: str, headers: dict[str, str] | None = None
                   ) -> JSONResponse:
    return JSONResponse({"error": code, "detail": detail}, status_code=status, headers=headers)


# Documented on every route that takes a body, so the OpenAPI schema lists what can happen.
AUTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or wrong bearer token (when auth is on)"},
    400: {"model": ErrorBody, "description": "a Host header that is not a loopback name (tokenless "
                                             "server on loopback)"},
}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    422: {"model": ValidationErrorBody, "description": "invalid input; `detail` names each field"},
    **AUTH_RESPONSES,
    408: {"model": ErrorBody, "description": "the body did not arrive in time"},
    415: {"model": ErrorBody, "description": "a body not sent as application/json"},
    413: {"model": ErrorBody, "description": "body, graph or batch larger than the server's limits"},
    503: {"model": ErrorBody, "description": "too many requests waiting; retry after Retry-After"},
    504: {"model": ErrorBody, "description": "the request ran past the server's time limit"},
}


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(FieldError)
    async def _field(_: Request, exc: FieldError) -> JSONResponse:
        return JSONResponse(_validation_body(exc.loc, exc.msg, exc.kind), status_code=422)

    @app.exception_handler(BodyValidationError)
    async def _body(_: Request, exc: BodyValidationError) -> JSONResponse:
        return JSONResponse({"detail": exc.errors}, status_code=422)

    @app.exception_handler(InputError)
    async def _input(_: Request, exc: InputError) -> JSONResponse:
        return JSONResponse(_validation_body(["body"], str(exc), "invalid_input"), status_code=422)

    @app.exception_handler(LimitExceeded)
    async def _limit(_: Request, exc: LimitExceeded) -> JSONResponse:
        return error_response(413, "limit_exceeded", str(exc))

    @app.exception_handler(Overloaded)
    async def _busy(_: Request, exc: Overloaded) -> JSONResponse:
        return error_response(503, "overloaded", str(exc), headers={"Retry-After": "1"})

    @app.exception_handler(DeadlineExceeded)
    async def _slow(_: Request, exc: DeadlineExceeded) -> JSONResponse:
        return error_response(504, "timeout", str(exc))


class Unauthorized(Exception):
    """No bearer token, or the wrong one, while the server requires one (401)."""


def install_auth_error_handler(app: FastAPI) -> None:
    @app.exception_handler(Unauthorized)
    async def _auth(_: Request, exc: Unauthorized) -> JSONResponse:
        return error_response(401, "unauthorized", str(exc),
                              headers={"WWW-Authenticate": 'Bearer realm="contrastgen"'})
