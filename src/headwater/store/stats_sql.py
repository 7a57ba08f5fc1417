"""The dashboard's counts in SQL (both backends): the `StatsReader` methods."""

from __future__ import annotations

from collections.abc import Sequence

from headwater.store.sql_reads import SqlReads
from headwater.store.stats import COUNTED_EVENT_TYPES, Entity, EventTypeCounts

_ENTITY_TABLES: dict[Entity, str] = {"jobs": "jobs", "datasets": "datasets", "sources": "sources"}


def event_counts_query(intervals: int) -> str:
    """Events by interval and type, in one range scan of the index events_by_time_counted
    (migration 0010; a partial index, so the IN list is the index's own). Parameters: the end of
    each interval, then the first start and the last end."""
    bucket = " ".join(f"WHEN event_time < ? THEN {i}" for i in range(intervals))
    types = ", ".join(f"'{t}'" for t in COUNTED_EVENT_TYPES)
    return (
        f"SELECT bucket, event_type, COUNT(*) FROM (SELECT CASE {bucket} END AS bucket, event_type "
        f"FROM events WHERE event_time >= ? AND event_time < ? AND event_type IN ({types})) AS e "
        "GROUP BY bucket, event_type"
    )


class StatsSql(SqlReads):
    """The `StatsReader` methods over the event store and the model; mixed into the SQL store."""

    def event_type_counts(self, bounds: Sequence[str]) -> list[EventTypeCounts]:
        intervals = len(bounds) - 1
        if intervals < 1:
            return []
        counts = [dict.fromkeys(COUNTED_EVENT_TYPES, 0) for _ in range(intervals)]
        with self._reading() as cur:
            cur.execute(self._sql(event_counts_query(intervals)), [*bounds[1:], bounds[0], bounds[-1]])
            for bucket, event_type, count in cur.fetchall():
                counts[int(bucket)][str(event_type)] = int(count)
        return [EventTypeCounts(c["FAIL"], c["START"], c["COMPLETE"], c["ABORT"]) for c in counts]

    def created_before(self, entity: Entity, times: Sequence[str]) -> list[int]:
        if not times:
            return []
        # One scan of the table, however many times: these tables hold entities, not events.
        sums = ", ".join("SUM(CASE WHEN created_at < ? THEN 1 ELSE 0 END)" for _ in times)
        with self._reading() as cur:
            cur.execute(self._sql(f"SELECT {sums} FROM {_ENTITY_TABLES[entity]}"), list(times))
            row = cur.fetchone()
        return [int(value or 0) for value in row] if row else [0] * len(times)
