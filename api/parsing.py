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
from contrastgen.files.limits import any_key_given_twice, first_duplicate_key, limits, scan_bytes

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


class _Unproven:
    pass


_UNPROVEN = _Unproven()
# Bodies up to this size are parsed before they are scanned (`_proven_small`): a `/v1/perturb`
# body is a few KB; a batch's, far larger, is scanned first, whatever it costs a question.
SMALL_BODY = 64 << 10


def _proven_small(body: bytes) -> Any:
    """The parsed body when it is plainly within the input limits and gives no key twice, else
    `_UNPROVEN` (then `_read_checked` reads it and names what is wrong).

    Why: the byte scan exists to refuse what a parser must not be handed, and costs a request
    body of 2 KB about 70 us, more than the parse and the checks together. A body no longer
    than the longest record allowed cannot hold a string, number or record over that length,
    so only its nesting can break the limits, and orjson (which refuses nesting past 1024
    levels itself) builds a small body at once, whatever it holds. So parse first, then prove from the parsed
    value what the scan would have found: its depth within the limit, and as many keys written
    (a colon outside strings is the end of a key) as its objects hold, which a count of every
    colon in the body proves when no string holds one. Anything not proven this way, invalid
    JSON included, is read again the exact way, so every refusal and its message are the scan's.
    """
    bounds = limits()
    if len(body) > min(SMALL_BODY, bounds.max_record_bytes):
        return _UNPROVEN
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _UNPROVEN
    depth, held = 0, 0
    level = [data] if type(data) is dict or type(data) is list else []
    while level:  # one level at a time, in plain loops (a comprehension per container cost a third more)
        depth += 1
        below: list[Any] = []
        for value in level:
            if type(value) is dict:
                held += len(value)
                value = value.values()
            for v in value:
                kind = type(v)
                if kind is dict or kind is list:
                    below.append(v)
        level = below
    if depth > bounds.max_depth or body.count(b":") != held:
        return _UNPROVEN
    return data


def _read_checked(body: bytes) -> Any:
    """The body scanned for the input limits, parsed, and checked for a key given twice."""
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
    return data


def parse_body(model: type[M], body: bytes) -> tuple[M, Any]:
    """Parse a JSON body and check it against `model` (strictly, see `models`).

    Returns the model and the parsed JSON; callers hand the JSON to the library. Errors name
    the field as `["body", ...]` paths, like FastAPI's.
    """
    if not body.strip():
        raise FieldError(["body"], "request body is empty; expected a JSON object", "missing")
    data = _proven_small(body)
    if data is _UNPROVEN:
        data = _read_checked(body)
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
