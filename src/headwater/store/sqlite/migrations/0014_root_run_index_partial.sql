-- A run tree's events by their root run, for the events the other two keys of a tree do not
-- find: those whose root is neither their own run nor their parent (grandchildren and below).
-- The root is the run itself when an event has no parent, and the parent when the parent facet
-- names no other root, which is most events: every insert paid for this index, and it held
-- 130 bytes of every event (bench/ingest.py). store/sql.py asks it with the same condition.
DROP INDEX events_by_root_run;
CREATE INDEX events_by_root_run ON events (root_run_id, event_time, event_id)
    WHERE root_run_id <> run_id AND root_run_id <> parent_run_id;
