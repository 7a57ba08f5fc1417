"""The graph stage's inputs as the model holds them: the symlinks (with whether events named the
alias), the jobs' current inputs and outputs, and the parent jobs; read by Spark (the queries) or,
when small, here in the driver."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from headwater.store.base import EventStore

SYMLINKS_SQL = (
    "SELECT s.node_id, s.alias_node_id, CASE WHEN d.node_id IS NULL THEN 0 ELSE 1 END AS alias_known "
    "FROM dataset_symlinks s LEFT JOIN datasets d ON d.node_id = s.alias_node_id"
)
CURRENT_IO_SQL = (
    "SELECT j.node_id AS job_id, j.current_version AS version_id, v.direction, v.node_id "
    "FROM jobs j JOIN job_version_io v ON v.version_id = j.current_version"
)
PARENTS_SQL = "SELECT parent_node_id, child_node_id FROM job_parents"

Row = tuple[Any, ...]


@dataclass(frozen=True)
class GraphInputs:
    """The rows of SYMLINKS_SQL, CURRENT_IO_SQL and PARENTS_SQL."""

    symlinks: list[Row]
    current_io: list[Row]
    parents: list[Row]


def graph_size(store: EventStore) -> int:
    """An estimate of the graph stage's rows (four for each job version's input or output)."""
    with store.transaction() as cur:
        cur.execute("SELECT COUNT(*) FROM job_version_io")
        row = cur.fetchone()
    return int(row[0]) * 4 if row else 0


def small_graph_inputs(store: EventStore, limit: int) -> GraphInputs | None:
    """The graph stage's inputs read in one transaction, or None when one has more than `limit`
    rows."""
    inputs: list[list[Row]] = []
    with store.transaction() as cur:
        for query in (SYMLINKS_SQL, CURRENT_IO_SQL, PARENTS_SQL):
            cur.execute(f"{query} LIMIT {limit + 1}")
            rows = cur.fetchall()
            if len(rows) > limit:
                return None
            inputs.append([tuple(row) for row in rows])
    return GraphInputs(*inputs)
