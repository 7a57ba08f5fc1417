"""The SQL that reads events for the pipeline: a seq range, the earlier events of the runs a range
touches, and the events a condition picks (retention's refresh). Each query selects
`EVENT_COLUMNS`, the stored row the pipeline's compactor turns into Spark's compact rows; the
pipeline's readers run them on a connection of their own (`connections.connect`) and never
write SQL over `events` themselves.
"""

from __future__ import annotations

from typing import Any

from headwater.store.model.connections import in_subquery, placeholders

EVENT_COLUMNS = (
    "seq",
    "kind",
    "run_id",
    "parent_run_id",
    "root_run_id",
    "event_type",
    "event_time",
    "job_namespace",
    "job_name",
    "dataset_namespace",
    "dataset_name",
    "untrusted_facets",
    "payload",
    "core",  # the packed core since migration 0018 (then payload is empty)
    "facet_count",  # how many facets the core refers to; NULL: the payload is kept whole
)
_SELECT = "SELECT " + ", ".join(f"e.{c}" for c in EVENT_COLUMNS) + " FROM events e"


def events_where(condition: str) -> str:
    """The query of the events `e` that `condition` (SQL over `events e`) picks."""
    return f"{_SELECT} WHERE {condition}"


def read_range(cursor: Any, url: str, low: int, high: int) -> None:
    """Run, on `cursor`, the query of the events with low < seq <= high."""
    cursor.execute(placeholders(url, events_where("e.seq > ? AND e.seq <= ?")), (low, high))


def read_earlier(cursor: Any, url: str, low: int, part_low: int, part_high: int) -> None:
    """Run, on `cursor`, the query of the events with seq <= `low` of the runs that have an event
    in (part_low, part_high] and none in (low, part_low]: a run's earlier events, so run-scoped
    rows are recomputed from all of a run's events. A batch (low, high] split into parts reads
    each run's earlier events once, from the part holding the run's first new event."""
    runs = (
        "SELECT n.run_id FROM events n WHERE n.seq > ? AND n.seq <= ? AND n.run_id IS NOT NULL"
        " AND NOT EXISTS (SELECT 1 FROM events p WHERE p.run_id = n.run_id AND p.seq > ? AND p.seq <= ?)"
    )
    query = events_where(f"e.seq <= ? AND {in_subquery(url, 'e.run_id', runs)}")
    cursor.execute(placeholders(url, query), (low, part_low, part_high, low, part_low))
