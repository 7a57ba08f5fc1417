-- The merge recounts the job and dataset versions a batch touched: a job version's first and
-- last start, a dataset version's first write. Without these, each recount read every run of
-- the version, so a merge's cost grew with the store's history (a 1,000-event batch on a
-- 420,000-event store: 0.6 s in the two recounts, bench/soak.py); with them, MIN, MAX and the
-- first write are one index seek each, and the run count reads the index alone.
CREATE INDEX runs_by_version_start ON runs (job_version, (COALESCE(started_at, first_event_time)));
DROP INDEX runs_by_version;
CREATE INDEX dataset_version_runs_by_time ON dataset_version_runs (version_id, event_time, event_seq);
