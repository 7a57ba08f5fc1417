-- What lineage queries need beyond the model (issue 4): indexes for walking the graph in both
-- directions and as of a past time, and tags, which users set through the API (not events), so
-- they are kept apart from the tables the pipeline rebuilds.
CREATE INDEX job_version_io_by_dataset ON job_version_io (node_id, direction);
CREATE INDEX column_lineage_by_input ON column_lineage (input_node_id, input_field);
CREATE INDEX dataset_facets_by_value ON dataset_facets (value_hash, name);
CREATE INDEX ultimate_nodes_by_other ON ultimate_nodes (other_id, kind);
CREATE INDEX runs_by_root ON runs (root_run_id);
CREATE TABLE tags (
    name        TEXT COLLATE "C" PRIMARY KEY,
    description TEXT COLLATE "C",
    created_at  TEXT COLLATE "C" NOT NULL,
    updated_at  TEXT COLLATE "C" NOT NULL
);
CREATE TABLE dataset_tags (
    node_id   TEXT COLLATE "C" NOT NULL,
    tag       TEXT COLLATE "C" NOT NULL REFERENCES tags (name),
    tagged_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (node_id, tag)
);
CREATE INDEX dataset_tags_by_tag ON dataset_tags (tag);
CREATE TABLE field_tags (
    node_id   TEXT COLLATE "C" NOT NULL,
    field     TEXT COLLATE "C" NOT NULL,
    tag       TEXT COLLATE "C" NOT NULL REFERENCES tags (name),
    tagged_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (node_id, field, tag)
);
CREATE INDEX field_tags_by_tag ON field_tags (tag);
CREATE TABLE job_tags (
    node_id   TEXT COLLATE "C" NOT NULL,
    tag       TEXT COLLATE "C" NOT NULL REFERENCES tags (name),
    tagged_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (node_id, tag)
);
CREATE INDEX job_tags_by_tag ON job_tags (tag);
