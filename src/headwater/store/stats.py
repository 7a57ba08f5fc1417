"""What the operations dashboard reads (Marquez' /api/v1/stats): run events by type per interval,
and how many jobs, datasets and sources the model held by given times."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

# The event types Marquez' dashboard counts (RUNNING and OTHER are not shown).
COUNTED_EVENT_TYPES = ("FAIL", "START", "COMPLETE", "ABORT")
Entity = Literal["jobs", "datasets", "sources"]


@dataclass(frozen=True, slots=True)
class EventTypeCounts:
    """Run events of one interval by type."""

    fail: int = 0
    start: int = 0
    complete: int = 0
    abort: int = 0


class StatsReader(ABC):
    """The dashboard's reads. Times are the store's fixed-width UTC text."""

    @abstractmethod
    def event_type_counts(self, bounds: Sequence[str]) -> list[EventTypeCounts]:
        """For each interval `[bounds[i], bounds[i + 1])` (increasing bounds), the events whose
        eventTime lies in it, by type: one entry per interval."""

    @abstractmethod
    def created_before(self, entity: Entity, times: Sequence[str]) -> list[int]:
        """For each time, how many jobs, datasets or sources of the model were created before it."""
