"""POST /api/v1/lineage and /api/v1/lineage/batch: the OpenLineage HTTP transport's endpoints.

Producers call these for every event, so `LeanIngest` answers them straight from the ASGI messages,
before FastAPI's routing, dependencies and response models (which cost more than validating and
storing an event); the routes below describe them in the OpenAPI document and answer the same
when a request reaches them (with a query string, for instance).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import orjson
from fastapi import APIRouter, Depends, Request
from starlette.types import ASGIApp, Receive, Scope, Send

from headwater.api.auth import require_write
from headwater.api.bodies import OPENLINEAGE_EVENT, request_body
from headwater.api.models import Outcomes, Stored
from headwater.api.responses import ErrorBody, JSONResponse
from headwater.api.routing import ModelRoute, errors
from headwater.config import Settings
from headwater.errors import HeadwaterError, PayloadTooLarge
from headwater.ingest import metrics
from headwater.ingest.bodies import read_documents
from headwater.ingest.service import Outcome, collector_paused, record_stored, validate_documents
from headwater.ingest.service import Validated as ValidatedEvents
from headwater.ingest.writer import GroupCommitWriter

log = logging.getLogger(__name__)

LINEAGE_PATH, BATCH_PATH = "/api/v1/lineage", "/api/v1/lineage/batch"
router = APIRouter(
    tags=["ingest"],
    dependencies=[Depends(require_write)],
    route_class=ModelRoute,
    responses=errors(401, 403, 413, 415, 422, 503),
)
Validated = TypeVar("Validated")


def _check_declared_length(declared: str | None, limit: int) -> None:
    if declared and declared.isdigit() and int(declared) > limit:
        raise _declared_too_large(declared, limit)


def _declared_too_large(declared: str, limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"body of {declared} bytes is larger than the limit of {limit} bytes")


def _too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"body is larger than the limit of {limit} bytes")


async def _read_body(request: Request, limit: int) -> bytes:
    _check_declared_length(request.headers.get("content-length"), limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _too_large(limit)
    return bytes(body)


def _documents(
    body: bytes,
    content_type: str | None,
    content_encoding: str | None,
    settings: Settings,
    validate: Callable[[list[Any]], Validated],
    *,
    lazy: bool,
) -> tuple[Validated, bool]:
    with collector_paused():
        documents, is_batch = read_documents(
            body, content_type, content_encoding, settings.max_body_bytes, lazy=lazy
        )
        if len(documents) > settings.max_batch_events:
            raise PayloadTooLarge(
                f"{len(documents)} events in one request; the limit is {settings.max_batch_events}"
            )
        return validate(documents), is_batch


async def validated_body(
    request: Request, validate: Callable[[list[Any]], Validated], *, lazy: bool = False
) -> tuple[Validated, bool]:
    """The request's events (one, a JSON array or NDJSON; gzip), read within the size limits and
    passed to `validate`; and whether the body was a batch. Shared by every ingest route; `lazy`
    leaves well-formed events unparsed for `validate` (OpenLineage's lean path)."""
    settings: Settings = request.app.state.settings
    body = await _read_body(request, settings.max_body_bytes)
    headers = request.headers
    return _documents(
        body, headers.get("content-type"), headers.get("content-encoding"), settings, validate, lazy=lazy
    )


async def _store(writer: GroupCommitWriter, validated_batch: tuple[Any, bool]) -> tuple[list[Outcome], bool]:
    validated, is_batch = validated_batch
    stored = await writer.append(validated.events)
    outcomes = record_stored(validated, stored)
    metrics.count_outcomes("http", outcomes)
    return outcomes, is_batch


async def _ingest(request: Request) -> tuple[list[Outcome], bool]:
    validated = await validated_body(request, validate_documents, lazy=True)
    return await _store(request.app.state.writer, validated)


def _batch_answer(outcomes: list[Outcome]) -> tuple[int, list[dict[str, Any]]]:
    rejected = sum(1 for outcome in outcomes if not outcome.accepted)
    status = 200 if rejected == 0 else 400 if rejected == len(outcomes) else 207
    return status, [outcome.as_json() for outcome in outcomes]


def _single_answer(outcome: Outcome) -> tuple[int, dict[str, Any]]:
    if not outcome.accepted:
        return 400, _error_body(400, "; ".join(outcome.errors), outcome.errors)
    body: dict[str, Any] = {"eventId": outcome.event_id, "status": outcome.status}
    if outcome.status == 200:
        body["duplicate"] = True
    if outcome.warnings:
        body["warnings"] = list(outcome.warnings)
    return outcome.status, body


def _answer(outcomes: list[Outcome], is_batch: bool, batch_route: bool) -> tuple[int, bytes]:
    """What the routes answer, as bytes: a batch's outcomes written without a dict each when
    there is nothing but an eventId to say (what orjson writes for those dicts, byte for byte)."""
    if not (is_batch or batch_route):
        status, single = _single_answer(outcomes[0])
        return status, orjson.dumps(single)
    rejected = 0
    parts: list[bytes] = []
    for outcome in outcomes:
        if outcome.event_id is not None and not outcome.errors and not outcome.warnings:
            parts.append(
                b'{"index":%d,"status":%d,"eventId":"%s"}'
                % (outcome.index, outcome.status, outcome.event_id.encode())
            )
        else:
            rejected += not outcome.accepted
            parts.append(orjson.dumps(outcome.as_json()))
    status = 200 if rejected == 0 else 400 if rejected == len(outcomes) else 207
    return status, b"[" + b",".join(parts) + b"]"


def _error_body(status: int, message: str, errors: list[str] | None) -> dict[str, Any]:
    """The error envelope, as `headwater.api.responses.error_response` writes it."""
    body: dict[str, Any] = {"code": status, "message": message}
    if errors:
        body["errors"] = errors
    return body


class _Disconnected(Exception):
    """The client went away before its body was in: nobody to answer."""


class LeanIngest:
    """An ASGI wrapper of the app (`headwater.api.app` puts it in front of FastAPI) answering
    `POST /api/v1/lineage` and `/api/v1/lineage/batch` itself: the same checks, validation, group
    commit and answers as the routes, the same metrics as `IngestMetricsMiddleware`, without the
    framework's per-request work. Everything else goes to the app, and so do these requests with
    a query string (which the routes reject when a parameter repeats) or a root path."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if (
            scope["type"] != "http"
            or (path != LINEAGE_PATH and path != BATCH_PATH)
            or scope["method"] != "POST"
            or scope.get("query_string")
            or scope.get("root_path")
            or scope.get("raw_path", path.encode()) != path.encode()
        ):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            status, body = await self._handle(scope, receive, path == BATCH_PATH)
        except _Disconnected:
            return
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-length", str(len(body)).encode()),
                    (b"content-type", b"application/json"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
        metrics.HTTP_REQUESTS.inc(status=status)
        metrics.HTTP_SECONDS.observe(time.perf_counter() - started)

    async def _handle(self, scope: Scope, receive: Receive, batch_route: bool) -> tuple[int, bytes]:
        state = scope["app"].state
        settings: Settings = state.settings
        try:
            if settings.write_keys:
                await require_write(Request(scope))
            content_length, content_type, content_encoding = body_headers(scope["headers"])
            body = await _receive_body(receive, content_length, settings.max_body_bytes)
            validated, is_batch = validated_request(settings, body, content_type, content_encoding)
            stored = await state.writer.append(validated.events)
            return stored_answer(validated, is_batch, stored, batch_route)
        except _Disconnected:
            raise
        except Exception as exc:
            return error_answer(exc, scope["path"])


def body_headers(headers: Iterable[tuple[bytes, bytes]]) -> tuple[str | None, str | None, str | None]:
    """The first Content-Length, Content-Type and Content-Encoding of a request's headers (names
    in lower case, as ASGI servers give them)."""
    content_length = content_type = content_encoding = None
    for name, value in headers:
        if name == b"content-length" and content_length is None:
            content_length = value.decode("latin-1")
        elif name == b"content-type" and content_type is None:
            content_type = value.decode("latin-1")
        elif name == b"content-encoding" and content_encoding is None:
            content_encoding = value.decode("latin-1")
    return content_length, content_type, content_encoding


def validated_request(
    settings: Settings, body: bytes, content_type: str | None, content_encoding: str | None
) -> tuple[ValidatedEvents, bool]:
    """The events of an ingest request's body, validated, and whether it was a batch."""
    return _documents(body, content_type, content_encoding, settings, validate_documents, lazy=True)


