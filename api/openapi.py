"""The OpenAPI schema: FastAPI's, plus the request bodies we parse ourselves, with examples.

Why this is needed: the POST bodies are parsed in a worker thread (`parsing`), so FastAPI does
not see their models; we declare each body with `body_doc` and add the models' JSON schemas to
`components` here, so `/docs` and generated clients still show every field. The examples are
real requests over the bundled sample data, kept as data in `examples.json` beside this file.
"""

from __future__ import annotations

import functools
from typing import Any

import orjson
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from contrastgen.resources import package_resource

_REF = "#/components/schemas/{model}"


@functools.cache
def examples() -> dict[str, Any]:
    """`examples.json`: request examples by model name (`{"PerturbRequest": {name: example}}`)."""
    text = package_resource("contrastgen.api", "examples.json").read_bytes()
    data = orjson.loads(text)
    data.pop("_about", None)
    return data


def body_doc(model: type[BaseModel], *, description: str) -> dict[str, Any]:
    """`openapi_extra` for a route whose JSON body is `model`, parsed by the route itself."""
    content: dict[str, Any] = {"schema": {"$ref": _REF.format(model=model.__name__)}}
    named = examples().get(model.__name__)
    if named:
        content["examples"] = {name: {"summary": ex.get("summary", name), "value": ex["value"]}
                               for name, ex in named.items()}
    return {"requestBody": {"required": True, "description": description,
                            "content": {"application/json": content}}}


def install_openapi(app: FastAPI, request_models: list[type[BaseModel]]) -> None:
    """Make `app.openapi()` include the schemas of `request_models` (and the models they use)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version, summary=app.summary,
                             description=app.description, routes=app.routes,
                             separate_input_output_schemas=False)
        _, defs = models_json_schema([(m, "validation") for m in request_models], ref_template=_REF)
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for name, sub in defs.get("$defs", {}).items():
            components.setdefault(name, sub)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
