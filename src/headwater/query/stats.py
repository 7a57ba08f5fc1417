"""The statistics of Marquez' DataOps dashboard (`/api/v1/stats/…`): run events by type, and the
jobs, datasets and sources of the model, per hour over the last day or per day over the last
week, in the caller's time zone.

Shapes and semantics follow Marquez (api/…/StatsResource.java, StatsDao.java): a DAY answer has
24 hourly intervals, the last one holding now; a WEEK answer has 7 calendar days of the time zone,
the last one today. Events count by eventTime. A job, dataset or source `count` is how many the
model held at the interval's end (a running total, as Marquez sums its creations), by their
creation time, the eventTime of the first event naming them. A DAY interval is written as the UTC
instants it spans; a WEEK interval as Marquez writes it, the day's date at 00:00 with `Z` (its web
UI labels those days in UTC).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Literal
from zoneinfo import ZoneInfo, available_timezones

from pydantic import Field

from headwater.errors import BadRequest
from headwater.events.times import TICKS_PER_SECOND, format_ticks
from headwater.query.catalog_models import Answer, Time
from headwater.query.params import choice
from headwater.store.base import EventStore
from headwater.store.stats import Entity

Period = Literal["DAY", "WEEK"]
PERIODS: tuple[Period, ...] = ("DAY", "WEEK")
_HOURS_IN_A_DAY = 24
_DAYS_IN_A_WEEK = 7


class LineageMetric(Answer):
    """Run events of one interval by type (Marquez' LineageMetric)."""

    startInterval: Time
    endInterval: Time
    fail: int = Field(ge=0)
    start: int = Field(ge=0)
    complete: int = Field(ge=0)
    abort: int = Field(ge=0)


class IntervalMetric(Answer):
    """Jobs, datasets or sources of the model at the end of one interval (Marquez' IntervalMetric)."""

    startInterval: Time
    endInterval: Time
    count: int = Field(ge=0, description="How many the model held at the interval's end")


@dataclass(frozen=True, slots=True)
class Interval:
    """`[start, end)` as instants, and as the answer writes them."""

    start: datetime
    end: datetime
    shown_start: str
    shown_end: str


def parse_period(value: str | None) -> Period:
    """DAY or WEEK (any case); a 400 naming `period` otherwise."""
    if value is None or value == "":
        raise BadRequest("period: required, DAY or WEEK")
    return "DAY" if choice("period", value, "", PERIODS) == "DAY" else "WEEK"


@functools.cache
def time_zones() -> frozenset[str]:
    """The IANA time zones this machine knows (its tz database, else the tzdata package); not
    `localtime`, which names the server's own."""
    return frozenset(available_timezones() - {"localtime"})


def parse_timezone(value: str | None) -> tzinfo:
    """An IANA time zone (`Europe/Paris`); UTC when absent (which needs no tz database); a 400
    naming `timezone` otherwise."""
    if value is None:
        return UTC
    if value not in time_zones():
        raise BadRequest(f"timezone: {value!r} is not an IANA time zone (such as Europe/Paris)")
    return ZoneInfo(value)


def _instant(moment: datetime) -> str:
    """An instant as Marquez writes one (ISO 8601 in UTC, `Z`, no fraction at whole seconds)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _midnight(day: date, zone: tzinfo) -> datetime:
    return datetime.combine(day, time(0), tzinfo=zone).astimezone(UTC)


def intervals(period: Period, zone: tzinfo, now: datetime) -> list[Interval]:
    """The hours of the last day (the last one holding `now`, hours starting at the zone's whole
    hours) or the calendar days of the last week in `zone` (the last one today), oldest first."""
    local = now.astimezone(zone)
    if period == "DAY":
        this_hour = local.replace(minute=0, second=0, microsecond=0).astimezone(UTC)
        starts = [this_hour - timedelta(hours=n) for n in range(_HOURS_IN_A_DAY - 1, -1, -1)]
        hour = timedelta(hours=1)
        return [Interval(s, s + hour, _instant(s), _instant(s + hour)) for s in starts]
    days = [local.date() - timedelta(days=n) for n in range(_DAYS_IN_A_WEEK - 1, -1, -1)]
    next_day = timedelta(days=1)
    return [
        Interval(
            _midnight(day, zone),
            _midnight(day + next_day, zone),
            f"{day.isoformat()}T00:00:00Z",
            f"{(day + next_day).isoformat()}T00:00:00Z",
        )
        for day in days
    ]


def _stored(moment: datetime) -> str:
    """An instant in the store's fixed-width UTC form."""
    seconds = int(moment.astimezone(UTC).timestamp())
    return format_ticks(seconds * TICKS_PER_SECOND + moment.microsecond * 10)


def _bounds(spans: Sequence[Interval]) -> list[str]:
    return [_stored(span.start) for span in spans] + [_stored(spans[-1].end)]


def lineage_metrics(
    store: EventStore, period: str | None, timezone: str | None, *, now: datetime | None = None
) -> list[LineageMetric]:
    """`GET /api/v1/stats/lineage-events`: FAIL, START, COMPLETE and ABORT events per interval."""
    spans = intervals(parse_period(period), parse_timezone(timezone), now or datetime.now(UTC))
    counts = store.event_type_counts(_bounds(spans))
    return [
        LineageMetric(
            startInterval=span.shown_start,
            endInterval=span.shown_end,
            fail=c.fail,
            start=c.start,
            complete=c.complete,
            abort=c.abort,
        )
        for span, c in zip(spans, counts, strict=True)
    ]


def interval_metrics(
    store: EventStore,
    entity: Entity,
    period: str | None,
    timezone: str | None,
    *,
    now: datetime | None = None,
) -> list[IntervalMetric]:
    """`GET /api/v1/stats/{jobs|datasets|sources}`: how many the model held at each interval's end."""
    spans = intervals(parse_period(period), parse_timezone(timezone), now or datetime.now(UTC))
    totals = store.created_before(entity, [_stored(span.end) for span in spans])
    return [
        IntervalMetric(startInterval=span.shown_start, endInterval=span.shown_end, count=total)
        for span, total in zip(spans, totals, strict=True)
    ]
