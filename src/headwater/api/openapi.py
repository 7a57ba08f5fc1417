"""The OpenAPI document as the server behaves, and the wording of parameter errors.

FastAPI declares 422 for every route that takes parameters; Headwater answers a bad parameter
with 400 and the error envelope (declared by `headwater.api.routing.ModelRoute`), so the 422s
FastAPI adds are taken out. Parameter errors read like every other 400: `limit: 'x' is not a
whole number`, naming the parameter first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from headwater.api.params import EXPLAINED

_FASTAPI_ONLY = ("HTTPValidationError", "ValidationError")


def _without_fastapi_422(document: dict[str, Any]) -> dict[str, Any]:
    for path in document.get("paths", {}).values():
        for operation in path.values():
            responses = operation.get("responses", {})
            refs = str(responses.get("422", ""))
            if "HTTPValidationError" in refs:
                del responses["422"]
    schemas = document.get("components", {}).get("schemas", {})
    for name in _FASTAPI_ONLY:
        schemas.pop(name, None)
    return document


def install(app: FastAPI) -> None:
    """Serve the corrected document at /openapi.json (built once, on first request)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                openapi_version=app.openapi_version,
                description=app.description,
                routes=app.routes,
                tags=app.openapi_tags,
            )
            app.openapi_schema = _without_fastapi_422(document)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _name(location: Sequence[Any]) -> str:
    return ".".join(str(part) for part in location[1:] if not isinstance(part, int)) or "request"


def _range(route: object, name: str) -> str | None:
    """`low..high` of the route's number parameter `name`, as query.params.whole_number says it."""
    dependant = getattr(route, "dependant", None)
    fields = [*dependant.query_params, *dependant.path_params] if dependant is not None else []
    for field in fields:
        if field.alias == name:
            bounds = {
                key: getattr(item, key)
                for item in field.field_info.metadata
                for key in ("ge", "le")
                if hasattr(item, key)
            }
            if "ge" in bounds and "le" in bounds:
                return f"{bounds['ge']}..{bounds['le']}"
    return None


def parameter_error(error: dict[str, Any], route: object = None) -> str:
    """One pydantic error about a parameter or body, in Headwater's words."""
    name = _name(error.get("loc", ()))
    kind = error.get("type", "")
    given = error.get("input")
    context = error.get("ctx") or {}
    if kind == "missing":
        return f"{name}: required"
    if kind in ("int_parsing", "int_from_float", "int_type", "int_parsing_size"):
        return f"{name}: {given!r} is not a whole number"
    if kind in ("greater_than_equal", "less_than_equal") and (span := _range(route, name)):
        return f"{name}: {given} is outside {span}"
    if kind in ("greater_than_equal", "greater_than"):
        return f"{name}: {given} is outside the range (at least {context.get('ge', context.get('gt'))})"
    if kind in ("less_than_equal", "less_than"):
        return f"{name}: {given} is outside the range (at most {context.get('le', context.get('lt'))})"
    if kind == "bool_parsing":
        return f"{name}: {given!r} is neither true nor false"
    if kind == "string_pattern_mismatch":
        pattern = str(context.get("pattern"))
        why = EXPLAINED.get(pattern)
        return f"{name}: {why(str(given)) if why else f'{given!r} does not match {pattern}'}"
    if kind == "json_invalid":
        return f"body: not JSON ({context.get('error', error.get('msg'))})"
    return f"{name}: {error.get('msg')}"
