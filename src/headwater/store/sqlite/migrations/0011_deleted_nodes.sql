-- Datasets, jobs and namespaces an operator deleted (DELETE /api/v1/namespaces/..., `headwater
-- delete`): the model hides them until an event stored after the deletion (seq above
-- deleted_after_seq) mentions them again. Not a model table: a rebuild keeps it, and the events
-- themselves are never deleted. node_id is the shared node id; a namespace is `namespace:{name}`.
CREATE TABLE deleted_nodes (
    node_id           TEXT PRIMARY KEY,
    kind              TEXT NOT NULL,
    namespace         TEXT NOT NULL,
    deleted_at        TEXT NOT NULL,
    deleted_after_seq BIGINT NOT NULL
);
CREATE INDEX deleted_nodes_by_seq ON deleted_nodes (deleted_after_seq);
