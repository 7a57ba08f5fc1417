"""Atlas' OpenLineage run-events API: same paths and envelope, real HTTP statuses on errors."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Depends, Request

from headwater.api.auth import require_read
from headwater.api.responses import JSONResponse
from headwater.errors import HeadwaterError, NotFound
from headwater.query.run_events import parse_page_size, parse_run_id, read_run_events
from headwater.query.times import display_time
from headwater.store.base import EventStore, StoredEvent

PREFIX = "/api/atlas/v2/openlineage"
router = APIRouter(prefix=PREFIX, tags=["run events (Atlas)"])


def _event_json(event: StoredEvent) -> dict[str, Any]:
    return {
        "eventId": event.event_id,
        "source": event.producer,
        "jobName": event.job_name,
        "runId": event.run_id,
        "eventTime": display_time(event.event_time),
        "event": orjson.Fragment(event.payload),
        "status": event.event_type,
    }


def _envelope(
    *,
    run_id: str | None,
    events: list[StoredEvent],
    page_size: int | None,
    next_state: str | None = None,
    error: HeadwaterError | None = None,
) -> JSONResponse:
    body = {
        "success": error is None,
        "message": "OK" if error is None else error.message,
        "error": None if error is None else type(error).__name__,
        "runId": run_id,
        "eventCount": len(events),
        "events": [_event_json(event) for event in events],
        "pageSize": page_size,
        "nextPagingState": next_state,
    }
    return JSONResponse(body, status_code=200 if error is None else error.status)


@router.get("/runs/{runId}/events/{eventId}", dependencies=[Depends(require_read)], summary="One event")
def run_event(request: Request, runId: str, eventId: str) -> JSONResponse:
    store: EventStore = request.app.state.store
    try:
        run_id = parse_run_id(runId)
        event = store.get_event(eventId.lower())
        if event is None or run_id not in (event.run_id, event.parent_run_id, event.root_run_id):
            raise NotFound(f"event {eventId} of run {run_id} not found")
    except HeadwaterError as exc:
        return _envelope(run_id=runId, events=[], page_size=None, error=exc)
    return _envelope(run_id=run_id, events=[event], page_size=1)


# `{runId:path}`: a run id may hold (encoded) slashes; declared after the single-event route.
@router.get(
    "/runs/{runId:path}", dependencies=[Depends(require_read)], summary="A run's events, newest first"
)
def run_events(
    request: Request,
    runId: str,
    pageSize: str | None = None,
    pagingState: str | None = None,
    includeChildren: bool = False,
) -> JSONResponse:
    """Events of the run newest first (eventTime, then eventId), `pageSize` at a time (default 25,
    at most 1000). Pass back `nextPagingState` as `pagingState` for the next page; it is null on
    the last. `includeChildren=true` adds the events of runs whose parent or root is this run."""
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


@router.get("/health", summary="Whether the event store answers")
def health(request: Request) -> JSONResponse:
    store: EventStore = request.app.state.store
    try:
        store.ping()
    except Exception as exc:
        message = exc.message if isinstance(exc, HeadwaterError) else str(exc)
        return JSONResponse(
            {"success": False, "message": f"event store unreachable: {message}", "error": "StoreUnavailable"},
            status_code=503,
        )
    return JSONResponse({"success": True, "message": "OK", "error": None, "store": store.backend})
