-- The event store: every accepted event, in ingest order.
CREATE TABLE events (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id          TEXT NOT NULL UNIQUE,
    kind              TEXT NOT NULL,
    run_id            TEXT,
    parent_run_id     TEXT,
    root_run_id       TEXT,
    event_type        TEXT,
    event_time        TEXT NOT NULL,
    job_namespace     TEXT,
    job_name          TEXT,
    dataset_namespace TEXT,
    dataset_name      TEXT,
    producer          TEXT NOT NULL,
    received_at       TEXT NOT NULL,
    content_hash      TEXT NOT NULL,
    untrusted_facets  TEXT,
    payload           TEXT NOT NULL
);
CREATE INDEX events_by_run ON events (run_id, event_time, event_id);
CREATE INDEX events_by_parent_run ON events (parent_run_id, event_time, event_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX events_by_root_run ON events (root_run_id, event_time, event_id);
CREATE INDEX events_by_time ON events (event_time, seq);
CREATE INDEX events_by_job ON events (job_namespace, job_name, event_time) WHERE job_name IS NOT NULL;
