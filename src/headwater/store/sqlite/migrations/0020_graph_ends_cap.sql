-- The model now keeps at most 1,000 ultimate sources (and destinations) of a dataset, and a
-- marker row past that (headwater.store.graph.ENDS_CAP); later passes edit the graph in place
-- rather than recompute it. A graph published before this keeps every end, so the next pass
-- computes the whole graph again, as a rebuild would.
UPDATE pipeline_state SET graph_checkpoint = 0;
-- Dataset-to-dataset edges through a job are joined from lineage_edges when asked for: kept,
-- they were each job's inputs times its outputs (9 million rows for one job of 3,000 of each).
DROP TABLE IF EXISTS stage_condensed_edges;
DROP TABLE condensed_edges;
