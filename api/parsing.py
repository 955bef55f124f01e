"""Parsing request bodies in a worker thread, with FastAPI's 422 shape for errors (a key given
twice in any object of a body is one: `duplicate_key`, naming the key).

Why not let FastAPI parse them: a batch body may be 16 MiB of scene graphs, and decoding plus
validating that is tens to hundreds of milliseconds of pure CPU that FastAPI would spend on the
event loop, stalling every other request. orjson and pydantic-core in a worker thread are also
faster than FastAPI's `json.loads` followed by validation. The models still
appear in the OpenAPI schema (see `contrastgen.api.openapi`).
"""

from __future__ import annotations

from typing import Any, TypeVar

import orjson
from contrastgen.api.errors import BodyValidationError, FieldError
from pydantic import BaseModel, ValidationError

from contrastgen.errors import InputError
from contrastgen.files.limits import any_key_given_twice, first_duplicate_key, scan_bytes

M = TypeVar("M", bound=BaseModel)

# A body with thousands of errors gets the first few; the client fixes those and retries.
_MAX_ERRORS = 20


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def parse_body(model: type[M], body: bytes) -> tuple[M, Any]:
    """Parse a JSON body and check it against `model` (strictly, see `models`).

    Returns the model and the parsed JSON; callers hand the JSON to the library. Errors name
    the field as `["body", ...]` paths, like FastAPI's.
    """
    if not body.strip():
        raise FieldError(["body"], "request body is empty; expected a JSON object", "missing")
    try:
        scan = scan_bytes(body, None)  # nesting and sizes within the limits, before a parser builds anything
    except InputError as exc:
        raise FieldError(["body"], str(exc), "json_limits") from None
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise FieldError(["body", exc.pos], f"JSON decode error: {exc.msg}", "json_invalid") from None
    # A key given twice anywhere (an object id, a field) is refused, as the file readers refuse
    # it: a parser keeps only the last copy, so the request would say two things.
    if type(data) in (dict, list) and any_key_given_twice(data, scan):
        found = first_duplicate_key(body)
        if found is not None:
            raise FieldError(["body", *found.where, found.key], found.describe(), "duplicate_key")
    try:
        return model.model_validate(data), data
    except ValidationError as exc:
        errors = []
        for err in exc.errors(include_url=False, include_input=False)[:_MAX_ERRORS]:
            item = {"loc": ["body", *err["loc"]], "msg": err["msg"], "type": err["type"]}
            if "ctx" in err:
                item["ctx"] = _jsonable(err["ctx"])
            errors.append(item)
        raise BodyValidationError(errors) from None
