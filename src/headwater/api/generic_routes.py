"""`/lineage/1/…`: generic events (FastScore style) in — one, an array, NDJSON, gzip — and the
browse API over elements, events and tags."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from headwater.api.auth import require_read, require_write
from headwater.api.ingest_routes import _BODY_DOC, validated_body
from headwater.api.responses import JSONResponse, error_response
from headwater.ingest import metrics
from headwater.ingest.generic import record_generic_stored, validate_generic_documents
from headwater.ingest.writer import GroupCommitWriter
from headwater.query import generic
from headwater.store.generic import GenericStore, generic_store

ingest_router = APIRouter(tags=["generic events (FastScore)"], dependencies=[Depends(require_write)])
router = APIRouter(tags=["generic events (FastScore)"], dependencies=[Depends(require_read)])

_EXAMPLE_EVENT = {
    "description": "put model: churn",
    "type": "put model",
    "elements": [
        {"description": "churn", "type": "model", "tags": {"model-type": "Python3"}},
        {"description": "model-manage-1", "type": "fastscore-service"},
    ],
    "tags": {"pneumo-timestamp": "2018-12-12T21:35:21.613138Z"},
}
_POST_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {"type": "object", "description": "One generic event, or an array"},
                "example": _EXAMPLE_EVENT,
            },
            **{k: v for k, v in _BODY_DOC["requestBody"]["content"].items() if k != "application/json"},
        },
    }
}


def _store(request: Request) -> GenericStore:
    return generic_store(request.app.state.store)


@ingest_router.post(
    "/lineage/1/events",
    summary="Send one generic event (or a batch)",
    openapi_extra=_POST_DOC,
    status_code=201,
    responses={
        200: {"description": "Already stored: an event with the same client `id` was sent before"},
        201: {"description": "Stored durably", "content": {"application/json": {"example": {"id": 42}}}},
        207: {"description": "A batch in which some events were rejected (the others are stored)"},
        400: {"description": "Invalid event or malformed JSON; the message names each field"},
    },
)
async def post_generic_events(request: Request) -> JSONResponse:
    """A JSON object is one event: 201 with its `id` (200 when an event with the same client `id`
    was stored before). A JSON array or NDJSON is a batch: `[{index, status, id | error}]`, 200
    when all were stored, 207 when some were rejected, 400 when all were."""
    writer: GroupCommitWriter = request.app.state.writer
    validated, is_batch = await validated_body(request, validate_generic_documents)
    stored = await writer.append_generic(validated.events)
    outcomes = record_generic_stored(validated, stored)
    metrics.count_outcomes("http", outcomes)
    if is_batch:
        rejected = sum(1 for outcome in outcomes if not outcome.accepted)
        status = 200 if rejected == 0 else 400 if rejected == len(outcomes) else 207
        return JSONResponse([outcome.as_json() for outcome in outcomes], status_code=status)
    outcome = outcomes[0]
    if not outcome.accepted:
        return error_response(400, "; ".join(outcome.errors), outcome.errors)
    answer: dict[str, Any] = {"id": outcome.id, "status": outcome.status}
    if outcome.status == 200:
        answer["duplicate"] = True
    return JSONResponse(answer, status_code=outcome.status)


@router.get("/lineage/1/element_types", summary="Element types that have events")
def element_types(request: Request) -> JSONResponse:
    """The types of the elements named by stored events, sorted: `["engine", "model", …]`."""
    return JSONResponse(_store(request).element_types())


@router.get("/lineage/1/elements", summary="Elements")
def list_elements(
    request: Request,
    element_type: str | None = None,
    type: str | None = None,
    limit: str | None = None,
    offset: str | None = None,
) -> JSONResponse:
    """`[{id, type, description}]` by id, of one `element_type` (or `type`) or all; `limit`
    (default 100, at most 1000) from `offset`. `element_type=dataset` or `job`: OpenLineage
    datasets and jobs (description `{namespace}:{name}`), once the pipeline has published them."""
    return JSONResponse(generic.elements(_store(request), element_type or type, limit, offset))


@router.get("/lineage/1/elements/{element_id}", summary="One element, its events and latest tags")
def get_element(
    request: Request, element_id: str, limit: str | None = None, offset: str | None = None
) -> JSONResponse:
    """`{id, type, description, events: [{id, description, timestamp, type}], tags: {key: value}}`:
    the events newest first (`limit`, `offset`), and for each tag key the value of the most
    recently received event that set it. A dataset's or job's events include the run events of
    the runs that read, wrote or ran it (`type` the eventType, `timestamp` the eventTime)."""
    return JSONResponse(generic.element(_store(request), element_id, limit, offset))


@router.get("/lineage/1/events", summary="Generic events, newest first")
def list_events(
    request: Request,
    type: str | None = None,
    element: str | None = None,
    after: str | None = None,
    before: str | None = None,
    limit: str | None = None,
    offset: str | None = None,
) -> JSONResponse:
    """`[{id, description, timestamp, type}]` newest first; filters: `type`, `element` (an element
    id), `after` and `before` (received at, ISO 8601); `limit` (default 100) from `offset`."""
    answer = generic.events(
        _store(request),
        event_type=type,
        element_id=element,
        after=after,
        before=before,
        limit=limit,
        offset=offset,
    )
    return JSONResponse(answer)


@router.get("/lineage/1/events/{event_id}", summary="One generic event with its elements and tags")
def get_event(request: Request, event_id: str) -> JSONResponse:
    """`{id, description, timestamp, type, elements: [{id, type, description, tags: [{id, key,
    value}]}], tags: [{id, key, value}]}`."""
    return JSONResponse(generic.event(_store(request), event_id))


@router.get("/lineage/1/tags", summary="Tags (key/value pairs)")
def list_tags(
    request: Request, key: str | None = None, limit: str | None = None, offset: str | None = None
) -> JSONResponse:
    """`[{id, key, value}]` by id, of one `key` or all; `limit` (default 100) from `offset`."""
    return JSONResponse(generic.tags(_store(request), key, limit, offset))


@router.get("/lineage/1/tags/{tag_id}", summary="One tag with the elements and events that carry it")
def get_tag(
    request: Request, tag_id: str, limit: str | None = None, offset: str | None = None
) -> JSONResponse:
    """`{id, key, value, elements: [{id, type, description}], events: [{id, description,
    timestamp, type}]}`: the elements that carried it in any event, the events that carry it
    (on themselves or on an element), newest first; each list `limit` (default 100) from `offset`."""
    return JSONResponse(generic.tag(_store(request), tag_id, limit, offset))
