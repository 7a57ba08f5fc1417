"""POST /api/v1/lineage and /api/v1/lineage/batch: the OpenLineage HTTP transport's endpoints."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Depends, Request

from headwater.api.auth import require_write
from headwater.api.bodies import OPENLINEAGE_EVENT, request_body
from headwater.api.models import Outcomes, Stored
from headwater.api.responses import ErrorBody, JSONResponse, error_response
from headwater.api.routing import ModelRoute, errors
from headwater.config import Settings
from headwater.errors import PayloadTooLarge
from headwater.ingest import metrics
from headwater.ingest.bodies import read_documents
from headwater.ingest.service import Outcome, collector_paused, record_stored, validate_documents
from headwater.ingest.writer import GroupCommitWriter

router = APIRouter(
    tags=["ingest"],
    dependencies=[Depends(require_write)],
    route_class=ModelRoute,
    responses=errors(401, 403, 413, 415, 422, 503),
)
Validated = TypeVar("Validated")


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"body of {declared} bytes is larger than the limit of {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise PayloadTooLarge(f"body is larger than the limit of {limit} bytes")
    return bytes(body)


async def validated_body(
    request: Request, validate: Callable[[list[Any]], Validated]
) -> tuple[Validated, bool]:
    """The request's events (one, a JSON array or NDJSON; gzip), read within the size limits and
    passed to `validate`; and whether the body was a batch. Shared by every ingest route."""
    settings: Settings = request.app.state.settings
    body = await _read_body(request, settings.max_body_bytes)
    with collector_paused():
        documents, is_batch = read_documents(
            body,
            request.headers.get("content-type"),
            request.headers.get("content-encoding"),
            settings.max_body_bytes,
        )
        if len(documents) > settings.max_batch_events:
            raise PayloadTooLarge(
                f"{len(documents)} events in one request; the limit is {settings.max_batch_events}"
            )
        return validate(documents), is_batch


async def _ingest(request: Request) -> tuple[list[Outcome], bool]:
    writer: GroupCommitWriter = request.app.state.writer
    validated, is_batch = await validated_body(request, validate_documents)
    stored = await writer.append(validated.events)
    outcomes = record_stored(validated, stored)
    metrics.count_outcomes("http", outcomes)
    return outcomes, is_batch


def _batch_response(outcomes: list[Outcome]) -> JSONResponse:
    rejected = sum(1 for outcome in outcomes if not outcome.accepted)
    status = 200 if rejected == 0 else 400 if rejected == len(outcomes) else 207
    answer = Outcomes.model_validate([outcome.as_json() for outcome in outcomes])
    return JSONResponse(answer, status_code=status)


BATCH_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {"model": Outcomes, "description": "A batch: every event stored (or already stored)"},
    207: {"model": Outcomes, "description": "A batch: some events rejected, the others stored"},
}


@router.post(
    "/api/v1/lineage",
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
    outcome = outcomes[0]
    if not outcome.accepted:
        return error_response(400, "; ".join(outcome.errors), outcome.errors)
    body: dict[str, Any] = {"eventId": outcome.event_id, "status": outcome.status}
    if outcome.status == 200:
        body["duplicate"] = True
    if outcome.warnings:
        body["warnings"] = list(outcome.warnings)
    return JSONResponse(Stored.model_validate(body), status_code=outcome.status)


@router.post(
    "/api/v1/lineage/batch",
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