def stored_answer(
    validated: ValidatedEvents, is_batch: bool, stored: Sequence[bool], batch_route: bool
) -> tuple[int, bytes]:
    """The answer once the writer said which events were new: status and JSON body."""
    outcomes = record_stored(validated, stored)
    metrics.count_outcomes("http", outcomes)
    return _answer(outcomes, is_batch, batch_route)


def too_large_answer(limit: int, declared: str | None) -> tuple[int, bytes]:
    """The answer to a body over the limit: as its Content-Length says, or as read so far."""
    return error_answer(_too_large(limit) if declared is None else _declared_too_large(declared, limit), "")


def error_answer(exc: Exception, path: str) -> tuple[int, bytes]:
    """The answer to an ingest request that failed: the error envelope of a HeadwaterError, else 500."""
    if isinstance(exc, HeadwaterError):
        if exc.status >= 500:
            log.error("POST %s: %s", path, exc.message)
        return exc.status, orjson.dumps(_error_body(exc.status, exc.message, getattr(exc, "errors", None)))
    log.error("unexpected error on POST %s", path, exc_info=exc)
    return 500, orjson.dumps(_error_body(500, f"internal error: {type(exc).__name__}", None))


async def _receive_body(receive: Receive, declared: str | None, limit: int) -> bytes:
    _check_declared_length(declared, limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _batch_response(outcomes: list[Outcome]) -> JSONResponse:
    status, answer = _batch_answer(outcomes)
    return JSONResponse(Outcomes.model_validate(answer), status_code=status)


BATCH_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {"model": Outcomes, "description": "A batch: every event stored (or already stored)"},
    207: {"model": Outcomes, "description": "A batch: some events rejected, the others stored"},
}


