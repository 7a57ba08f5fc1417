"""Marquez' dashboard statistics (`/api/v1/stats/…`), as its DataOps page calls them: lists of
the typed models of `headwater.query.stats`, which the OpenAPI document shows."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from headwater.api.auth import require_read
from headwater.api.params import any_case
from headwater.api.routing import ModelRoute, errors
from headwater.query.stats import (
    IntervalMetric,
    LineageMetric,
    interval_metrics,
    lineage_metrics,
    time_zones,
)
from headwater.store.base import EventStore
from headwater.store.stats import Entity

router = APIRouter(
    prefix="/api/v1/stats",
    tags=["statistics (Marquez)"],
    dependencies=[Depends(require_read)],
    route_class=ModelRoute,
    responses=errors(401, 403),
)
Period = Annotated[
    str,
    Query(
        pattern=any_case("DAY", "WEEK", empty=False),
        description="DAY (24 hours, the last one holding now) or WEEK (7 days, the last one today)",
    ),
]


def _zones(schema: dict[str, Any]) -> None:
    """The document lists the zones the server takes (read when the document is first built)."""
    schema.pop("anyOf", None)
    schema.update(type="string", enum=sorted(time_zones()))


TimeZone = Annotated[
    str | None,
    Query(
        description="An IANA time zone whose hours and days the intervals follow; UTC when absent",
        json_schema_extra=_zones,
    ),
]


def _store(request: Request) -> EventStore:
    store: EventStore = request.app.state.store
    return store


def _entities(request: Request, entity: Entity, period: str, timezone: str | None) -> list[IntervalMetric]:
    return interval_metrics(_store(request), entity, period, timezone)


@router.get("/lineage-events", summary="Run events by type")
def lineage_events(request: Request, period: Period, timezone: TimeZone = None) -> list[LineageMetric]:
    """FAIL, START, COMPLETE and ABORT events per interval, by eventTime:
    `[{startInterval, endInterval, fail, start, complete, abort}]`, oldest first."""
    return lineage_metrics(_store(request), period, timezone)


@router.get("/jobs", summary="Jobs over time")
def jobs(request: Request, period: Period, timezone: TimeZone = None) -> list[IntervalMetric]:
    """How many jobs the model held at the end of each interval: `[{startInterval, endInterval,
    count}]`, oldest first."""
    return _entities(request, "jobs", period, timezone)


@router.get("/datasets", summary="Datasets over time")
def datasets(request: Request, period: Period, timezone: TimeZone = None) -> list[IntervalMetric]:
    """How many datasets the model held at the end of each interval, as `…/stats/jobs`."""
    return _entities(request, "datasets", period, timezone)


@router.get("/sources", summary="Sources over time")
def sources(request: Request, period: Period, timezone: TimeZone = None) -> list[IntervalMetric]:
    """How many sources the model held at the end of each interval, as `…/stats/jobs`."""
    return _entities(request, "sources", period, timezone)
