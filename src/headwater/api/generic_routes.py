"""`/lineage/1/…`: generic events (FastScore style) in — one, an array, NDJSON, gzip — and the
browse API over elements, events and tags."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from headwater.api.auth import require_read, require_write
from headwater.api.bodies import GENERIC_EVENT, request_body
from headwater.api.ingest_routes import validated_body
from headwater.api.models import (
    ElementDetail,
    Elements,
    ElementTypes,
    GenericEventDetail,
    GenericEvents,
    GenericOutcomes,
    GenericStored,
    GenericTags,
    TagDetail,
)
from headwater.api.params import BrowseId, Text, Time
from headwater.api.responses import ErrorBody, JSONResponse, error_response
from headwater.api.routing import ModelRoute, errors
from headwater.ingest import metrics
from headwater.ingest.generic import record_generic_stored, validate_generic_documents
from headwater.ingest.writer import GroupCommitWriter
from headwater.query import generic
from headwater.store.generic import GenericStore, generic_store

ingest_router = APIRouter(
    tags=["generic events (FastScore)"],
    dependencies=[Depends(require_write)],
    route_class=ModelRoute,
    responses=errors(401, 403, 413, 415, 422, 503),
)
router = APIRouter(
    tags=["generic events (FastScore)"],
    dependencies=[Depends(require_read)],
    route_class=ModelRoute,
    responses=errors(401, 403),
)

_EXAMPLE_EVENT = {
    "description": "put model: churn",
    "type": "put model",
    "elements": [
        {"description": "churn", "type": "model", "tags": {"model-type": "Python3"}},
        {"description": "model-manage-1", "type": "fastscore-service"},
    ],
    "tags": {"pneumo-timestamp": "2018-12-12T21:35:21.613138Z"},
}
Limit = Annotated[int, Query(ge=1, le=generic.MAX_LIMIT, description=f"Default {generic.DEFAULT_LIMIT}")]
Offset = Annotated[int, Query(ge=0, le=2**62)]


def _store(request: Request) -> GenericStore:
    return generic_store(request.app.state.store)


@ingest_router.post(
    "/lineage/1/events",
    summary="Send one generic event (or a batch)",
    openapi_extra=request_body(GENERIC_EVENT, _EXAMPLE_EVENT),
    status_code=201,
    response_model=GenericStored,
    responses={
        200: {
            "model": GenericStored | GenericOutcomes,
            "description": "Already stored (an event with the same client `id`), or a batch stored",
        },
        201: {"model": GenericStored, "description": "Stored durably"},
        207: {"model": GenericOutcomes, "description": "A batch: some events rejected, the others stored"},
        400: {
            "model": ErrorBody | GenericOutcomes,
            "description": "An invalid event (the message names each field), or a batch of only invalid ones",
        },
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
        answer = GenericOutcomes.model_validate([outcome.as_json() for outcome in outcomes])
        return JSONResponse(answer, status_code=status)
    outcome = outcomes[0]
    if not outcome.accepted:
        return error_response(400, "; ".join(outcome.errors), outcome.errors)
    body: dict[str, Any] = {"id": outcome.id, "status": outcome.status}
    if outcome.status == 200:
        body["duplicate"] = True
    return JSONResponse(GenericStored.model_validate(body), status_code=outcome.status)


@router.get("/lineage/1/element_types", summary="Element types that have events")
def element_types(request: Request) -> ElementTypes:
    """The types of the elements named by stored events, sorted: `["engine", "model", …]`."""
    return ElementTypes.model_validate(_store(request).element_types())


@router.get("/lineage/1/elements", summary="Elements")
def list_elements(
    request: Request,
    element_type: Text = None,
    type: Text = None,
    limit: Limit = generic.DEFAULT_LIMIT,
    offset: Offset = 0,
) -> Elements:
    """Elements by id, of one `element_type` (or `type`) or all. `element_type=dataset` or `job`:
    OpenLineage datasets and jobs (description `{namespace}:{name}`), once the pipeline has
    published them."""
    kind = element_type or type
    return Elements.model_validate(generic.elements(_store(request), kind, str(limit), str(offset)))


@router.get("/lineage/1/elements/{id}", summary="One element, its events and latest tags")
def get_element(
    request: Request, id: BrowseId, limit: Limit = generic.DEFAULT_LIMIT, offset: Offset = 0
) -> ElementDetail:
    """The element's events newest first (`limit`, `offset`), and for each tag key the value of
    the most recently received event that set it. A dataset's or job's events include the run
    events of the runs that read, wrote or ran it (`type` the eventType, `timestamp` the
    eventTime)."""
    answer = generic.element(_store(request), id, str(limit), str(offset))
    return ElementDetail.model_validate(answer)


@router.get("/lineage/1/events", summary="Generic events, newest first")
def list_events(
    request: Request,
    type: Text = None,
    element: Annotated[int | None, Query(ge=1, le=2**63 - 1, description="An element's id")] = None,
    after: Time = None,
    before: Time = None,
    limit: Limit = generic.DEFAULT_LIMIT,
    offset: Offset = 0,
) -> GenericEvents:
    """Newest first; filters: `type`, `element`, `after` and `before` (received at)."""
    answer = generic.events(
        _store(request),
        event_type=type,
        element_id=str(element) if element is not None else None,
        after=after,
        before=before,
        limit=str(limit),
        offset=str(offset),
    )
    return GenericEvents.model_validate(answer)


@router.get("/lineage/1/events/{id}", summary="One generic event with its elements and tags")
def get_event(request: Request, id: BrowseId) -> GenericEventDetail:
    """The event, each element with its tags in this event, and the event's own tags."""
    return GenericEventDetail.model_validate(generic.event(_store(request), id))


@router.get("/lineage/1/tags", summary="Tags (key/value pairs)")
def list_tags(
    request: Request, key: Text = None, limit: Limit = generic.DEFAULT_LIMIT, offset: Offset = 0
) -> GenericTags:
    """Tags by id, of one `key` or all."""
    return GenericTags.model_validate(generic.tags(_store(request), key, str(limit), str(offset)))


@router.get("/lineage/1/tags/{id}", summary="One tag with the elements and events that carry it")
def get_tag(
    request: Request, id: BrowseId, limit: Limit = generic.DEFAULT_LIMIT, offset: Offset = 0
) -> TagDetail:
    """The elements that carried the tag in any event and the events that carry it (on
    themselves or on an element), newest first; each list `limit` from `offset`."""
    return TagDetail.model_validate(generic.tag(_store(request), id, str(limit), str(offset)))
