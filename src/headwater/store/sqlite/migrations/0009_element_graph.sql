-- Generic events folded into the lineage model by the pipeline (docs/pipeline.md): every element a
-- generic event names is a node, and every two elements of one event are linked in event order by
-- an edge labelled with the event's type. An element of type `dataset` or `job` whose description
-- is `{namespace}:{name}` is the OpenLineage node of that name; any other is `element:{type}:{description}`.
-- Times are the events' receive times; counts are summed over batches (each event is read once).
CREATE TABLE element_nodes (
    node_id     TEXT PRIMARY KEY,
    type        TEXT NOT NULL,
    description TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    event_count BIGINT NOT NULL
);
CREATE TABLE element_edges (
    src_id      TEXT NOT NULL,
    dst_id      TEXT NOT NULL,
    event_type  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    event_count BIGINT NOT NULL,
    PRIMARY KEY (src_id, dst_id, event_type)
);
CREATE INDEX element_edges_by_dst ON element_edges (dst_id);
-- A store upgraded with generic events the pipeline already went past: fold those from the browse
-- tables (the same rules as the pipeline's), so the next pass carries on from its checkpoint.
CREATE TEMPORARY TABLE folded_elements AS
SELECT x.event_id, MIN(x.position) AS position, e.type AS event_type, e.received_at,
       MIN(el.type || char(31) || el.description) AS pair,
       CASE WHEN el.type IN ('dataset', 'job') AND instr(el.description, ':') > 1
                 AND length(el.description) > instr(el.description, ':')
            THEN el.type || ':' || el.description
            ELSE 'element:' || el.type || ':' || el.description END AS node_id
FROM generic_event_elements x
JOIN generic_events e ON e.id = x.event_id
JOIN generic_elements el ON el.id = x.element_id
WHERE x.event_id <= COALESCE((SELECT checkpoint FROM pipeline_state WHERE name = 'lineage'), 0)
GROUP BY x.event_id, e.type, e.received_at, node_id;
-- a node id longer than any accepted now (MAX_NODE_ID_BYTES, 865: an element stored before
-- descriptions had a limit) is left out, as the pipeline leaves it out: two of them key an edge
-- that PostgreSQL's index refuses
DELETE FROM folded_elements WHERE length(CAST(node_id AS BLOB)) > 865;
-- (type, description) of a node: the smallest pair whose id it is (two pairs can spell one id)
INSERT INTO element_nodes (node_id, type, description, created_at, updated_at, event_count)
SELECT node_id, substr(MIN(pair), 1, instr(MIN(pair), char(31)) - 1),
       substr(MIN(pair), instr(MIN(pair), char(31)) + 1), MIN(received_at), MAX(received_at), COUNT(*)
FROM folded_elements GROUP BY node_id;
INSERT INTO element_edges (src_id, dst_id, event_type, created_at, updated_at, event_count)
SELECT a.node_id, b.node_id, a.event_type, MIN(a.received_at), MAX(a.received_at), COUNT(*)
FROM folded_elements a JOIN folded_elements b ON b.event_id = a.event_id AND b.position > a.position
GROUP BY a.node_id, b.node_id, a.event_type;
DROP TABLE folded_elements;