@router.post(
    LINEAGE_PATH,
    summary="Send one OpenLineage event (or a batch)",
    openapi_extra=request_body(OPENLINEAGE_EVENT),
    status_code=201,
    response_model=Stored,
    responses={
        **BATCH_ANSWERS,
        200: {"model": Stored | Outcomes, "description": "Already stored (same eventId), or a batch stored"},
        201: {"model": Stored, "description": "Stored durably"},
        400: {
            "model": ErrorBody | Outcomes,
            "description": "An invalid event (the message names each field), or a batch of only invalid ones",
        },
    },
)
async def post_lineage(request: Request) -> JSONResponse:
    """A JSON object is one event: 201 with its eventId (200 when it was stored before).
    A JSON array or an NDJSON body is a batch, answered like `/api/v1/lineage/batch`."""
    outcomes, is_batch = await _ingest(request)
    if is_batch:
        return _batch_response(outcomes)
    status, answer = _single_answer(outcomes[0])
    if status == 400:
        return JSONResponse(answer, status_code=400)
    return JSONResponse(Stored.model_validate(answer), status_code=status)


@router.post(
    BATCH_PATH,
    summary="Send many events; per-event results",
    openapi_extra=request_body(OPENLINEAGE_EVENT),
    response_model=Outcomes,
    responses={
        **BATCH_ANSWERS,
        400: {
            "model": ErrorBody | Outcomes,
            "description": "The body is unreadable, or every event is invalid",
        },
    },
)
async def post_batch(request: Request) -> JSONResponse:
    """Body: a JSON array, NDJSON, or one object. Answer: `[{index, status, eventId | error}]` with
    status 201 (stored), 200 (already stored) or 400 (rejected, with `error` naming the field)."""
    outcomes, _ = await _ingest(request)
    return _batch_response(outcomes)
