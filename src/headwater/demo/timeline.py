"""When the demo's events happen and arrive: the calendar of the history (first day, daily schedule),
event times as OpenLineage writes them, and the delivery of a day's events in arrival order, a few
late and a few twice."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

Event = dict[str, Any]

# Rates of the delivery (per event).
LATE_RATE = 0.03
DUPLICATE_RATE = 0.01

START_MS = int(datetime(2025, 3, 3, tzinfo=UTC).timestamp()) * 1000
DAY_MS = 86_400_000
SCHEDULE_MS = 2 * 3_600_000  # pipelines are scheduled at 02:00 UTC
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso_time(ms: int) -> str:
    moment = _EPOCH + timedelta(milliseconds=ms)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


class Timed(NamedTuple):
    ms: int
    seq: int
    event: Event
    run: str  # runId, "" for static events
    kind: str  # eventType, "" for static events


def deliver(timeline: list[Timed], rng: random.Random, day: int) -> list[Event]:
    """Event-time order → arrival order: a few events late, a few twice."""
    n = len(timeline)
    last: dict[str, int] = {}
    for i, item in enumerate(timeline):
        if item.run:
            last[item.run] = i
    late = int(LATE_RATE * n + rng.random())
    # Late events arrive a few places late, or (half of the STARTs and RUNNINGs) after their
    # run's end. On the first day one RUNNING and one START surely do, so even a small demo
    # has both.
    wanted = []
    if day == 0:
        for kind in ("RUNNING", "START"):
            found = [i for i, t in enumerate(timeline) if t.kind == kind and last[t.run] > i]
            if found:
                wanted.append(rng.choice(found))
    others = [i for i in range(n) if i not in wanted]
    picks = wanted + rng.sample(others, min(len(others), max(0, late - len(wanted))))
    keys = [float(i) for i in range(n)]
    for i in picks:
        item = timeline[i]
        end = last.get(item.run, i)
        if item.kind in ("START", "RUNNING") and end > i and (i in wanted or rng.random() < 0.5):
            keys[i] = end + rng.uniform(0.1, 3.0)
        else:
            keys[i] = i + rng.uniform(1.5, 12.0)
    arrived = [timeline[i].event for i in sorted(range(n), key=keys.__getitem__)]
    twice = int(DUPLICATE_RATE * n + rng.random())
    if day == 0:
        twice = max(twice, 1)
    for i in sorted(rng.sample(range(len(arrived)), min(twice, len(arrived))), reverse=True):
        arrived.insert(min(len(arrived), i + 1 + rng.randrange(4)), dict(arrived[i]))
    return arrived
