"""GET /api/v1/events/lineage: Marquez' listing of raw events by time, with Headwater's optional
filters (namespace, job, eventType) that Marquez clients never send."""

from __future__ import annotations

from typing import Annotated, Literal

import orjson
from fastapi import APIRouter, Depends, Query, Request
from pydantic import Field

from headwater.api.auth import require_read
from headwater.api.models import LineageEvents
from headwater.api.params import Name, Offset, Text, Time, any_case_list
from headwater.api.routing import ModelRoute, errors
from headwater.errors import BadRequest
from headwater.events.model import EVENT_TYPES
from headwater.query.times import parse_time_param
from headwater.store.base import EventStore

router = APIRouter(
    tags=["events (Marquez)"],
    dependencies=[Depends(require_read)],
    route_class=ModelRoute,
    responses=errors(401, 403),
)
MAX_LIMIT = 10_000
_TYPE_ORDER = ("START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER")
EventTypes = Annotated[
    list[Annotated[str, Field(pattern=any_case_list(*_TYPE_ORDER, empty=True))]],
    Query(
        description="Repeatable or comma-separated, any case: START, RUNNING, COMPLETE, FAIL, ABORT, OTHER"
    ),
]
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Default 100")]
Direction = Annotated[Literal["asc", "desc"], Query(description="By eventTime; default desc")]


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
    direction: str,
    limit: int,
    offset: int,
    job: str | None,
    event_type: list[str],
) -> LineageEvents:
    store: EventStore = request.app.state.store
    after_time = parse_time_param("after", after)
    before_time = parse_time_param("before", before)
    event_types = parse_event_types(event_type)
    ns, job_name = namespace or None, job or None
    events = store.list_events(
        after_time=after_time,
        before_time=before_time,
        descending=direction == "desc",
        limit=limit,
        offset=offset,
        namespace=ns,
        job=job_name,
        event_types=event_types,
    )
    total = store.count_events(
        after_time=after_time, before_time=before_time, namespace=ns, job=job_name, event_types=event_types
    )
    return LineageEvents(events=[orjson.Fragment(e.payload) for e in events], totalCount=total)


@router.get("/api/v1/events/lineage", summary="Raw events by eventTime")
@router.get("/api/v1/events", summary="Raw events by eventTime (marquez-python's list_events)")
def list_lineage_events(
    request: Request,
    before: Time = None,
    after: Time = None,
    sortDirection: Direction = "desc",
    limit: Limit = 100,
    offset: Offset = 0,
    namespace: Text = None,
    job: Text = None,
    eventType: EventTypes = [],  # noqa: B006 - FastAPI copies it
) -> LineageEvents:
    """Events with `after` <= eventTime <= `before`, newest first unless `sortDirection=asc`.
    Headwater's optional filters: `namespace` (the job's, or a dataset event's dataset's), `job`
    (a job name), `eventType` (only run events have one)."""
    return _events_answer(request, namespace, before, after, sortDirection, limit, offset, job, eventType)


@router.get("/api/v1/events/{namespace:names}", summary="Raw events of one namespace")
def list_namespace_events(
    request: Request,
    namespace: Name,
    before: Time = None,
    after: Time = None,
    sortDirection: Direction = "desc",
    limit: Limit = 100,
    offset: Offset = 0,
    job: Text = None,
    eventType: EventTypes = [],  # noqa: B006
) -> LineageEvents:
    """Events whose job is in the namespace (a dataset event: whose dataset is), as
    /api/v1/events/lineage answers them, with its `job` and `eventType` filters."""
    return _events_answer(request, namespace, before, after, sortDirection, limit, offset, job, eventType)
