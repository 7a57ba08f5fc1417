"""GET /api/v1/events/lineage: Marquez' listing of raw events by time."""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Depends, Request

from headwater.api.auth import require_read
from headwater.api.responses import JSONResponse
from headwater.errors import BadRequest
from headwater.query.params import whole_number
from headwater.query.times import parse_time_param
from headwater.store.base import EventStore

router = APIRouter(tags=["events (Marquez)"], dependencies=[Depends(require_read)])
MAX_LIMIT = 10_000


def _events_answer(
    request: Request,
    namespace: str | None,
    before: str | None,
    after: str | None,
    sortDirection: str | None,
    limit: str | None,
    offset: str | None,
) -> JSONResponse:
    store: EventStore = request.app.state.store
    direction = (sortDirection or "desc").lower()
    if direction not in ("asc", "desc"):
        raise BadRequest(f"sortDirection: {sortDirection!r} is neither asc nor desc")
    after_time = parse_time_param("after", after)
    before_time = parse_time_param("before", before)
    size = whole_number("limit", limit, 100, 1, MAX_LIMIT)
    skip = whole_number("offset", offset, 0, 0, 2**62)
    events = store.list_events(
        after_time=after_time,
        before_time=before_time,
        descending=direction == "desc",
        limit=size,
        offset=skip,
        namespace=namespace,
    )
    total = store.count_events(after_time=after_time, before_time=before_time, namespace=namespace)
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
) -> JSONResponse:
    """Events with `after` <= eventTime <= `before` (ISO 8601), `sortDirection` desc (default) or
    asc, `limit` (default 100) from `offset`. Answer: `{events: [...], totalCount}`."""
    return _events_answer(request, None, before, after, sortDirection, limit, offset)


@router.get("/api/v1/events/{namespace:path}", summary="Raw events of one namespace")
def list_namespace_events(
    request: Request,
    namespace: str,
    before: str | None = None,
    after: str | None = None,
    sortDirection: str | None = None,
    limit: str | None = None,
    offset: str | None = None,
) -> JSONResponse:
    """Events whose job is in the namespace (a dataset event: whose dataset is), as
    /api/v1/events/lineage answers them."""
    return _events_answer(request, namespace, before, after, sortDirection, limit, offset)
