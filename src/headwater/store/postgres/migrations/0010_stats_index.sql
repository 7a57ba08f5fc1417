-- Run events by time and type, for the dashboard's counts (/api/v1/stats/lineage-events, see
-- store/stats_sql.py): a range of it answers from the index alone instead of reading every event
-- of the week. Partial: only the types the dashboard counts (its query repeats this IN list).
CREATE INDEX events_by_time_counted ON events (event_time, event_type)
    WHERE event_type IN ('FAIL', 'START', 'COMPLETE', 'ABORT');
