"""GET /api/v1/events/lineage: Marquez' listing of raw events by time, with Headwater's optional
filters (namespace, job, eventType) that Marquez clients never send."""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Depends, Query, Request

from headwater.api.auth import require_read
from headwater.api.responses import JSONResponse
from headwater.errors import BadRequest
from headwater.events.model import EVENT_TYPES
from headwater.query.params import whole_number
from headwater.query.times import parse_time_param
from headwater.store.base import EventStore

router = APIRouter(tags=["events (Marquez)"], dependencies=[Depends(require_read)])
MAX_LIMIT = 10_000
_TYPE_ORDER = ("START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER")


def parse_event_types(values: list[str]) -> list[str]:
    """`eventType` values (repeatable or comma-separated, any case) as stored, each once."""
    wanted: list[str] = []
    for value in values:
        for part in value.split(","):
            name = part.strip().upper()
            if not name:
                continue
            if name not in EVENT_TYPES:
                raise BadRequest(f"eventType: {part.strip()!r} is none of {', '.join(_TYPE_ORDER)}")
            if name not in wanted:
                wanted.append(name)
    return wanted


def _events_answer(
    request: Request,
    namespace: str | None,
    before: str | None,
    after: str | None,
    sortDirection: str | None,
    limit: str | None,
    offset: str | None,
    job: str | None,
    event_type: list[str],
) -> JSONResponse:
    store: EventStore = request.app.state.store
    direction = (sortDirection or "desc").lower()
    if direction not in ("asc", "desc"):
        raise BadRequest(f"sortDirection: {sortDirection!r} is neither asc nor desc")
    after_time = parse_time_param("after", after)
    before_time = parse_time_param("before", before)
    size = whole_number("limit", limit, 100, 1, MAX_LIMIT)
    skip = whole_number("offset", offset, 0, 0, 2**62)
    event_types = parse_event_types(event_type)
    ns, job_name = namespace or None, job or None
    events = store.list_events(
        after_time=after_time,
        before_time=before_time,
        descending=direction == "desc",
        limit=size,
        offset=skip,
        namespace=ns,
        job=job_name,
        event_types=event_types,
    )
    total = store.count_events(
        after_time=after_time, before_time=before_time, namespace=ns, job=job_name, event_types=event_types
    )
    return JSONResponse({"events": [orjson.Fragment(e.payload) for e in events], "totalCount": total})


@router.get("/api/v1/events/lineage", summary="Raw events by eventTime")
@router.get("/api/v1/events", summary="Raw events by eventTime (marquez-python's list_events)")
def list_lineage_events(
    request: Request,
    before: str | None = None,
    after: str | None = None,
    sortDirection: str | None = None,
    limit: str | None = None,
    offset: str | None = None,
    namespace: str | None = None,
    job: str | None = None,
    eventType: list[str] = Query(default=[]),  # noqa: B008
) -> JSONResponse:
    """Events with `after` <= eventTime <= `before` (ISO 8601), `sortDirection` desc (default) or
    asc, `limit` (default 100) from `offset`. Answer: `{events: [...], totalCount}`. Headwater's
    optional filters: `namespace` (the job's, or a dataset event's dataset's), `job` (a job name),
    `eventType` (repeatable or comma-separated: START, RUNNING, COMPLETE, FAIL, ABORT, OTHER; only
    run events have one)."""
    return _events_answer(request, namespace, before, after, sortDirection, limit, offset, job, eventType)


@router.get("/api/v1/events/{namespace:path}", summary="Raw events of one namespace")
def list_namespace_events(
    request: Request,
    namespace: str,
    before: str | None = None,
    after: str | None = None,
    sortDirection: str | None = None,
    limit: str | None = None,
    offset: str | None = None,
    job: str | None = None,
    eventType: list[str] = Query(default=[]),  # noqa: B008
) -> JSONResponse:
    """Events whose job is in the namespace (a dataset event: whose dataset is), as
    /api/v1/events/lineage answers them, with its `job` and `eventType` filters."""
    return _events_answer(request, namespace, before, after, sortDirection, limit, offset, job, eventType)
