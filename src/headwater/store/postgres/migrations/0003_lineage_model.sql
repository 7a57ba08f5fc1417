-- The lineage model the Spark pipeline publishes (see docs/pipeline.md), its checkpoint, and the
-- staging tables its executors fill before one transaction merges them into the model.
-- Times are fixed-width UTC text (like events.event_time); node ids follow the shared format.
CREATE TABLE pipeline_state (
    name             TEXT COLLATE "C" PRIMARY KEY,
    checkpoint       BIGINT NOT NULL,
    graph_checkpoint BIGINT NOT NULL,
    batches          BIGINT NOT NULL,
    updated_at       TEXT COLLATE "C" NOT NULL
);
CREATE TABLE namespaces (
    name       TEXT COLLATE "C" PRIMARY KEY,
    created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE sources (
    name       TEXT COLLATE "C" PRIMARY KEY,
    uri        TEXT COLLATE "C",
    created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL,
    set_time   TEXT COLLATE "C" NOT NULL,
    set_seq    BIGINT NOT NULL
);
CREATE TABLE datasets (
    node_id         TEXT COLLATE "C" PRIMARY KEY,
    namespace       TEXT COLLATE "C" NOT NULL,
    name            TEXT COLLATE "C" NOT NULL,
    created_at      TEXT COLLATE "C" NOT NULL,
    updated_at      TEXT COLLATE "C" NOT NULL,
    source_name     TEXT COLLATE "C",
    source_time     TEXT COLLATE "C",
    source_seq      BIGINT,
    current_version TEXT COLLATE "C",
    version_time    TEXT COLLATE "C",
    version_seq     BIGINT
);
CREATE INDEX datasets_by_namespace ON datasets (namespace, name);
CREATE TABLE facet_values (
    hash  TEXT COLLATE "C" PRIMARY KEY,
    value TEXT COLLATE "C" NOT NULL
);
CREATE TABLE dataset_facets (
    node_id    TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    valid_from TEXT COLLATE "C" NOT NULL,
    seq        BIGINT NOT NULL,
    value_hash TEXT COLLATE "C",
    deleted    BIGINT NOT NULL,
    PRIMARY KEY (node_id, name, valid_from, seq)
);
CREATE TABLE job_facets (
    node_id    TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    valid_from TEXT COLLATE "C" NOT NULL,
    seq        BIGINT NOT NULL,
    value_hash TEXT COLLATE "C",
    deleted    BIGINT NOT NULL,
    PRIMARY KEY (node_id, name, valid_from, seq)
);
CREATE TABLE schema_fields (
    schema_hash TEXT COLLATE "C" NOT NULL,
    path        TEXT COLLATE "C" NOT NULL,
    position    BIGINT NOT NULL,
    type        TEXT COLLATE "C",
    description TEXT COLLATE "C",
    PRIMARY KEY (schema_hash, path)
);
CREATE TABLE column_lineage (
    facet_hash     TEXT COLLATE "C" NOT NULL,
    field          TEXT COLLATE "C" NOT NULL,
    input_node_id  TEXT COLLATE "C" NOT NULL,
    input_field    TEXT COLLATE "C" NOT NULL,
    type           TEXT COLLATE "C" NOT NULL,
    subtype        TEXT COLLATE "C" NOT NULL,
    description    TEXT COLLATE "C",
    masking        BIGINT,
    PRIMARY KEY (facet_hash, field, input_node_id, input_field, type, subtype)
);
CREATE TABLE dataset_symlinks (
    node_id       TEXT COLLATE "C" NOT NULL,
    alias_node_id TEXT COLLATE "C" NOT NULL,
    type          TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (node_id, alias_node_id)
);
CREATE TABLE dataset_versions (
    version_id     TEXT COLLATE "C" PRIMARY KEY,
    node_id        TEXT COLLATE "C" NOT NULL,
    schema_hash    TEXT COLLATE "C",
    version_label  TEXT COLLATE "C",
    lifecycle      TEXT COLLATE "C",
    created_at     TEXT COLLATE "C" NOT NULL,
    created_seq    BIGINT NOT NULL,
    created_by_run TEXT COLLATE "C" NOT NULL
);
CREATE INDEX dataset_versions_by_dataset ON dataset_versions (node_id, created_at);
CREATE TABLE dataset_version_runs (
    version_id TEXT COLLATE "C" NOT NULL,
    run_id     TEXT COLLATE "C" NOT NULL,
    event_time TEXT COLLATE "C" NOT NULL,
    event_seq  BIGINT NOT NULL,
    PRIMARY KEY (version_id, run_id)
);
CREATE INDEX dataset_version_runs_by_run ON dataset_version_runs (run_id);
CREATE TABLE jobs (
    node_id         TEXT COLLATE "C" PRIMARY KEY,
    namespace       TEXT COLLATE "C" NOT NULL,
    name            TEXT COLLATE "C" NOT NULL,
    created_at      TEXT COLLATE "C" NOT NULL,
    updated_at      TEXT COLLATE "C" NOT NULL,
    current_version TEXT COLLATE "C",
    latest_run_id   TEXT COLLATE "C",
    latest_run_time TEXT COLLATE "C"
);
CREATE INDEX jobs_by_namespace ON jobs (namespace, name);
CREATE TABLE job_parents (
    parent_node_id TEXT COLLATE "C" NOT NULL,
    child_node_id  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (parent_node_id, child_node_id)
);
CREATE TABLE job_versions (
    version_id           TEXT COLLATE "C" PRIMARY KEY,
    node_id              TEXT COLLATE "C" NOT NULL,
    source_code_location TEXT COLLATE "C",
    sql                  TEXT COLLATE "C",
    created_at           TEXT COLLATE "C",
    updated_at           TEXT COLLATE "C",
    run_count            BIGINT NOT NULL
);
CREATE INDEX job_versions_by_job ON job_versions (node_id, created_at);
CREATE TABLE job_version_io (
    version_id TEXT COLLATE "C" NOT NULL,
    direction  TEXT COLLATE "C" NOT NULL,
    node_id    TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (version_id, direction, node_id)
);
CREATE TABLE runs (
    run_id           TEXT COLLATE "C" PRIMARY KEY,
    job_node_id      TEXT COLLATE "C" NOT NULL,
    state            TEXT COLLATE "C" NOT NULL,
    state_time       TEXT COLLATE "C" NOT NULL,
    started_at       TEXT COLLATE "C",
    ended_at         TEXT COLLATE "C",
    duration_ms      BIGINT,
    nominal_start    TEXT COLLATE "C",
    nominal_end      TEXT COLLATE "C",
    parent_run_id    TEXT COLLATE "C",
    root_run_id      TEXT COLLATE "C",
    job_version      TEXT COLLATE "C",
    first_event_time TEXT COLLATE "C" NOT NULL,
    last_event_time  TEXT COLLATE "C" NOT NULL,
    event_count      BIGINT NOT NULL,
    updated_seq      BIGINT NOT NULL
);
CREATE INDEX runs_by_job ON runs (job_node_id, first_event_time);
CREATE INDEX runs_by_parent ON runs (parent_run_id);
CREATE INDEX runs_by_version ON runs (job_version);
CREATE TABLE run_facets (
    run_id     TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    value_hash TEXT COLLATE "C" NOT NULL,
    event_time TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (run_id, name)
);
CREATE TABLE run_io (
    run_id     TEXT COLLATE "C" NOT NULL,
    direction  TEXT COLLATE "C" NOT NULL,
    node_id    TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (run_id, direction, node_id)
);
CREATE INDEX run_io_by_dataset ON run_io (node_id, direction);
CREATE TABLE run_io_facets (
    run_id     TEXT COLLATE "C" NOT NULL,
    direction  TEXT COLLATE "C" NOT NULL,
    node_id    TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    value_hash TEXT COLLATE "C" NOT NULL,
    event_time TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (run_id, direction, node_id, name)
);
-- The graph stage (recomputed from the tables above after each batch).
CREATE TABLE dataset_aliases (
    node_id      TEXT COLLATE "C" PRIMARY KEY,
    canonical_id TEXT COLLATE "C" NOT NULL
);
CREATE INDEX dataset_aliases_by_canonical ON dataset_aliases (canonical_id);
CREATE TABLE lineage_edges (
    src_id     TEXT COLLATE "C" NOT NULL,
    dst_id     TEXT COLLATE "C" NOT NULL,
    edge_type  TEXT COLLATE "C" NOT NULL,
    job_id     TEXT COLLATE "C" NOT NULL,
    version_id TEXT COLLATE "C",
    PRIMARY KEY (src_id, dst_id, edge_type)
);
CREATE INDEX lineage_edges_by_dst ON lineage_edges (dst_id, edge_type);
CREATE TABLE condensed_edges (
    src_id TEXT COLLATE "C" NOT NULL,
    dst_id TEXT COLLATE "C" NOT NULL,
    job_id TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (src_id, dst_id, job_id)
);
CREATE INDEX condensed_edges_by_dst ON condensed_edges (dst_id);
CREATE TABLE ultimate_nodes (
    node_id  TEXT COLLATE "C" NOT NULL,
    kind     TEXT COLLATE "C" NOT NULL,
    other_id TEXT COLLATE "C" NOT NULL,
    distance BIGINT NOT NULL,
    PRIMARY KEY (node_id, kind, other_id)
);
CREATE TABLE dataset_depth (
    node_id TEXT COLLATE "C" PRIMARY KEY,
    depth   BIGINT NOT NULL
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
