"""JSON responses (orjson) and the error envelope every non-Atlas route answers with."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response


class JSONResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def error_response(status: int, message: str, errors: list[str] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"code": status, "message": message}
    if errors:
        body["errors"] = errors
    return JSONResponse(body, status_code=status)
