-- A job's runs newest first (store/sql.py: latestRuns of a job answer, the runs page of a job):
-- the order of those reads, so the newest few are read from the index instead of sorting every
-- run of the job. The expression is the one the queries order by.
CREATE INDEX runs_by_job_newest ON runs (job_node_id, (COALESCE(started_at, first_event_time)), run_id);
