-- A run's events by its run id alone, and its children's by their parent's (issue 13, store size).
-- Keyed by (run id, event time, eventId), these two held 414 bytes of every event on PostgreSQL
-- (bench/ingest.py, 100,000 events): 111-byte entries in pages about 58% full, since run ids are
-- random and each run's events arrive together. Keyed by the id alone, B-tree deduplication keeps
-- each id once per page with the list of its rows: 27 bytes an event for the two. A run page then
-- reads the run's events whole and sorts them (store/postgres/store.py: `run_page`), about 2 µs
-- an event of the run (1.8 ms for the bench's largest, 792 events) instead of an index range.
-- SQLite's indexes keep their order (its migration 0017 is empty).
DROP INDEX events_by_run;
CREATE INDEX events_by_run ON events (run_id);
DROP INDEX events_by_parent_run;
CREATE INDEX events_by_parent_run ON events (parent_run_id) WHERE parent_run_id IS NOT NULL;
