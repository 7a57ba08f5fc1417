-- The lineage model the Spark pipeline publishes (see docs/pipeline.md), its checkpoint, and the
-- staging tables its executors fill before one transaction merges them into the model.
-- Times are fixed-width UTC text (like events.event_time); node ids follow the shared format.
CREATE TABLE pipeline_state (
    name             TEXT PRIMARY KEY,
    checkpoint       BIGINT NOT NULL,
    graph_checkpoint BIGINT NOT NULL,
    batches          BIGINT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE TABLE namespaces (
    name       TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE sources (
    name       TEXT PRIMARY KEY,
    uri        TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    set_time   TEXT NOT NULL,
    set_seq    BIGINT NOT NULL
);
CREATE TABLE datasets (
    node_id         TEXT PRIMARY KEY,
    namespace       TEXT NOT NULL,
    name            TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    source_name     TEXT,
    source_time     TEXT,
    source_seq      BIGINT,
    current_version TEXT,
    version_time    TEXT,
    version_seq     BIGINT
);
CREATE INDEX datasets_by_namespace ON datasets (namespace, name);
CREATE TABLE facet_values (
    hash  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE dataset_facets (
    node_id    TEXT NOT NULL,
    name       TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    value_hash TEXT,
    deleted    INTEGER NOT NULL,
    PRIMARY KEY (node_id, name, valid_from, seq)
);
CREATE TABLE job_facets (
    node_id    TEXT NOT NULL,
    name       TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    value_hash TEXT,
    deleted    INTEGER NOT NULL,
    PRIMARY KEY (node_id, name, valid_from, seq)
);
CREATE TABLE schema_fields (
    schema_hash TEXT NOT NULL,
    path        TEXT NOT NULL,
    position    INTEGER NOT NULL,
    type        TEXT,
    description TEXT,
    PRIMARY KEY (schema_hash, path)
);
CREATE TABLE column_lineage (
    facet_hash     TEXT NOT NULL,
    field          TEXT NOT NULL,
    input_node_id  TEXT NOT NULL,
    input_field    TEXT NOT NULL,
    type           TEXT NOT NULL,
    subtype        TEXT NOT NULL,
    description    TEXT,
    masking        INTEGER,
    PRIMARY KEY (facet_hash, field, input_node_id, input_field, type, subtype)
);
CREATE TABLE dataset_symlinks (
    node_id       TEXT NOT NULL,
    alias_node_id TEXT NOT NULL,
    type          TEXT NOT NULL,
    PRIMARY KEY (node_id, alias_node_id)
);
CREATE TABLE dataset_versions (
    version_id     TEXT PRIMARY KEY,
    node_id        TEXT NOT NULL,
    schema_hash    TEXT,
    version_label  TEXT,
    lifecycle      TEXT,
    created_at     TEXT NOT NULL,
    created_seq    BIGINT NOT NULL,
    created_by_run TEXT NOT NULL
);
CREATE INDEX dataset_versions_by_dataset ON dataset_versions (node_id, created_at);
CREATE TABLE dataset_version_runs (
    version_id TEXT NOT NULL,
    run_id     TEXT NOT NULL,
    event_time TEXT NOT NULL,
    event_seq  BIGINT NOT NULL,
    PRIMARY KEY (version_id, run_id)
);
CREATE INDEX dataset_version_runs_by_run ON dataset_version_runs (run_id);
CREATE TABLE jobs (
    node_id         TEXT PRIMARY KEY,
    namespace       TEXT NOT NULL,
    name            TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    current_version TEXT,
    latest_run_id   TEXT,
    latest_run_time TEXT
);
CREATE INDEX jobs_by_namespace ON jobs (namespace, name);
CREATE TABLE job_parents (
    parent_node_id TEXT NOT NULL,
    child_node_id  TEXT NOT NULL,
    PRIMARY KEY (parent_node_id, child_node_id)
);
CREATE TABLE job_versions (
    version_id           TEXT PRIMARY KEY,
    node_id              TEXT NOT NULL,
    source_code_location TEXT,
    sql                  TEXT,
    created_at           TEXT,
    updated_at           TEXT,
    run_count            BIGINT NOT NULL
);
CREATE INDEX job_versions_by_job ON job_versions (node_id, created_at);
CREATE TABLE job_version_io (
    version_id TEXT NOT NULL,
    direction  TEXT NOT NULL,
    node_id    TEXT NOT NULL,
    PRIMARY KEY (version_id, direction, node_id)
);
CREATE TABLE runs (
    run_id           TEXT PRIMARY KEY,
    job_node_id      TEXT NOT NULL,
    state            TEXT NOT NULL,
    state_time       TEXT NOT NULL,
    started_at       TEXT,
    ended_at         TEXT,
    duration_ms      BIGINT,
    nominal_start    TEXT,
    nominal_end      TEXT,
    parent_run_id    TEXT,
    root_run_id      TEXT,
    job_version      TEXT,
    first_event_time TEXT NOT NULL,
    last_event_time  TEXT NOT NULL,
    event_count      BIGINT NOT NULL,
    updated_seq      BIGINT NOT NULL
);
CREATE INDEX runs_by_job ON runs (job_node_id, first_event_time);
CREATE INDEX runs_by_parent ON runs (parent_run_id);
CREATE INDEX runs_by_version ON runs (job_version);
CREATE TABLE run_facets (
    run_id     TEXT NOT NULL,
    name       TEXT NOT NULL,
    value_hash TEXT NOT NULL,
    event_time TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE run_io (
    run_id     TEXT NOT NULL,
    direction  TEXT NOT NULL,
    node_id    TEXT NOT NULL,
    PRIMARY KEY (run_id, direction, node_id)
);
CREATE INDEX run_io_by_dataset ON run_io (node_id, direction);
CREATE TABLE run_io_facets (
    run_id     TEXT NOT NULL,
    direction  TEXT NOT NULL,
    node_id    TEXT NOT NULL,
    name       TEXT NOT NULL,
    value_hash TEXT NOT NULL,
    event_time TEXT NOT NULL,
    PRIMARY KEY (run_id, direction, node_id, name)
);
-- The graph stage (recomputed from the tables above after each batch).
CREATE TABLE dataset_aliases (
    node_id      TEXT PRIMARY KEY,
    canonical_id TEXT NOT NULL
);
CREATE INDEX dataset_aliases_by_canonical ON dataset_aliases (canonical_id);
CREATE TABLE lineage_edges (
    src_id     TEXT NOT NULL,
    dst_id     TEXT NOT NULL,
    edge_type  TEXT NOT NULL,
    job_id     TEXT NOT NULL,
    version_id TEXT,
    PRIMARY KEY (src_id, dst_id, edge_type)
);
CREATE INDEX lineage_edges_by_dst ON lineage_edges (dst_id, edge_type);
CREATE TABLE condensed_edges (
    src_id TEXT NOT NULL,
    dst_id TEXT NOT NULL,
    job_id TEXT NOT NULL,
    PRIMARY KEY (src_id, dst_id, job_id)
);
CREATE INDEX condensed_edges_by_dst ON condensed_edges (dst_id);
CREATE TABLE ultimate_nodes (
    node_id  TEXT NOT NULL,
    kind     TEXT NOT NULL,
    other_id TEXT NOT NULL,
    distance INTEGER NOT NULL,
    PRIMARY KEY (node_id, kind, other_id)
);
CREATE TABLE dataset_depth (
    node_id TEXT PRIMARY KEY,
    depth   INTEGER NOT NULL
);
-- Facet validity intervals: a value holds from its eventTime until the next value of the same
-- facet (or its deletion); valid_to is NULL for the value that holds now.
CREATE VIEW dataset_facet_history AS
SELECT f.node_id, f.name, f.valid_from,
       LEAD(f.valid_from) OVER (PARTITION BY f.node_id, f.name ORDER BY f.valid_from, f.seq) AS valid_to,
       f.deleted, v.value
FROM dataset_facets f LEFT JOIN facet_values v ON v.hash = f.value_hash;
CREATE VIEW job_facet_history AS
SELECT f.node_id, f.name, f.valid_from,
       LEAD(f.valid_from) OVER (PARTITION BY f.node_id, f.name ORDER BY f.valid_from, f.seq) AS valid_to,
       f.deleted, v.value
FROM job_facets f LEFT JOIN facet_values v ON v.hash = f.value_hash;
