"""JSON responses (orjson, typed answers included) and the error envelope every non-Atlas route
answers with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field
from starlette import responses


class ErrorBody(BaseModel):
    """The error envelope: the HTTP status again, a message naming each field and why, and the
    messages one by one when there are several."""

    model_config = ConfigDict(extra="forbid")

    code: int = Field(description="The HTTP status")
    message: str
    errors: list[str] = Field(default_factory=list, description="Each problem; absent when one")


class JSONResponse(responses.JSONResponse):
    """JSON written by orjson; a typed answer (a pydantic model) is dumped first, raw JSON
    fragments (facets, events as sent) kept as they are."""

    def render(self, content: Any) -> bytes:
        if isinstance(content, BaseModel):
            content = content.model_dump(exclude_unset=True)  # absent keys stay absent
        return orjson.dumps(content)


def error_response(
    status: int, message: str, errors: list[str] | None = None, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    body: dict[str, Any] = {"code": status, "message": message}
    if errors:
        body["errors"] = errors
    return JSONResponse(body, status_code=status, headers=headers)
