"""How every API route is matched, answered and documented: names in paths (percent-encoded,
slashes included), typed answers serialized with orjson, and the error statuses each route
declares with the error envelope.

Names may hold slashes and colons (`s3://lake/raw/orders`): clients percent-encode them
(`s3%3A%2F%2Flake`). Starlette matches the decoded path, where an encoded slash can no longer be
told from a separator, so these routes match the raw path and decode each name themselves: `{x:name}`
is one encoded segment; `{x:names}`, only ever last, is the rest of the path, so that a name with
slashes the client left unencoded still works there.
"""

from __future__ import annotations

import functools
import inspect
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar, get_origin
from urllib.parse import parse_qsl, quote, unquote

from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.convertors import Convertor, register_url_convertor
from starlette.routing import Match
from starlette.types import Receive, Scope, Send

from headwater.api.responses import ErrorBody, JSONResponse, error_response


class NameConvertor(Convertor[str]):
    """One path segment, percent-decoded (`s3%3A%2F%2Flake` → `s3://lake`); an empty one is the
    route's (which answers 400 naming the parameter), not a missing route."""

    regex = "[^/]*"

    def convert(self, value: str) -> str:
        return unquote(value)

    def to_string(self, value: str) -> str:
        return quote(value, safe="")


class NamesConvertor(NameConvertor):
    """The rest of the path, percent-decoded, its unencoded slashes kept."""

    regex = ".+"


register_url_convertor("name", NameConvertor())
register_url_convertor("names", NamesConvertor())

_DESCRIPTIONS = {
    400: "A parameter or the body is invalid; `message` names each one and why",
    401: "An API key is required (`Authorization: Bearer <key>`) or the key is unknown",
    403: "This API key may not do this",
    404: "Not found; `message` names what",
    413: "The body (or a batch) is larger than the server's limit",
    415: "Unsupported Content-Type or Content-Encoding",
    422: "The store refused to keep this data; nothing of the request was stored",
    503: "The store cannot be reached; nothing was acknowledged",
}


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for these error statuses, each answered with the error envelope."""
    return {status: {"model": ErrorBody, "description": _DESCRIPTIONS[status]} for status in statuses}


def _answering(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """The endpoint, answering a returned model with orjson (facets stay raw JSON fragments, which
    FastAPI's own serializer cannot write); FastAPI still reads the model from the signature."""
    if inspect.iscoroutinefunction(endpoint):

        @functools.wraps(endpoint)
        async def answer_async(*args: Any, **kwargs: Any) -> Any:
            result = await endpoint(*args, **kwargs)
            return JSONResponse(result) if isinstance(result, BaseModel) else result

        return answer_async

    @functools.wraps(endpoint)
    def answer(*args: Any, **kwargs: Any) -> Any:
        result = endpoint(*args, **kwargs)
        return JSONResponse(result) if isinstance(result, BaseModel) else result

    return answer


class ModelRoute(APIRoute):
    """An API route: matched on the raw path, answering its typed model, and declaring 400 when
    it takes parameters or a body and 404 when it has path parameters."""

    # Every API route, for the `Allow` header of a 405 (the app's route list nests routers).
    every: ClassVar[list[ModelRoute]] = []

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, _answering(endpoint), **kwargs)
        ModelRoute.every.append(self)
        takes = self.dependant.query_params or self.dependant.path_params or self.body_field
        declared = {str(status) for status in self.responses}
        for status, wanted in ((400, bool(takes)), (404, bool(self.dependant.path_params))):
            if wanted and str(status) not in declared:
                self.responses = {**errors(status), **self.responses}

    @classmethod
    def allowed_methods(cls, scope: Scope) -> set[str]:
        """The methods the document gives the request's path: those of the matching routes with
        the most specific template. A name keeping unencoded slashes (`{x:names}`) lets a shorter
        template match too (`…/jobs/{job}` matches `…/jobs/j/runs`), but that is not this path."""
        matching = [route for route in cls.every if route.matches(scope)[0] != Match.NONE]

        def specificity(route: ModelRoute) -> tuple[int, int]:
            segments = route.path_format.split("/")
            return len(segments), sum(not segment.startswith("{") for segment in segments)

        best = max((specificity(route) for route in matching), default=None)
        methods: set[str] = set()
        for route in matching:
            if specificity(route) == best:
                methods |= route.methods or set()
        return methods

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A parameter that takes one value, given twice, is a 400 (which one would count?)."""
        if scope.get("method") in (self.methods or ()):
            counts = Counter(
                key
                for key, _ in parse_qsl(
                    scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True
                )
            )
            lists = {
                f.alias for f in self.dependant.query_params if get_origin(f.field_info.annotation) is list
            }
            repeated = sorted(key for key, count in counts.items() if count > 1 and key not in lists)
            if repeated:
                errors = [f"{key}: given more than once; it takes one value" for key in repeated]
                await error_response(400, "; ".join(errors), errors if len(errors) > 1 else None)(
                    scope, receive, send
                )
                return
        await super().handle(scope, receive, send)

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        raw = scope.get("raw_path")
        if isinstance(raw, bytes) and scope.get("type") == "http":
            path = raw.decode("latin-1").partition("?")[0]
            root = scope.get("root_path", "")
            scope = {**scope, "path": path if not root or path.startswith(root) else root + path}
        return super().matches(scope)
