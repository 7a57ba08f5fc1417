"""Atlas' OpenLineage run-events API: same paths and envelope, real HTTP statuses on errors."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Query, Request
from pydantic import WithJsonSchema

from headwater.api.auth import require_read
from headwater.api.models import AtlasEvent, AtlasRunEvents, Health
from headwater.api.params import Name, RunId
from headwater.api.responses import ErrorBody, JSONResponse
from headwater.api.routing import ModelRoute, errors
from headwater.errors import HeadwaterError
from headwater.query.catalog import run_event as find_run_event
from headwater.query.run_events import MAX_PAGE_SIZE, parse_page_size, parse_run_id, read_run_events
from headwater.query.times import display_time
from headwater.store.base import EventStore, StoredEvent

PREFIX = "/api/atlas/v2/openlineage"
router = APIRouter(prefix=PREFIX, tags=["run events (Atlas)"], route_class=ModelRoute)
# Errors come in Atlas' envelope (`success: false`), a malformed includeChildren in the error envelope.
_ENVELOPE_ERRORS: dict[int | str, dict[str, Any]] = {
    **errors(401, 403),
    400: {"model": AtlasRunEvents | ErrorBody, "description": "A parameter is invalid; `message` says which"},
    404: {"model": AtlasRunEvents, "description": "No such run (no event of it), or no such event of it"},
}
PageSize = Annotated[
    str | None,
    Query(description="Events per page (default 25)"),
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE}),
]


def _event(event: StoredEvent) -> AtlasEvent:
    return AtlasEvent(
        eventId=event.event_id,
        source=event.producer,
        jobName=event.job_name,
        runId=event.run_id,
        eventTime=display_time(event.event_time),
        event=orjson.Fragment(event.payload),
        status=event.event_type,
    )


def _envelope(
    *,
    run_id: str | None,
    events: list[StoredEvent],
    page_size: int | None,
    next_state: str | None = None,
    error: HeadwaterError | None = None,
) -> JSONResponse:
    body = AtlasRunEvents(
        success=error is None,
        message="OK" if error is None else error.message,
        error=None if error is None else type(error).__name__,
        runId=run_id,
        eventCount=len(events),
        events=[_event(event) for event in events],
        pageSize=page_size,
        nextPagingState=next_state,
    )
    return JSONResponse(body, status_code=200 if error is None else error.status)


@router.get(
    "/runs/{runId:name}/events/{eventId:name}",
    dependencies=[Depends(require_read)],
    summary="One event",
    response_model=AtlasRunEvents,
    responses=_ENVELOPE_ERRORS,
)
def run_event(request: Request, runId: RunId, eventId: Name) -> JSONResponse:
    """One event of the run (or of a run whose parent or root it is). Run ids that are not UUIDs
    are percent-encoded (`a%2Fb` for `a/b`)."""
    store: EventStore = request.app.state.store
    try:
        event = find_run_event(store, runId, eventId)
    except HeadwaterError as exc:
        return _envelope(run_id=runId, events=[], page_size=None, error=exc)
    return _envelope(run_id=parse_run_id(runId), events=[event], page_size=1)


@router.get(
    "/runs/{runId:name}",
    dependencies=[Depends(require_read)],
    summary="A run's events, newest first",
    response_model=AtlasRunEvents,
    responses=_ENVELOPE_ERRORS,
)
def run_events(
    request: Request,
    runId: RunId,
    pageSize: PageSize = None,
    pagingState: str | None = None,
    includeChildren: bool = False,
) -> JSONResponse:
    """Events of the run newest first (eventTime, then eventId), `pageSize` at a time. Pass back
    `nextPagingState` as `pagingState` for the next page; it is null on the last (a `pagingState`
    the server did not return for this run and query is a 400).
    `includeChildren=true` adds the events of runs whose parent or root is this run."""
    store: EventStore = request.app.state.store
    try:
        run_id = parse_run_id(runId)
        size = parse_page_size(pageSize)
        page = read_run_events(
            store, run_id, page_size=size, paging_state=pagingState, include_children=includeChildren
        )
    except HeadwaterError as exc:
        return _envelope(run_id=runId, events=[], page_size=None, error=exc)
    return _envelope(run_id=run_id, events=page.events, page_size=size, next_state=page.next_paging_state)


@router.get(
    "/health",
    summary="Whether the event store answers",
    response_model=Health,
    responses={503: {"model": Health, "description": "The event store cannot be reached"}},
)
def health(request: Request) -> JSONResponse:
    store: EventStore = request.app.state.store
    try:
        store.ping()
    except Exception as exc:
        message = exc.message if isinstance(exc, HeadwaterError) else str(exc)
        failed = Health(
            success=False, message=f"event store unreachable: {message}", error="StoreUnavailable"
        )
        return JSONResponse(failed, status_code=503)
    return JSONResponse(Health(success=True, message="OK", error=None, store=store.backend))
