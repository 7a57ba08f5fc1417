"""The lineage model's write side: everything the pipeline publishes through, so that the pipeline
hands over rows and never names a backend.

- `tables`: each model table's columns, key and merge rule (the migrations define the schema);
- `staging`: `prepare_staging`, and the `StagingTarget` executors stage Arrow batches of tagged
  rows into (PostgreSQL: COPY; SQLite: a file per executor, collected by the driver);
- `merge`: one transaction merges a batch's staged rows with its checkpoint; the graph tables
  are replaced whole, or edited where a pass changed them;
- `checkpoint`: the pipeline's state (checkpoint, graph checkpoint, last retention);
- `lock`: one pipeline per store (and whether another one runs);
- `connections`: the connections executors open from the store's URL;
- `event_reads`: the SQL that reads events for the pipeline (a seq range, a range's runs'
  earlier events, the events a condition picks);
- `history`: the facet history's merge rule (changes, first and last assertions) and the
  late assertions' read-back;
- `refresh`: retention's model refresh; `compare`: two published models, table by table.
"""

from headwater.store.model.checkpoint import (
    last_retention,
    mark_retention,
    published_by_other,
    read_state,
    reset_model,
    waiting,
)
from headwater.store.model.history import late_nodes, mark_late, readback_condition, stored_until
from headwater.store.model.lock import PipelineBusy, continuous_lock, pipeline_lock, pipeline_running
from headwater.store.model.merge import GraphEdit, edit_graph, merge_facts, replace_graph, replace_graph_rows
from headwater.store.model.staging import TAGGED, StagingTarget, prepare_staging, staging_target
from headwater.store.model.tables import FACT_TABLES, GRAPH_TABLES, MODEL_TABLES, TABLES, Table

__all__ = [
    "FACT_TABLES",
    "GRAPH_TABLES",
    "MODEL_TABLES",
    "TABLES",
    "TAGGED",
    "GraphEdit",
    "PipelineBusy",
    "StagingTarget",
    "Table",
    "continuous_lock",
    "edit_graph",
    "last_retention",
    "late_nodes",
    "mark_late",
    "mark_retention",
    "merge_facts",
    "pipeline_lock",
    "pipeline_running",
    "prepare_staging",
    "published_by_other",
    "read_state",
    "readback_condition",
    "replace_graph",
    "replace_graph_rows",
    "reset_model",
    "staging_target",
    "stored_until",
    "waiting",
]
